"""Supervised fine-tuning of Qwen3-VL on verified responses (the SFT step of SFT -> DPO -> GRPO).

    python train/sft.py recipes/tiny_sft.yaml [--key value ...]
    python train/sft.py recipes/tiny_sft.yaml --items runs/world/train.jsonl --max_steps 200

Same conventions as ``train/dpo.py``: a positional flat YAML recipe, keys = fields of
:class:`SFTRecipe`, resolved as defaults < recipe < ``--key value``; an unknown key is an error naming
the nearest one. Each item of ``items`` becomes one example: the prompt exactly as evaluation renders
it (``verifiers.generation.item_messages`` through the processor's chat template, media sampled and
resized by ``verifiers.media`` under the recipe's budgets) and, as the target, the item's verified
``reference_response`` (``responses: reference``). ``responses: world_partial`` is the learnable
default's warm start on the synthetic world: responses that describe the media but obey each
constraint only where the item's media kind matches the rule's (with probability ``obey_rate``; else
``1 - obey_rate``), so the warm-started model has room for DPO and GRPO to improve it.

A thin loop rather than TRL's SFTTrainer, for one reason: every example is encoded once (media decoded,
processor run) and reused for every epoch, which is what makes the tiny warm start take a couple of
minutes on 2 CPU cores; TRL's vision SFT path re-processes media every step and reads images only.
Loss is on the response tokens (and the closing ``<|im_end|>``) only. Full fine-tuning by default,
LoRA with ``use_lora: true``. Outputs in ``output_dir``: the model (merged) and processor,
``recipe.resolved.yaml``, ``log_history.jsonl``, ``metrics.json``.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import math
import os
import random
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

logger = logging.getLogger("ifpo.sft")

RESPONSES = ("reference", "world_partial")


@dataclass
class SFTRecipe:
    """Keys of an SFT recipe (``python train/sft.py --help``)."""

    model_name_or_path: str = field(
        default="tiny-learnable-init",
        metadata={"help": "hub id or local folder of a Qwen3-VL model; 'tiny-learnable-init' draws the learnable default's "
                  "random starting point (train/tiny_model.py LEARNABLE_SPEC)"},
    )
    tiny_seed: int = field(default=0, metadata={"help": "weight seed for 'tiny-learnable-init'"})
    items: str = field(default="sample/world/heldout.jsonl",
                       metadata={"help": "items JSONL; media paths relative to its folder (or media_root)"})
    media_root: str | None = field(default=None, metadata={"help": "folder media paths are relative to"})
    responses: str = field(
        default="reference",
        metadata={"help": f"targets: {RESPONSES[0]} (the verified reference_response) or {RESPONSES[1]} (world items: "
                  "partly obedient responses, the learnable default's warm start)"},
    )
    obey_rate: float = field(default=0.85, metadata={"help": "world_partial: how often a rule is obeyed on its media kind"})
    max_items: int | None = field(default=None, metadata={"help": "use only the first N items"})
    output_dir: str = field(default="runs/sft", metadata={"help": "where the model and logs go"})
    use_lora: bool = field(default=False, metadata={"help": "train a LoRA adapter (merged on save) instead of all weights"})
    lora_r: int = field(default=16, metadata={"help": "LoRA rank (use_lora)"})
    lora_alpha: int = field(default=32, metadata={"help": "LoRA scale numerator (use_lora)"})
    learning_rate: float = field(default=2e-3, metadata={"help": "peak AdamW learning rate"})
    weight_decay: float = field(default=0.0, metadata={"help": "AdamW weight decay"})
    warmup_ratio: float = field(default=0.05, metadata={"help": "linear warm-up share of the steps (then cosine)"})
    num_train_epochs: float = field(default=3.0, metadata={"help": "passes over the examples (max_steps wins if set)"})
    max_steps: int | None = field(default=None, metadata={"help": "optimizer steps; overrides num_train_epochs"})
    per_device_train_batch_size: int = field(default=16, metadata={"help": "examples per step"})
    max_grad_norm: float = field(default=1.0, metadata={"help": "gradient clipping"})
    logging_steps: int = field(default=20, metadata={"help": "log the mean loss every N steps"})
    seed: int = field(default=0, metadata={"help": "shuffling, world_partial draws and init seed"})
    vision_warmup_steps: int = field(
        default=0,
        metadata={"help": "steps of a vision-alignment stage before the SFT (0: none; the pixel-reading default uses it): "
                  "synthetic one-colour images, then single shapes, answered with their colour or shape word. A "
                  "randomly initialised tiny model needs it to start reading its image tokens at all"})
    vision_qa_share: float = field(
        default=0.0,
        metadata={"help": "world_partial: share of each SFT batch given to short questions about the items' media "
                  "(first/last shape's colour, number of shapes; true answers), so the warm start reads them"})
    threads: int | None = field(default=None, metadata={"help": "torch CPU threads (default: torch's choice)"})
    # media budgets (same keys as the DPO/GRPO recipes)
    image_min_pixels: int = field(default=4096, metadata={"help": "images are upscaled to at least this"})
    image_max_pixels: int = field(default=16384, metadata={"help": "images are downscaled to at most this"})
    video_fps: float = field(default=2.0, metadata={"help": "video frames sampled per second"})
    video_min_frames: int = field(default=4, metadata={"help": "fewest frames per video"})
    video_max_frames: int = field(default=16, metadata={"help": "most frames per video"})
    video_min_pixels: int = field(default=4096, metadata={"help": "per-frame pixel floor"})
    video_max_pixels: int = field(default=16384, metadata={"help": "per-frame pixel ceiling"})

    def __post_init__(self) -> None:
        if self.responses not in RESPONSES:
            raise ValueError(f"responses must be one of {list(RESPONSES)}, got {self.responses!r}")
        if not 0.0 <= self.obey_rate <= 1.0:
            raise ValueError(f"obey_rate must be in [0, 1], got {self.obey_rate}")
        if not 0.0 <= self.vision_qa_share < 1.0:
            raise ValueError(f"vision_qa_share must be in [0, 1), got {self.vision_qa_share}")
        if self.vision_qa_share and self.responses != "world_partial":
            raise ValueError("vision_qa_share needs responses: world_partial (questions about world items' media)")
        if self.vision_warmup_steps < 0:
            raise ValueError(f"vision_warmup_steps must be >= 0, got {self.vision_warmup_steps}")
        for name in ("per_device_train_batch_size", "logging_steps", "lora_r"):
            if getattr(self, name) <= 0:
                raise ValueError(f"{name} must be positive, got {getattr(self, name)}")
        if self.max_steps is not None and self.max_steps <= 0:
            raise ValueError(f"max_steps must be positive, got {self.max_steps}")
        if self.num_train_epochs <= 0:
            raise ValueError(f"num_train_epochs must be positive, got {self.num_train_epochs}")
        if self.learning_rate <= 0:
            raise ValueError(f"learning_rate must be positive, got {self.learning_rate}")
        self.media()

    def media(self) -> dict[str, Any]:
        from ifpo.verifiers.media import MediaBudget

        keys = [f.name for f in dataclasses.fields(MediaBudget)]
        values = {k: getattr(self, k) for k in keys if hasattr(self, k)}
        MediaBudget(**values)  # validates by name
        return values


@dataclass
class _NoTrainerKeys:
    """SFT has no second settings class (no TRL config): every key is an :class:`SFTRecipe` field."""


def parse_recipe(argv: list[str]) -> SFTRecipe:
    from ifpo.train.recipe import RecipeError, read_recipe_values

    _, values, _ = read_recipe_values(argv, SFTRecipe, _NoTrainerKeys, script="train/sft.py", refused={})
    try:
        return SFTRecipe(**values)
    except ValueError as exc:
        raise RecipeError(str(exc)) from exc


def recipe_help() -> str:
    lines = ["usage: python train/sft.py RECIPE.yaml [--key value ...]", "", "Keys (defaults < recipe < command line):"]
    for f in dataclasses.fields(SFTRecipe):
        lines.append(f"  {f.name:<28} {f.metadata['help']} (default: {f.default})")
    return "\n".join(lines)


# --------------------------------------------------------------------------------------------
# data
# --------------------------------------------------------------------------------------------


def partial_obedience(item: dict, rng: random.Random, obey_rate: float) -> dict[str, bool]:
    """Which constraints a warm-start response obeys: a rule is obeyed on its preferred media kinds
    (``world.PREFERRED_KINDS``) with probability ``obey_rate`` and elsewhere with ``1 - obey_rate``.

    Most rules are preferred on one media kind only, so under greedy decoding the warm-started model
    follows them on that kind and ignores them on the other: DPO and GRPO must spread a behaviour the
    model already has to the items where it lacks it.
    """
    from ifpo.data_builders.sample_benchmark.world import PREFERRED_KINDS

    kind = item["world"]["scene"]["kind"]
    out = {}
    for cid, role in item["world"]["roles"].items():
        p = obey_rate if kind in PREFERRED_KINDS[role] else 1.0 - obey_rate
        out[cid] = rng.random() < p
    return out


def targets(items: list[dict], recipe: SFTRecipe) -> list[str]:
    rng = random.Random(recipe.seed)
    out = []
    if recipe.responses == "reference":
        return [item["reference_response"] for item in items]
    from ifpo.data_builders.sample_benchmark.world import world_response

    for item in items:
        if "world" not in item:
            raise ValueError(f"{recipe.items}: item {item['id']!r} is not a world item (no 'world' field); "
                             "responses: world_partial needs items from `ifpo sample --world`")
        out.append(world_response(item, partial_obedience(item, rng, recipe.obey_rate)))
    return out


def encode_examples(items: list[dict], responses: list[str], processor, media: dict, media_root: Path) -> list[dict]:
    """One dict of tensors per example: prompt (as evaluation renders it) + response + ``<|im_end|>``."""
    import torch
    from ifpo.verifiers.generation import GenerationConfig, TransformersGenerator, item_messages

    gen = TransformersGenerator(GenerationConfig(model="in-process", media=media), media_root, model=object(),
                                processor=processor)
    tok = processor.tokenizer
    end = tok("<|im_end|>\n", add_special_tokens=False)["input_ids"]
    examples = []
    for item, response in zip(items, responses):
        enc = gen.encode([item_messages(item)])
        prompt = enc["input_ids"][0]
        target = torch.tensor(tok(response, add_special_tokens=False)["input_ids"] + end[:1], dtype=torch.long)
        ex = {
            "input_ids": torch.cat([prompt, target]),
            "labels": torch.cat([torch.full_like(prompt, -100), target]),
            "mm_token_type_ids": torch.cat([enc["mm_token_type_ids"][0], torch.zeros_like(target)]),
        }
        for key in ("pixel_values", "image_grid_thw", "pixel_values_videos", "video_grid_thw"):
            if key in enc:
                ex[key] = enc[key]
        examples.append(ex)
    return examples


def encode_alignment(n: int, processor, seed: int) -> list[dict]:
    """The vision-alignment examples (``world.alignment_examples``): image + question -> one word + ``<|im_end|>``."""
    import torch
    from ifpo.data_builders.sample_benchmark.world import alignment_examples

    tok = processor.tokenizer
    end = tok("<|im_end|>", add_special_tokens=False)["input_ids"]
    out = []
    for image, question, answer in alignment_examples(n, seed):
        messages = [{"role": "user", "content": [{"type": "image", "image": image}, {"type": "text", "text": question}]}]
        enc = processor.apply_chat_template(messages, tokenize=True, return_dict=True, return_tensors="pt",
                                            add_generation_prompt=True)
        prompt = enc["input_ids"][0]
        target = torch.tensor(tok(answer, add_special_tokens=False)["input_ids"] + end, dtype=torch.long)
        out.append({"input_ids": torch.cat([prompt, target]), "labels": torch.cat([torch.full_like(prompt, -100), target]),
                    "mm_token_type_ids": torch.cat([enc["mm_token_type_ids"][0], torch.zeros_like(target)]),
                    "pixel_values": enc["pixel_values"], "image_grid_thw": enc["image_grid_thw"]})
    return out


def collate(batch: list[dict], pad_id: int) -> dict:
    import torch

    width = max(len(ex["input_ids"]) for ex in batch)
    out: dict[str, Any] = {}

    def pad(key: str, value: int) -> torch.Tensor:
        return torch.stack([torch.cat([ex[key], torch.full((width - len(ex[key]),), value, dtype=ex[key].dtype)])
                            for ex in batch])

    out["input_ids"] = pad("input_ids", pad_id)
    out["labels"] = pad("labels", -100)
    out["mm_token_type_ids"] = pad("mm_token_type_ids", 0)
    out["attention_mask"] = torch.stack([
        torch.cat([torch.ones(len(ex["input_ids"]), dtype=torch.long), torch.zeros(width - len(ex["input_ids"]),
                                                                                  dtype=torch.long)])
        for ex in batch])
    for key in ("pixel_values", "image_grid_thw", "pixel_values_videos", "video_grid_thw"):
        parts = [ex[key] for ex in batch if key in ex]
        if parts:
            out[key] = torch.cat(parts)
    return out


# --------------------------------------------------------------------------------------------
# training
# --------------------------------------------------------------------------------------------


def example_mean_loss(model, batch: dict):
    """Cross-entropy averaged per example, then over the batch: a one-word answer weighs as much as a
    forty-token description (a token mean would give the short pixel questions almost no weight)."""
    import torch

    labels = batch.pop("labels")
    logits = model(**batch).logits[:, :-1].float()
    target = labels[:, 1:]
    nll = torch.nn.functional.cross_entropy(logits.transpose(1, 2), target.clamp(min=0), reduction="none")
    mask = (target != -100).float()
    return ((nll * mask).sum(1) / mask.sum(1).clamp(min=1)).mean()


def load_model(recipe: SFTRecipe):
    from transformers import AutoModelForImageTextToText, AutoProcessor

    source = recipe.model_name_or_path
    if source == "tiny-learnable-init":
        from ifpo.train.tiny_model import LEARNABLE_SPEC, build_tiny_model

        start = Path(recipe.output_dir) / "init"
        build_tiny_model(start, seed=recipe.tiny_seed, spec=LEARNABLE_SPEC, overwrite=True)
        source = str(start)
    processor = AutoProcessor.from_pretrained(source)
    model = AutoModelForImageTextToText.from_pretrained(source)
    return processor, model


def train(recipe: SFTRecipe) -> dict[str, Any]:
    """Run the SFT recipe; returns the metrics (also written to ``output_dir/metrics.json``)."""
    import torch

    started = time.time()
    if recipe.threads:
        torch.set_num_threads(recipe.threads)
    out = Path(recipe.output_dir)
    out.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(recipe.seed)
    items_path = Path(recipe.items)
    if not items_path.is_file():
        raise ValueError(f"items: {items_path} not found")
    from ifpo.verifiers.schema import read_items

    items = read_items(items_path)
    if recipe.responses == "reference":
        # Conflict items (and any other without a verified reference) have nothing to imitate.
        skipped = [i["id"] for i in items if not i.get("reference_response")]
        if skipped:
            logger.warning("skipping %d item(s) without a reference_response: %s", len(skipped), ", ".join(skipped[:5]))
        items = [i for i in items if i.get("reference_response")]
    if recipe.max_items is not None:
        items = items[: recipe.max_items]
    if not items:
        raise ValueError(f"items: {items_path} holds no items with a response to train on")
    responses = targets(items, recipe)
    processor, model = load_model(recipe)
    media_root = Path(recipe.media_root) if recipe.media_root else items_path.parent
    t0 = time.perf_counter()
    examples = encode_examples(items, responses, processor, recipe.media(), media_root)
    bs = recipe.per_device_train_batch_size
    alignment = encode_alignment(recipe.vision_warmup_steps * bs, processor, recipe.seed)
    questions: list[dict] = []
    if recipe.vision_qa_share:
        from ifpo.data_builders.sample_benchmark.world import pixel_questions

        # One question per item, the three kinds in turn (each encode decodes the media again).
        asked = [pixel_questions(item)[k % 3] for k, item in enumerate(items)]
        questions = encode_examples([dict(item, instruction=q) for item, (q, _) in zip(items, asked)],
                                    [a for _, a in asked], processor, recipe.media(), media_root)
    if questions and alignment:
        # Stage 1 ends on the world's own media: the same number of steps again on their pixel questions.
        alignment = alignment + [questions[(k * 7919) % len(questions)] for k in range(len(alignment))]
    n_questions = round(bs * recipe.vision_qa_share) if questions else 0
    # With a warm-up stage, half the question share keeps its easy examples in the batch (else the long
    # descriptions wash out what it taught).
    n_align = n_questions // 2 if alignment else 0
    n_questions -= n_align
    encode_s = time.perf_counter() - t0
    if recipe.use_lora:
        from ifpo.train.model import LANGUAGE_TARGETS
        from peft import LoraConfig, get_peft_model

        model = get_peft_model(model, LoraConfig(
            r=recipe.lora_r, lora_alpha=recipe.lora_alpha, bias="none", task_type="CAUSAL_LM",
            target_modules=rf".*\.language_model\.layers\.\d+\..*\.({'|'.join(LANGUAGE_TARGETS)})"))
    model.train()
    pad_id = processor.tokenizer.pad_token_id
    params = [p for p in model.parameters() if p.requires_grad]
    log = (out / "log_history.jsonl").open("w", encoding="utf-8")
    t1 = time.perf_counter()

    def update(loss, optim, sched) -> None:
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, recipe.max_grad_norm)
        optim.step()
        sched.step()
        optim.zero_grad(set_to_none=True)

    def write_log(entry: dict[str, Any]) -> None:
        log.write(json.dumps(entry) + "\n")
        log.flush()

    if alignment:
        # Stage 1, in order (one-colour images first): constant rate after a short ramp, its own optimizer.
        optim = torch.optim.AdamW(params, lr=recipe.learning_rate, weight_decay=recipe.weight_decay)
        ramp = max(1, recipe.vision_warmup_steps // 10)
        sched = torch.optim.lr_scheduler.LambdaLR(optim, lambda s: min(1.0, (s + 1) / ramp))
        running = 0.0
        warmup_steps = len(alignment) // bs
        for step in range(1, warmup_steps + 1):
            loss = example_mean_loss(model, collate(alignment[(step - 1) * bs: step * bs], pad_id))
            update(loss, optim, sched)
            running += float(loss.detach())
            if step % recipe.logging_steps == 0 or step == warmup_steps:
                n = step % recipe.logging_steps or recipe.logging_steps
                entry = {"stage": "vision_warmup", "step": step, "loss": running / n,
                         "elapsed_s": round(time.perf_counter() - t1, 1)}
                write_log(entry)
                logger.info("vision warm-up step %d/%d loss %.4f", step, warmup_steps, entry["loss"])
                running = 0.0
    steps_per_epoch = math.ceil(len(examples) / bs)
    total = recipe.max_steps or max(1, math.ceil(steps_per_epoch * recipe.num_train_epochs))
    optim = torch.optim.AdamW(params, lr=recipe.learning_rate, weight_decay=recipe.weight_decay)
    warm = max(1, int(total * recipe.warmup_ratio))

    def lr_at(step: int) -> float:
        if step < warm:
            return (step + 1) / warm
        return 0.5 * (1 + math.cos(math.pi * (step - warm) / max(1, total - warm)))

    sched = torch.optim.lr_scheduler.LambdaLR(optim, lr_at)
    rng = random.Random(recipe.seed)
    order: list[int] = []
    q_order: list[int] = []
    running, count, step = 0.0, 0, 0
    while step < total:
        if not order:
            order = list(range(len(examples)))
            rng.shuffle(order)
        batch = [examples[i] for i in order[:bs - n_questions - n_align]]
        del order[:bs - n_questions - n_align]
        if n_align:
            batch += [alignment[(step * n_align + j) % len(alignment)] for j in range(n_align)]
        if n_questions:
            if len(q_order) < n_questions:
                q_order = list(range(len(questions)))
                rng.shuffle(q_order)
            batch += [questions[i] for i in q_order[:n_questions]]
            del q_order[:n_questions]
        # Mixed batches (pixel questions, warm-up examples) average the loss per example, so a one-word
        # answer is not drowned by the descriptions; plain SFT keeps the token mean it was measured with.
        collated = collate(batch, pad_id)
        loss = example_mean_loss(model, collated) if n_questions or n_align else model(**collated).loss
        update(loss, optim, sched)
        step += 1
        running += float(loss.detach())
        count += 1
        if step % recipe.logging_steps == 0 or step == total:
            entry = {"step": step, "loss": running / count, "learning_rate": sched.get_last_lr()[0],
                     "elapsed_s": round(time.perf_counter() - t1, 1)}
            write_log(entry)
            logger.info("step %d/%d loss %.4f", step, total, entry["loss"])
            running, count = 0.0, 0
    log.close()
    model.eval()
    if recipe.use_lora:
        model = model.merge_and_unload()
    model.save_pretrained(out)
    processor.save_pretrained(out)
    import yaml

    (out / "recipe.resolved.yaml").write_text(yaml.safe_dump(dataclasses.asdict(recipe), sort_keys=False),
                                              encoding="utf-8")
    metrics = {"examples": len(examples), "steps": total, "encode_s": round(encode_s, 1),
               "train_s": round(time.perf_counter() - t1, 1), "elapsed_s": round(time.time() - started, 1)}
    (out / "metrics.json").write_text(json.dumps(metrics, indent=2) + "\n", encoding="utf-8")
    return metrics


def main(argv: list[str]) -> int:
    if argv and argv[0] in ("-h", "--help"):
        print(recipe_help())
        return 0
    from ifpo.train.recipe import RecipeError

    try:
        recipe = parse_recipe(argv)
    except RecipeError as exc:
        print(f"train/sft.py: error: {exc}", file=sys.stderr)
        return 2
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s")
    try:
        metrics = train(recipe)
    except ValueError as exc:
        print(f"train/sft.py: error: {exc}", file=sys.stderr)
        return 2
    logger.info("done: %s; model in %s", metrics, recipe.output_dir)
    return 0


if __name__ == "__main__":
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    sys.exit(main(sys.argv[1:]))
