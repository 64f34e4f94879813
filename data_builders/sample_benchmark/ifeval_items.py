"""Text-only items with IFEval instruction ids (no media)."""

from __future__ import annotations

from ifpo.data_builders.sample_benchmark.compose import _c, _item


def build_ifeval_items() -> list[dict]:
    media = {"videos": [], "images": []}
    return [
        _item(
            "text-ifeval-1", media=media, source="ifeval",
            task="Write a short note explaining why test videos with known ground truth are useful.",
            tasks=[("professional_writing", "Explain the value of ground-truth test media.")],
            constraints=[
                _c("punctuation:no_comma", "In your entire response, refrain from the use of any commas.", {}),
                _c("length_constraints:number_words", "Answer with at least 30 words.",
                   {"relation": "at least", "num_words": 30}),
                _c("startend:end_checker", "Finish your response with this exact phrase: Any other questions?",
                   {"end_phrase": "Any other questions?"}),
            ],
            reference=("Test videos with known ground truth let us check answers exactly. When we draw every "
                       "shape ourselves we know where it is and when it moves. A model that says anything else "
                       "is simply wrong and we can measure that without a human judge. Any other questions?"),
            ground_truth="Known ground truth makes answers exactly checkable.",
        ),
        _item(
            "text-ifeval-2", media=media, source="ifeval",
            task="Give three tips for drawing simple shapes.",
            tasks=[("tutorial_generation", "Give drawing tips.")],
            constraints=[
                _c("change_case:english_lowercase", "Your entire response should be in English, and in all "
                                                    "lowercase letters. No capital letters are allowed.", {}),
                _c("detectable_format:number_bullet_lists", "Your answer must contain exactly 3 bullet points, "
                                                            "using markdown bullets such as * this.",
                   {"num_bullets": 3}),
                _c("keywords:existence", "Include the keywords pencil and ruler.",
                   {"keywords": ["pencil", "ruler"]}),
            ],
            reference=("* start with a light pencil sketch of the outline.\n"
                       "* use a ruler for the straight edges of squares and triangles.\n"
                       "* trace circles around a cup for a clean round edge."),
            ground_truth="Three drawing tips.",
        ),
        _item(
            "text-ifeval-3", media=media, source="ifeval",
            task="Write a short poem about a circle that moves across a white screen.",
            tasks=[("creative_writing", "Write a poem.")],
            constraints=[
                _c("detectable_format:title", "Your answer must contain a title, wrapped in double angular "
                                              "brackets, such as <<poem of joy>>.", {}),
                _c("length_constraints:number_sentences", "Your response should contain less than 6 sentences.",
                   {"relation": "less than", "num_sentences": 6}),
                _c("detectable_content:postscript", "At the end of your response, please explicitly add a "
                                                    "postscript starting with P.S.",
                   {"postscript_marker": "P.S."}),
            ],
            reference=("<<The Travelling Circle>>\n"
                       "A red circle wakes upon the white and glides from left to right.\n"
                       "It never hurries and it never stops until the edge is in sight.\n\n"
                       "P.S. The circle stays on the right when the clip ends."),
            ground_truth="A poem about a moving circle.",
        ),
    ]
