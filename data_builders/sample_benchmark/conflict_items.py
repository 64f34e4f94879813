"""Conflict-30 items over the sample videos: one unsatisfiable item per template of VCIFBench's
Table 6, each naming its two conflicting constraints."""

from __future__ import annotations

from ifpo.data_builders.sample_benchmark.catalogue import (
    bullets,
    csv_,
    exclude,
    fixed_closing,
    include,
    item_count,
    json_,
    judge,
    letter_case,
    lexical,
    no_contractions,
    plain_text,
    prefix_label,
    sentence_count,
    word_count,
)
from ifpo.data_builders.sample_benchmark.compose import (
    _c,
    _item,
    _other_color,
    _other_shape,
    _video_evidence,
    _video_media,
)

_CLARIFY = ("The ideal answer names the two conflicting requirements ({a} and {b}), explains that no "
            "response can satisfy both, and asks which one to follow instead of answering.")


def _conflict(item_id: str, template: str, *, path: str, task: str, task_type: tuple[str, str],
              constraints: list[dict], conflicting: tuple[int, int], ground_truth: str) -> dict:
    ids = [f"c{conflicting[0]}", f"c{conflicting[1]}"]
    descs = [constraints[k - 1]["description"] for k in conflicting]
    return _item(
        item_id, media=_video_media(path), structure="conflict", task=task, tasks=[task_type],
        constraints=constraints, ground_truth=ground_truth,
        conflict={"template": template, "conflicting": ids,
                  "clarification": _CLARIFY.format(a=repr(descs[0]), b=repr(descs[1]))},
    )


