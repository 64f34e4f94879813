"""Shared-prompt forward (train/shared_prompt.py) and the media guard (verifiers/media_guard.py).

Exactness: on image, video, text and mixed batches of the tiny Qwen3-VL in float32, the packed
``[prompt | chosen | rejected]`` forward gives the log-probs (policy and adapter-disabled reference), the
DPO loss and the LoRA gradients of TRL's two-rows-per-pair forward. A mask that lets the rejected answer
see the chosen one must fail the same comparison. GRPO: a prompt's completions packed into one row give
the per-token log-probs and entropies of one row per completion (whole batch and TRL-sized chunks).
The guard: a dropped image or one that vanished from the record is refused, naming the pair / item /
conversation, in DPO (step and reference precompute), GRPO (forward and before generation) and ifpo's
generation (builders, ``ifpo evaluate``, the eval hook). About 2 minutes on 2 CPU cores.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from ifpo.train.shared_prompt import SharedPromptError, block_mask, dpo_spec, install_shared_prompt, plan
from ifpo.train.vision import DataCollatorForVideoPreference
from ifpo.verifiers.media_guard import MediaMismatchError, check_media, media_pad_ids
from tiny_pairs import TINY_BUDGET, pick

MIXES = {
    "image": {"n_image": 3},
    "video": {"n_video": 2},
    "text": {"n_text": 3},
    "mixed": {"n_video": 1, "n_image": 2, "n_text": 1},
}
RTOL = 1e-4
NON_MODEL = ("completion_mask", "pair_ids", "pair_kinds", "pair_media", "ref_chosen_logps", "ref_rejected_logps")


def assert_rel_close(actual: torch.Tensor, expected: torch.Tensor, rtol: float = RTOL) -> None:
    rel = ((actual - expected).abs() / expected.abs().clamp(min=1e-6)).max().item()
    assert rel <= rtol, f"max relative difference {rel:.2e} > {rtol:.0e}"


# ------------------------------------------------------------------------------------------
# planning and the mask: truth tables
# ------------------------------------------------------------------------------------------


def test_plan_lays_out_prompt_then_each_continuation_with_a_head_copy():
    # Two pairs, TRL layout: rows 0, 1 chosen; rows 2, 3 rejected; prompts [5 6 7] and [8 9]; 0 = padding.
    ids = torch.tensor([[5, 6, 7, 11, 12, 0], [8, 9, 13, 0, 0, 0], [5, 6, 7, 21, 0, 0], [8, 9, 22, 23, 24, 0]])
    mask = (ids != 0).long()
    completion = torch.tensor([[0, 0, 0, 1, 1, 0], [0, 0, 1, 0, 0, 0], [0, 0, 0, 1, 0, 0], [0, 0, 1, 1, 1, 0]])
    packing = plan(ids, mask, dpo_spec(mask, completion))
    packed = ids[packing.src_row, packing.src_col].masked_fill(~packing.valid, 0)
    # [prompt | chosen | copy of the prompt's last token | rejected], padded to the longest pair
    assert packed.tolist() == [[5, 6, 7, 11, 12, 7, 21], [8, 9, 13, 9, 22, 23, 24]]
    assert packing.segment.tolist() == [[0, 0, 0, 1, 1, 2, 2], [0, 0, 1, 2, 2, 2, 2]]
    assert packing.shift_labels.tolist() == [[-100, -100, 11, 12, -100, 21, -100], [-100, 13, -100, 22, 23, 24, -100]]
    # Each scored token goes back to (row, end - 1 + j) of the shifted layout TRL reads.
    back = sorted(zip(packing.out_row.tolist(), packing.out_col.tolist(), packing.in_row.tolist(),
                      packing.in_col.tolist()))
    assert back == [(0, 2, 0, 2), (0, 3, 0, 3), (1, 1, 1, 1), (2, 2, 0, 5), (3, 1, 1, 3), (3, 2, 1, 4), (3, 3, 1, 5)]


def test_block_mask_truth_table():
    ids = torch.tensor([[5, 6, 11, 12], [5, 6, 21, 0]])
    mask = (ids != 0).long()
    completion = torch.tensor([[0, 0, 1, 1], [0, 0, 1, 0]])
    packing = plan(ids, mask, dpo_spec(mask, completion))
    allowed = block_mask(packing, dtype=None, device="cpu")[0, 0].int().tolist()
    # columns: p0 p1 c0 c1 h r0 ; h = copy of p1
    assert allowed == [
        [1, 0, 0, 0, 0, 0],  # p0
        [1, 1, 0, 0, 0, 0],  # p1
        [1, 1, 1, 0, 0, 0],  # c0: prompt + itself
        [1, 1, 1, 1, 0, 0],  # c1
        [1, 0, 0, 0, 1, 0],  # h: the prompt without p1 (h stands in for it), and itself
        [1, 0, 0, 0, 1, 1],  # r0: never the chosen tokens
    ]
    leaky = block_mask(packing, dtype=None, device="cpu", leak=True)[0, 0].int().tolist()
    assert leaky[5][2:4] == [1, 1]  # the deliberately broken mask lets rejected see chosen
    additive = block_mask(packing, dtype=torch.float32, device="cpu")[0, 0]
    assert (additive == 0).int().tolist() == allowed and additive.min() == torch.finfo(torch.float32).min


def test_plan_refuses_groups_whose_prompts_differ():
    ids = torch.tensor([[5, 6, 11], [5, 7, 21]])
    mask = torch.ones_like(ids)
    completion = torch.tensor([[0, 0, 1], [0, 0, 1]])
    with pytest.raises(SharedPromptError, match="prompt tokens differ"):
        plan(ids, mask, dpo_spec(mask, completion))


# ------------------------------------------------------------------------------------------
# exactness on the tiny model
# ------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def fused_model(tiny_dir):
    from transformers import AutoModelForImageTextToText
    from trl.trainer.utils import add_fused_lm_head

    model = AutoModelForImageTextToText.from_pretrained(tiny_dir, dtype=torch.float32).eval()
    add_fused_lm_head(model, outputs=("log_probs", "entropy", "mean_logits", "is_top1"))
    install_shared_prompt(model)
    return model


def forward_both(model, batch, leak=False):
    kwargs = {k: v for k, v in batch.items() if k not in NON_MODEL}
    labels = batch["input_ids"].masked_fill(batch["completion_mask"] == 0, -100)
    spec = dpo_spec(batch["attention_mask"], batch["completion_mask"])
    with torch.no_grad():
        plain = model(**kwargs, labels=labels, fused_lm_head=True, use_cache=False)
        shared = model(**kwargs, labels=labels, fused_lm_head=True, use_cache=False, ifpo_shared_prompt=spec,
                       ifpo_shared_prompt_leak=leak)
    return plain, shared


@pytest.mark.slow
@pytest.mark.parametrize("mix", list(MIXES), ids=list(MIXES))
def test_shared_forward_matches_separate_forwards(fused_model, processor, pairs, mix):
    batch = DataCollatorForVideoPreference(processor, budget=TINY_BUDGET)(pick(pairs, **MIXES[mix]))
    plain, shared = forward_both(fused_model, batch)
    assert_rel_close(shared.log_probs.sum(dim=1), plain.log_probs.sum(dim=1))
    torch.testing.assert_close(shared.log_probs, plain.log_probs, rtol=RTOL, atol=1e-5)
    torch.testing.assert_close(shared.entropy, plain.entropy, rtol=RTOL, atol=1e-5)
    torch.testing.assert_close(shared.mean_logits, plain.mean_logits, rtol=RTOL, atol=1e-5)
    assert torch.equal(shared.is_top1, plain.is_top1)
    assert torch.equal(shared.label_mask, plain.label_mask)


@pytest.mark.slow
def test_a_leaky_mask_fails_the_comparison(fused_model, processor, pairs):
    batch = DataCollatorForVideoPreference(processor, budget=TINY_BUDGET)(pick(pairs, **MIXES["mixed"]))
    plain, leaky = forward_both(fused_model, batch, leak=True)
    with pytest.raises(AssertionError, match="relative difference"):
        assert_rel_close(leaky.log_probs.sum(dim=1), plain.log_probs.sum(dim=1))
    rows = batch["input_ids"].shape[0] // 2
    # Only the rejected rows can change: the chosen ones come before the leak.
    assert_rel_close(leaky.log_probs[:rows].sum(dim=1), plain.log_probs[:rows].sum(dim=1))


def make_trainer(tiny_dir, processor, dataset, out, shared_prompt, **overrides):
    from ifpo.train.trainer import IfpoDPOTrainer
    from peft import LoraConfig
    from transformers import AutoModelForImageTextToText
    from trl import DPOConfig

    args = DPOConfig(
        output_dir=str(out), use_cpu=True, bf16=False, max_length=None, report_to="none",
        per_device_train_batch_size=4, per_device_eval_batch_size=4, learning_rate=5e-3,
        lr_scheduler_type="constant", logging_steps=1, save_strategy="no", seed=0, dataloader_num_workers=0,
        **overrides,
    )
    model = AutoModelForImageTextToText.from_pretrained(tiny_dir, dtype=torch.float32)
    trainer = IfpoDPOTrainer(
        model=model, args=args, data_collator=DataCollatorForVideoPreference(processor, budget=TINY_BUDGET),
        train_dataset=dataset, processing_class=processor, shared_prompt=shared_prompt,
        peft_config=LoraConfig(r=8, lora_alpha=16, target_modules=["q_proj", "v_proj", "down_proj"], lora_dropout=0.0),
    )
    torch.manual_seed(1)
    with torch.no_grad():  # a non-zero adapter, so policy and reference differ
        for name, param in trainer.model.named_parameters():
            if "lora_B" in name:
                param.normal_(0, 0.3)
    return trainer


def loss_and_grads(trainer, rows):
    trainer.model.train()
    trainer.model.zero_grad()
    batch = trainer._prepare_inputs(trainer.data_collator([dict(r) for r in rows]))
    loss = trainer.compute_loss(trainer.model, batch)
    loss.backward()
    grads = {n: p.grad.detach().clone() for n, p in trainer.model.named_parameters() if p.grad is not None}
    return loss.detach(), grads


@pytest.mark.slow
@pytest.mark.parametrize("checkpointing", [False, True], ids=["plain", "gradient-checkpointing"])
def test_dpo_loss_gradients_and_reference_match(tiny_dir, processor, pairs, tmp_path, checkpointing):
    from datasets import Dataset
    from ifpo.train.ref_logps import on_the_fly_ref_logps

    rows = pick(pairs, n_video=1, n_image=2, n_text=1)
    dataset = Dataset.from_list(rows)
    extra = {"activation_checkpointing": True} if checkpointing else {}
    shared = make_trainer(tiny_dir, processor, dataset, tmp_path / "shared", True, **extra)
    plain = make_trainer(tiny_dir, processor, dataset, tmp_path / "plain", False, **extra)
    assert shared.shared_prompt and not plain.shared_prompt
    # Reference (adapter disabled) log-probs, the path the precompute takes.
    ref_shared = on_the_fly_ref_logps(shared, rows, shared.data_collator)
    ref_plain = on_the_fly_ref_logps(plain, rows, plain.data_collator)
    assert_rel_close(ref_shared, ref_plain)
    # TRL's loss with its on-the-fly reference pass, then its gradients on every LoRA weight.
    loss_s, grads_s = loss_and_grads(shared, rows)
    loss_p, grads_p = loss_and_grads(plain, rows)
    assert loss_s.item() == pytest.approx(loss_p.item(), rel=RTOL)
    assert grads_s.keys() == grads_p.keys() and len(grads_p) > 0
    for name in grads_p:
        torch.testing.assert_close(grads_s[name], grads_p[name], rtol=1e-3, atol=1e-6, msg=name)


# ------------------------------------------------------------------------------------------
# the media guard
# ------------------------------------------------------------------------------------------


def _fake_batch(pads_per_row: list[tuple[int, int]], grids: list[list[int]], patches: int | None = None):
    pad = {"image": 90, "video": 91}
    width = max(i + v for i, v in pads_per_row) + 2
    ids = torch.ones(len(pads_per_row), width, dtype=torch.long)
    for r, (n_img, n_vid) in enumerate(pads_per_row):
        ids[r, 1:1 + n_img] = pad["image"]
        ids[r, 1 + n_img:1 + n_img + n_vid] = pad["video"]
    batch = {"input_ids": ids}
    if grids:
        grid = torch.tensor(grids)
        batch["image_grid_thw"] = grid
        batch["pixel_values"] = torch.zeros(int(grid.prod(-1).sum()) if patches is None else patches, 4)
    return batch, pad


@pytest.mark.parametrize(
    "rows, grids, patches, expected, message",
    [
        ([(4, 0), (0, 0)], [[1, 4, 4]], None, None, None),  # one image of 4 tokens, one text row
        ([(4, 0), (8, 0)], [[1, 4, 4], [1, 4, 8]], None, None, None),
        ([(4, 0), (4, 0)], [[1, 4, 4]], None, None, "pair b: 4 image placeholder tokens but the image features ran out"),
        ([(0, 0)], [[1, 4, 4]], None, None, "1 image.* have no placeholder tokens"),
        ([(4, 0)], [[1, 4, 4]], 8, None, "pixel_values has 8 patches but image_grid_thw describes 16"),
        ([(4, 0)], [[1, 4, 8]], None, None, "do not end there"),
        ([(0, 0)], [], None, [(1, 0)], "pair a: its record has 1 image.* but 0 reached the model"),
        ([(4, 0)], [[1, 4, 4]], None, [(1, 0)], None),
    ],
)
def test_check_media_truth_table(rows, grids, patches, expected, message):
    batch, pad = _fake_batch(rows, grids, patches)
    ids = ["a", "b"][: len(rows)]
    if message is None:
        spans = check_media(batch, pad_ids=pad, ids=ids, expected=expected, what="pair")
        assert [s.count for s in spans["image"]] == [1 if n else 0 for n, _ in rows]
    else:
        with pytest.raises(MediaMismatchError, match=message):
            check_media(batch, pad_ids=pad, ids=ids, expected=expected, what="pair")


@pytest.mark.slow
def test_dpo_trainer_refuses_a_dropped_image(tiny_dir, processor, pairs, tmp_path):
    from datasets import Dataset
    from ifpo.train.ref_logps import precompute_ref_logps

    rows = pick(pairs, n_image=2, n_text=1)
    trainer = make_trainer(tiny_dir, processor, Dataset.from_list(rows), tmp_path / "t", True)
    collator = trainer.data_collator
    batch = collator([dict(r) for r in rows])
    assert batch["pair_media"].tolist() == [[1, 0], [1, 0], [0, 0]]
    # 1. The second pair's image features are lost after collation (its placeholders remain).
    second = int(batch["image_grid_thw"][1].prod())
    first = int(batch["image_grid_thw"][0].prod())
    keep = torch.ones(batch["pixel_values"].shape[0], dtype=torch.bool)
    keep[first:first + second] = False
    dropped = {**batch, "image_grid_thw": batch["image_grid_thw"][[0, 2, 3]], "pixel_values": batch["pixel_values"][keep]}
    # The grids after the gap shift up, so the walk notices at the last image row: the pair is still named.
    with pytest.raises(MediaMismatchError, match=f"pair {rows[1]['pair_id']} \\(rejected\\): 16 image placeholder"):
        trainer.compute_loss(trainer.model, trainer._prepare_inputs(dropped))
    # 2. The image vanished from the record (an emptied path list) while the prompt keeps its placeholder.
    vanished = {**rows[0], "images": []}
    with pytest.raises(MediaMismatchError, match=f"pair {rows[0]['pair_id']}: its prompt has 1 image placeholder"):
        collator([vanished])
    # 3. The reference precompute runs the same guard.
    with pytest.raises(MediaMismatchError, match=rows[0]["pair_id"]):
        precompute_ref_logps(trainer, Dataset.from_list([vanished]), collator, pairs_fingerprint="x",
                             cache_dir=tmp_path / "c", batch_size=1, budget=TINY_BUDGET)


def test_media_pad_ids_reads_the_tokenizer(processor):
    ids = media_pad_ids(processor)
    assert ids["image"] == processor.tokenizer.convert_tokens_to_ids("<|image_pad|>")
    assert ids["video"] == processor.tokenizer.convert_tokens_to_ids("<|video_pad|>")


def test_dpo_recipe_has_the_shared_prompt_key():
    from ifpo.train.recipe import DPORecipe

    field = DPORecipe.__dataclass_fields__["shared_prompt"]
    assert field.default is True and "prompt" in field.metadata["help"]



# ------------------------------------------------------------------------------------------
# GRPO: a group's completions share the prompt's forward; the guard before generation and forwards
# ------------------------------------------------------------------------------------------

GRPO_ITEMS = {"image": "i02-selection-1", "video": "v08-single-3"}


@pytest.fixture(scope="module")
def grpo_trainer(tmp_path_factory):
    from ifpo.train.grpo_recipe import parse_grpo_recipe
    from ifpo.train.grpo_trainer import IfpoGRPOTrainer, build_prompt_dataset, grpo_peft_config
    from ifpo.train.model import load_processor_and_model
    from ifpo.verifiers.schema import read_items

    repo = Path(__file__).resolve().parent.parent
    out = tmp_path_factory.mktemp("grpo")
    recipe = parse_grpo_recipe([str(repo / "recipes" / "tiny_grpo.yaml"), "--output_dir", str(out),
                                "--save_strategy", "no", "--report_to", "none", "--rewards", "cpr",
                                "--reward_weights", "[1.0]"])
    cfg, args = recipe.ifpo, recipe.args
    processor, model = load_processor_and_model(cfg, args)
    items = read_items(repo / "sample" / "items.jsonl", root=repo / "sample")
    chosen = [it for it in items if it["id"] in GRPO_ITEMS.values()]
    chosen.append(next(it for it in items if not (it.get("media") or {}).get("images")
                       and not (it.get("media") or {}).get("videos") and it.get("structure") != "conflict"))
    dataset = build_prompt_dataset(chosen)
    trainer = IfpoGRPOTrainer(model=model, args=args, reward_funcs=[lambda completions, **kw: [0.0] * len(completions)],
                              train_dataset=dataset, processing_class=processor, peft_config=grpo_peft_config(cfg),
                              budget=cfg.media_budget(), media_root=repo / "sample")
    torch.manual_seed(2)
    with torch.no_grad():
        for name, param in trainer.model.named_parameters():
            if "lora_B" in name:
                param.normal_(0, 0.3)
    return trainer, [dataset[i] for i in range(len(dataset))]


def grpo_batch(trainer, examples, generations=4, seed=0):
    """Rows as TRL lays them out: each prompt ``generations`` times, left-padded prompts, right-padded completions."""
    repeated = [e for e in examples for _ in range(generations)]
    rows = trainer._media_rows(repeated)
    prompts = [r["input_ids"] for r in rows] if rows is not None else [
        trainer._process_prompt(e)["input_ids"] for e in repeated]
    width = max(map(len, prompts))
    pad = trainer.processing_class.tokenizer.pad_token_id
    prompt_ids = torch.tensor([[pad] * (width - len(p)) + p for p in prompts])
    prompt_mask = torch.tensor([[0] * (width - len(p)) + [1] * len(p) for p in prompts])
    gen = torch.Generator().manual_seed(seed)
    lengths = torch.randint(3, 12, (len(prompts),), generator=gen)
    completions = torch.randint(10, 400, (len(prompts), 12), generator=gen)
    completion_mask = (torch.arange(12)[None] < lengths[:, None]).long()
    input_ids = torch.cat([prompt_ids, completions.masked_fill(completion_mask == 0, pad)], dim=1)
    return rows, input_ids, torch.cat([prompt_mask, completion_mask], dim=1)


def grpo_logps(trainer, rows, input_ids, attention_mask, shared, chunk=None):
    trainer.shared_prompt = shared
    trainer._active_media = rows
    try:
        with torch.no_grad():
            logps, entropy, _ = trainer._get_per_token_logps_and_entropies(
                trainer.model, input_ids, attention_mask, 12, batch_size=chunk, compute_entropy=True)
    finally:
        trainer._active_media = None
        trainer.shared_prompt = True
    return logps, entropy


@pytest.mark.slow
@pytest.mark.parametrize("mix", ["image", "video", "text", "mixed"])
def test_grpo_group_forward_matches_separate_forwards(grpo_trainer, mix):
    trainer, examples = grpo_trainer
    by_kind = {"image": [examples[0]], "video": [examples[1]], "text": [examples[2]], "mixed": examples}
    picked = by_kind[mix] if mix != "image" else [e for e in examples if e["image_paths"]]
    rows, input_ids, mask = grpo_batch(trainer, picked)
    assert (rows is None) == (mix == "text")
    plain, plain_entropy = grpo_logps(trainer, rows, input_ids, mask, shared=False)
    shared, shared_entropy = grpo_logps(trainer, rows, input_ids, mask, shared=True)
    assert_rel_close(shared.sum(dim=1), plain.sum(dim=1))
    torch.testing.assert_close(shared_entropy, plain_entropy, rtol=RTOL, atol=1e-5)
    # TRL's chunks (old-policy/reference passes): sharing within a chunk of 6 rows is still exact.
    chunked, _ = grpo_logps(trainer, rows, input_ids, mask, shared=True, chunk=6)
    assert_rel_close(chunked.sum(dim=1), plain.sum(dim=1))


@pytest.mark.slow
def test_grpo_refuses_a_dropped_image(grpo_trainer):
    trainer, examples = grpo_trainer
    image = next(e for e in examples if e["image_paths"])
    rows, input_ids, mask = grpo_batch(trainer, [image], generations=2)
    # The second completion's row lost its image features (the row dict kept only the token ids).
    broken = [rows[0], {k: v for k, v in rows[1].items() if k not in ("pixel_values", "image_grid_thw")}]
    with pytest.raises(MediaMismatchError, match=f"item {image['item_id']}"):
        grpo_logps(trainer, broken, input_ids, mask, shared=True)
    # Before generation: the prompt row whose image vanished is refused too.
    trainer._batch_media = broken
    try:
        with pytest.raises(MediaMismatchError, match=f"item {image['item_id']}"):
            trainer._tokenize_prompts([image["prompt"]] * 2)
    finally:
        trainer._batch_media = None


# ------------------------------------------------------------------------------------------
# the guard in ifpo's generation (builders, `ifpo evaluate`, the eval hook's checkpoint scoring)
# ------------------------------------------------------------------------------------------


class _LosingProcessor:
    """A processor whose output lost the image features of the batch (the bug the guard exists for)."""

    def __init__(self, processor):
        self._processor = processor

    def __getattr__(self, name):
        return getattr(self._processor, name)

    def apply_chat_template(self, *args, **kwargs):
        out = self._processor.apply_chat_template(*args, **kwargs)
        out.pop("pixel_values", None)
        out.pop("image_grid_thw", None)
        return out


@pytest.mark.slow
def test_generation_refuses_a_dropped_image(tiny_dir, processor):
    import json

    from ifpo.verifiers.generation import GenerationConfig, TransformersGenerator, item_messages

    sample = Path(__file__).resolve().parent.parent / "sample"
    items = [json.loads(line) for line in (sample / "items.jsonl").read_text().splitlines()]
    image_item = next(i for i in items if i["media"].get("images") and not i["media"].get("videos"))
    text_item = next(i for i in items if not i["media"].get("images") and not i["media"].get("videos"))
    conversations = [item_messages(text_item), item_messages(image_item)]
    config = GenerationConfig(backend="transformers", model=str(tiny_dir), max_new_tokens=2)
    fine = TransformersGenerator(config, sample, processor=processor)
    fine._load()
    assert fine.encode(conversations)["image_grid_thw"].shape[0] == 1
    losing = TransformersGenerator(config, sample, processor=_LosingProcessor(processor))
    losing._load()
    with pytest.raises(MediaMismatchError, match=f"conversation 1 \\({image_item['media']['images'][0]}\\)"):
        losing.generate(conversations)