def build_conflict_items(v: dict[str, tuple[str, dict]]) -> list[dict]:
    p1, f1 = v["v01"]
    o1 = f1["objects"][0]
    p2, f2 = v["v02"]
    a2, b2 = f2["objects"]
    p3, f3 = v["v03"]
    o3 = f3["objects"][0]
    p4, f4 = v["v04"]
    a4, b4 = f4["objects"]
    p5, f5 = v["v05"]
    p6, f6 = v["v06"]
    p7, f7 = v["v07"]
    p8, f8 = v["v08"]
    shown_colors = [o["color"] for o in f3["objects"]] + [c["to"] for o in f3["objects"] for c in o["color_changes"]]
    absent = f"{_other_color(*shown_colors)} {_other_shape(*(o['shape'] for o in f3['objects']))}"
    items = [
        _conflict("conflict-exact-include-exclude", "exact_include_exclude", path=p1,
                  task=f"Describe the motion of the {o1['shape']}.",
                  task_type=("summarization", "Summarize the motion."),
                  constraints=[word_count(15, 40), plain_text(), include(["moves"]), exclude(["moves"])],
                  conflicting=(3, 4), ground_truth=f1["summary"]),
        _conflict("conflict-case-exact-word", "case_exact_word", path=p2,
                  task="Say where the first shape appears.",
                  task_type=("spatial_arrangement_description", "Give the first shape's position."),
                  constraints=[word_count(5, 30), letter_case("lower"), include(["TOP-LEFT"]), no_contractions()],
                  conflicting=(2, 3), ground_truth=f"The {a2['name']} appears in the top-left corner."),
        _conflict("conflict-json-plain-text", "json_plain_text", path=p3,
                  task=f"Report the {o3['shape']}'s colours before and after the change.",
                  task_type=("state_change_detection", "Give the colours before and after."),
                  constraints=[json_(["before", "after"]), sentence_count(1, 2),
                               _c("plain_text", "Write plain prose only: no braces, quotes, colons, commas or "
                                                "key-value fields.", {"allow_numbered": True}),
                               no_contractions()],
                  conflicting=(1, 3), ground_truth=f3["summary"]),
        _conflict("conflict-content-include-exclude", "content_include_exclude", path=p4,
                  task="Describe what happens in the video.",
                  task_type=("summarization", "Summarize the video."),
                  constraints=[word_count(20, 50), plain_text(),
                               judge("content_inclusion", f"Mention the {b4['name']} and when it disappears.",
                                     {"items": [b4["name"]]}, _video_evidence(f4),
                                     subs=[f"Does the response mention the {b4['name']}?"]),
                               judge("content_exclusion", f"Do not mention any {b4['shape']} or anything "
                                                          f"{b4['color']}.",
                                     {"items": [b4["shape"], b4["color"]]}, _video_evidence(f4))],
                  conflicting=(3, 4), ground_truth=f4["summary"]),
        _conflict("conflict-csv-json", "csv_json", path=p5,
                  task="Give each moving shape with its start and end position.",
                  task_type=("spatial_arrangement_description", "Give each path's endpoints."),
                  constraints=[csv_(["object", "start", "end"], 2), json_(["objects"]), letter_case("lower"),
                               no_contractions()],
                  conflicting=(1, 2), ground_truth=f5["summary"]),
        _conflict("conflict-lexical-prefix-repetition", "lexical_prefix_repetition", path=p6,
                  task="List the shapes that appear, one per item.",
                  task_type=("event_sequencing", "List the shapes in order of appearance."),
                  constraints=[bullets(4), item_count(4, 4, "bullet"), prefix_label("Shape:"),
                               lexical(["Shape"], 1)],
                  conflicting=(3, 4), ground_truth=", ".join(o["name"] for o in f6["objects"])),
        _conflict("conflict-sentence-fixed-closing", "sentence_fixed_closing", path=p7,
                  task=f"Summarize what the {f7['objects'][0]['shape']} does.",
                  task_type=("summarization", "Summarize the video."),
                  constraints=[sentence_count(1, 1),
                               judge("pattern_opening", "Open with a one-sentence summary of the video.",
                                     {"pattern": "a one-sentence summary"}, _video_evidence(f7)),
                               fixed_closing("This concludes the summary."), no_contractions()],
                  conflicting=(1, 3), ground_truth=f7["summary"]),
        _conflict("conflict-markdown-plain-emphasis", "markdown_plain_emphasis", path=p8,
                  task="Describe the two objects of the video.",
                  task_type=("spatial_arrangement_description", "Describe the objects and their places."),
                  constraints=[word_count(20, 50),
                               judge("emphasis", f"Put the word \"{f8['objects'][1]['shape']}\" in **bold**.",
                                     {"spans": [f8["objects"][1]["shape"]], "marker": "**"}, _video_evidence(f8)),
                               plain_text(), no_contractions()],
                  conflicting=(2, 3), ground_truth=f8["summary"]),
        _conflict("conflict-visible-absent-content", "visible_absent_content", path=p3,
                  task="Describe the video.",
                  task_type=("summarization", "Summarize the video."),
                  constraints=[word_count(20, 50),
                               judge("content_inclusion", f"Describe the {absent} that appears next to the "
                                                          f"{o3['shape']} as visible evidence.",
                                     {"items": [absent]}, _video_evidence(f3),
                                     subs=[f"Does the response describe the {absent} as visible?"]),
                               judge("content_exclusion", "Report only evidence that is visible in the video; "
                                                          "mention nothing that is not shown.",
                                     {"items": ["anything not visible in the video"]}, _video_evidence(f3)),
                               no_contractions()],
                  conflicting=(2, 3), ground_truth=f3["summary"]),
        _conflict("conflict-word-budget-long-phrase", "word_budget_long_phrase", path=p1,
                  task=f"Say where the {o1['shape']} ends up.",
                  task_type=("spatial_arrangement_description", "Give the final position."),
                  constraints=[word_count(3, 3),
                               include([f"the {o1['name']} finishes its journey on the {o1['end_position']} side"]),
                               letter_case("lower"), exclude(["maybe"])],
                  conflicting=(1, 2), ground_truth=f1["final_state"]),
    ]
    return items
