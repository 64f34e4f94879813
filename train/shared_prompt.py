"""Shared-prompt forward: the prompt (and its images/videos) of a pair or a group runs once.

TRL lays a DPO batch out as ``2B`` rows ``[prompt | chosen]`` then ``[prompt | rejected]``, and a GRPO
batch as one row per completion, so the vision tower and every prompt token run once per continuation.
:func:`shared_forward` computes the *same* per-token outputs from one packed row per prompt::

    [ prompt (p) | continuation 1 (n1) | h | continuation 2 (n2) | h | continuation 3 ... | pad ]

- **Block attention mask** (a 4D mask, which SDPA and eager attention take as given): prompt tokens
  attend causally within the prompt; the tokens of continuation ``k`` attend to the prompt and causally
  to their own block, never to another continuation.
- ``h`` is a copy of the prompt's last token heading every continuation after the first: its hidden
  state must predict the continuation's first token, as the prompt's last token does in the unshared
  row. It gets that token's position and attends to the prompt minus that token, plus itself, so at
  every layer it sees exactly the keys and values the original sees; the continuation after it
  attends to the prompt minus its last token, plus ``h``. That is the same set of keys and values as
  in the unshared row (the copy *is* the last prompt token, layer by layer), so the outputs match up
  to floating-point summation order. One extra token per continuation buys using TRL's fused LM head
  unchanged (``shift_labels``: each position has exactly one next-token label).
- **Positions** are taken from the unshared rows, computed the way the model computes them (Qwen-VL's
  M-RoPE via ``get_rope_index`` when the batch has media, else ``0..L-1``), and gathered into the
  packed layout, so every continuation starts where its prompt ends, vision tokens included.
- **Media**: the media guard (``ifpo.verifiers.media_guard``) assigns each row its grid and patch rows;
  the packed batch keeps the first member's, so the vision tower encodes each prompt's media once.
  The members of a group must have identical prompt tokens and media (checked: grids and pixels).

The outputs (``log_probs``, ``entropy``, ``mean_logits``, ``is_top1``, ``log_sum_sq_probs``) are scattered
back into the unshared ``(rows, L - 1)`` layout TRL indexes, zero elsewhere, so TRL's losses, metrics
and ``ld_alpha``/WPO weighting read them unchanged. :func:`install_shared_prompt` wraps the model's
forward (after TRL's fused LM head is added): a call with ``ifpo_shared_prompt=...`` and
``fused_lm_head=True`` runs packed; every other call is the original.

Not covered (the callers fall back to the unshared forward): flash-attention kernels (their varlen
interface cannot express "attend to the prompt and to yourself"), prompt-learning PEFT (virtual tokens),
MoE router outputs. The alternative that flash attention *can* run: one prompt forward whose key/value
cache (kept in the autograd graph) each continuation batch extends; see README ("Shared-prompt forward").
"""

from __future__ import annotations

import functools
import logging
import types
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch
from ifpo.verifiers.media_guard import MODALITIES, RowMedia

logger = logging.getLogger(__name__)

SHARED_KEY = "ifpo_shared_prompt"
SUPPORTED_ATTENTION = ("sdpa", "eager")
PER_TOKEN_FIELDS = ("log_probs", "entropy", "log_sum_sq_probs", "mean_logits", "is_top1")


class SharedPromptError(RuntimeError):
    """The batch cannot be packed exactly (a grouping or layout bug upstream)."""


def attention_supported(model) -> bool:
    """Whether ``model``'s language attention takes a custom 4D mask (SDPA, eager)."""
    config = model.config.get_text_config() if hasattr(model.config, "get_text_config") else model.config
    implementation = getattr(config, "_attn_implementation", None) or getattr(model.config, "_attn_implementation", None)
    return implementation in SUPPORTED_ATTENTION


def spec(group: Sequence[int] | torch.Tensor, prompt_start, prompt_end) -> dict[str, torch.Tensor]:
    """The ``ifpo_shared_prompt`` argument: per row, its group and the column range of its prompt.

    Rows of one group share the prompt; their continuation is the valid run of tokens from ``prompt_end``.
    """
    as_tensor = lambda x: torch.as_tensor(x, dtype=torch.long).reshape(-1)  # noqa: E731
    return {"group": as_tensor(group), "prompt_start": as_tensor(prompt_start), "prompt_end": as_tensor(prompt_end)}


def dpo_spec(attention_mask: torch.Tensor, completion_mask: torch.Tensor) -> dict[str, torch.Tensor]:
    """Rows ``i`` and ``B + i`` of TRL's DPO batch (chosen, rejected of pair ``i``) share the prompt.

    TRL flushes rows left, so a prompt starts at column 0 and ends where the completion starts.
    """
    rows = attention_mask.shape[0]
    if rows % 2:
        raise SharedPromptError(f"a DPO batch has 2B rows (chosen then rejected), got {rows}")
    prompt_len = (attention_mask.bool() & ~completion_mask.bool()).sum(dim=1)
    return spec(torch.arange(rows // 2).repeat(2), torch.zeros(rows, dtype=torch.long), prompt_len)


# ------------------------------------------------------------------------------------------------
# planning: unshared rows -> packed rows
# ------------------------------------------------------------------------------------------------


@dataclass
class Packing:
    """Index maps between the unshared batch ``(N, L)`` and the packed one ``(G, T)``."""

    src_row: torch.Tensor  # (G, T) unshared row each packed token is read from
    src_col: torch.Tensor  # (G, T) its column
    valid: torch.Tensor  # (G, T) bool, False on padding
    segment: torch.Tensor  # (G, T) 0 prompt, k + 1 continuation k (its head copy included), -1 padding
    shift_labels: torch.Tensor  # (G, T) next-token label of each packed position, -100 where none
    prompt_last: torch.Tensor  # (G,) column of the prompt's last token
    out_row: torch.Tensor  # (M,) unshared row of each scored token
    out_col: torch.Tensor  # (M,) its column in the shifted (L - 1) layout
    in_row: torch.Tensor  # (M,) packed row that scores it
    in_col: torch.Tensor  # (M,) packed column that scores it
    leaders: list[int]  # the unshared row whose prompt and media each packed row carries
    members: list[list[int]]


def plan(input_ids: torch.Tensor, attention_mask: torch.Tensor, shared: dict[str, torch.Tensor]) -> Packing:
    """Where every token of the packed batch comes from and where every score goes back to."""
    rows, width = input_ids.shape
    group = shared["group"].tolist()
    start = shared["prompt_start"].tolist()
    end = shared["prompt_end"].tolist()
    if not (len(group) == len(start) == len(end) == rows):
        raise SharedPromptError(f"ifpo_shared_prompt describes {len(group)} rows, the batch has {rows}")
    valid = attention_mask.bool().cpu()
    ids_cpu = input_ids.cpu()
    counts = valid.sum(dim=1).tolist()
    lengths = []
    for r in range(rows):
        n = counts[r] - (end[r] - start[r])
        # A row must be [padding][prompt][continuation][padding]: one contiguous run of valid tokens.
        if n < 0 or not bool(valid[r, start[r]:end[r] + n].all()) or counts[r] != end[r] + n - start[r]:
            raise SharedPromptError(f"row {r}: the prompt and continuation are not one run of valid tokens")
        lengths.append(n)
    groups: dict[int, list[int]] = {}
    for r, g in enumerate(group):
        groups.setdefault(g, []).append(r)
    members = list(groups.values())
    leaders = [m[0] for m in members]
    sizes = []
    for rows_of_group in members:
        lead = rows_of_group[0]
        prompt = ids_cpu[lead, start[lead]:end[lead]]
        for r in rows_of_group[1:]:
            if not torch.equal(ids_cpu[r, start[r]:end[r]], prompt):
                raise SharedPromptError(f"rows {lead} and {r} are grouped but their prompt tokens differ")
        if prompt.numel() == 0:
            raise SharedPromptError(f"row {lead}: empty prompt")
        sizes.append(prompt.numel() + sum(lengths[r] for r in rows_of_group) + len(rows_of_group) - 1)
    packed_width = max(sizes)
    n_groups = len(members)
    src_row = torch.zeros(n_groups, packed_width, dtype=torch.long)
    src_col = torch.zeros(n_groups, packed_width, dtype=torch.long)
    segment = torch.full((n_groups, packed_width), -1, dtype=torch.long)
    shift_labels = torch.full((n_groups, packed_width), -100, dtype=torch.long)
    prompt_last = torch.zeros(n_groups, dtype=torch.long)
    out_row, out_col, in_row, in_col = [], [], [], []
    for g, rows_of_group in enumerate(members):
        lead = rows_of_group[0]
        p = end[lead] - start[lead]
        src_row[g, :p] = lead
        src_col[g, :p] = torch.arange(start[lead], end[lead])
        segment[g, :p] = 0
        prompt_last[g] = p - 1
        cursor = p
        for k, r in enumerate(rows_of_group):
            n = lengths[r]
            if k == 0:
                head = p - 1  # the prompt's own last token predicts the first continuation's first token
            else:
                head = cursor  # a copy of the prompt's last token, at its position
                src_row[g, head] = lead
                src_col[g, head] = end[lead] - 1
                segment[g, head] = k + 1
                cursor += 1
            src_row[g, cursor:cursor + n] = r
            src_col[g, cursor:cursor + n] = torch.arange(end[r], end[r] + n)
            segment[g, cursor:cursor + n] = k + 1
            if n:
                shift_labels[g, head:head + n] = ids_cpu[r, end[r]:end[r] + n]
                steps = torch.arange(n)
                # Unshared, the token at column end[r] + j is scored at shifted column end[r] - 1 + j.
                out_row.append(torch.full((n,), r))
                out_col.append(end[r] - 1 + steps)
                in_row.append(torch.full((n,), g))
                in_col.append(head + steps)
            cursor += n
    empty = torch.zeros(0, dtype=torch.long)
    cat = lambda parts: torch.cat(parts) if parts else empty  # noqa: E731
    return Packing(
        src_row=src_row, src_col=src_col, valid=segment >= 0, segment=segment, shift_labels=shift_labels,
        prompt_last=prompt_last, out_row=cat(out_row), out_col=cat(out_col), in_row=cat(in_row),
        in_col=cat(in_col), leaders=leaders, members=members,
    )


def block_mask(packing: Packing, *, dtype: torch.dtype | None, device, leak: bool = False) -> torch.Tensor:
    """``(G, 1, T, T)``: True (or 0.0) where a query may attend to a key.

    ``dtype=None`` gives a boolean mask (SDPA); a float dtype gives the additive form (eager). ``leak`` lets
    a continuation also see the earlier ones (wrong on purpose: the exactness tests must catch it).
    """
    segment = packing.segment.to(device)
    width = segment.shape[1]
    cols = torch.arange(width, device=device)
    q_seg, k_seg = segment[:, :, None], segment[:, None, :]
    causal = cols[None, :, None] >= cols[None, None, :]
    same = (k_seg == q_seg) & (k_seg >= 0)
    if leak:
        same = same | ((k_seg > 0) & (q_seg > k_seg))
    # Continuations after the first reach the prompt's last token through their own head copy only.
    is_last = cols[None, :] == packing.prompt_last.to(device)[:, None]
    prompt_key = (k_seg == 0) & ~((q_seg >= 2) & is_last[:, None, :])
    allowed = causal & (same | prompt_key)
    # Padding queries attend to themselves: a fully masked row would be NaN, and NaN * 0 in the backward
    # would poison the weight gradients.
    allowed = allowed | torch.eye(width, dtype=torch.bool, device=device)[None]
    allowed = allowed[:, None]
    if dtype is None:
        return allowed
    return torch.zeros(allowed.shape, dtype=dtype, device=device).masked_fill(~allowed, torch.finfo(dtype).min)


# ------------------------------------------------------------------------------------------------
# the forward
# ------------------------------------------------------------------------------------------------


def unshared_positions(model, input_ids, attention_mask, mm_token_type_ids, image_grid_thw, video_grid_thw):
    """Position ids the model computes for the unshared rows: ``(3, N, L)`` M-RoPE or ``(N, L)``."""
    backbone = getattr(model, "model", None)
    rows, width = input_ids.shape
    if hasattr(backbone, "get_rope_index"):
        if (image_grid_thw is not None or video_grid_thw is not None) and mm_token_type_ids is not None:
            positions, _ = backbone.get_rope_index(
                input_ids, mm_token_type_ids, image_grid_thw=image_grid_thw, video_grid_thw=video_grid_thw,
                attention_mask=attention_mask,
            )
            return positions
        # Without media Qwen-VL numbers columns 0..L-1 on every row.
        return torch.arange(width, device=input_ids.device).view(1, 1, -1).expand(3, rows, -1)
    return torch.arange(width, device=input_ids.device).view(1, -1).expand(rows, -1)


def _media_of_leaders(kwargs: dict[str, Any], spans: dict[str, list[RowMedia]], packing: Packing) -> None:
    """Replace the media tensors in ``kwargs`` by the leaders' (each prompt's media once), checking members."""
    for name, _token, patches_key, grid_key in MODALITIES:
        grid, patches = kwargs.get(grid_key), kwargs.get(patches_key)
        if grid is None:
            continue
        per_row = spans[name]
        grid_parts, patch_parts = [], []
        for rows_of_group in packing.members:
            lead = per_row[rows_of_group[0]]
            lead_grid = grid[lead.grid_start:lead.grid_end]
            lead_patches = patches[lead.patch_start:lead.patch_end]
            for r in rows_of_group[1:]:
                span = per_row[r]
                if not (torch.equal(grid[span.grid_start:span.grid_end], lead_grid)
                        and torch.equal(patches[span.patch_start:span.patch_end], lead_patches)):
                    raise SharedPromptError(f"rows {rows_of_group[0]} and {r} are grouped but their {name}s differ")
            grid_parts.append(lead_grid)
            patch_parts.append(lead_patches)
        kwargs[grid_key] = torch.cat(grid_parts) if any(x.numel() for x in grid_parts) else None
        kwargs[patches_key] = torch.cat(patch_parts) if kwargs[grid_key] is not None else None


def shared_forward(model, forward, shared: dict[str, torch.Tensor], *, input_ids, attention_mask, labels=None,
                   leak: bool = False, **kwargs):
    """The fused-LM-head outputs of ``forward`` on the unshared batch, computed on the packed one."""
    from ifpo.verifiers.media_guard import check_media
    from trl.trainer.utils import FusedCausalLMOutput

    if kwargs.pop("shift_labels", None) is not None:
        raise SharedPromptError("shift_labels (context parallelism) cannot be combined with the shared-prompt forward")
    kwargs.pop("num_items_in_batch", None)
    kwargs.pop("fused_lm_head", None)
    rows, width = input_ids.shape
    device = input_ids.device
    packing = plan(input_ids, attention_mask, shared)
    pad_ids = {name: getattr(model.config, f"{name}_token_id", -1) for name, *_ in MODALITIES}
    spans = check_media({"input_ids": input_ids, **kwargs}, pad_ids=pad_ids,
                        merge_size=_merge_size(model), what="row")
    mm = kwargs.pop("mm_token_type_ids", None)
    positions = unshared_positions(model, input_ids, attention_mask, mm, kwargs.get("image_grid_thw"),
                                   kwargs.get("video_grid_thw"))
    src_row, src_col = packing.src_row.to(device), packing.src_col.to(device)
    valid = packing.valid.to(device)
    pad_token = model.config.get_text_config().pad_token_id if hasattr(model.config, "get_text_config") else None
    packed_ids = input_ids[src_row, src_col].masked_fill(~valid, pad_token if pad_token is not None else 0)
    if positions.dim() == 3:
        packed_positions = positions[:, src_row, src_col].masked_fill(~valid[None], 0)
    else:
        packed_positions = positions[src_row, src_col].masked_fill(~valid, 0)
    if mm is not None:
        kwargs["mm_token_type_ids"] = mm[src_row, src_col].masked_fill(~valid, 0)
    _media_of_leaders(kwargs, spans, packing)
    embed = model.get_input_embeddings().weight
    dtype = None if _attention(model) == "sdpa" else embed.dtype
    mask = block_mask(packing, dtype=dtype, device=device, leak=leak)
    outputs = forward(input_ids=packed_ids, attention_mask=mask, position_ids=packed_positions,
                      shift_labels=packing.shift_labels.to(device), fused_lm_head=True, **kwargs)
    out_row, out_col = packing.out_row.to(device), packing.out_col.to(device)
    in_row, in_col = packing.in_row.to(device), packing.in_col.to(device)
    if labels is not None:
        # The caller's labels must score exactly the continuations the spec describes.
        scored = torch.zeros((rows, width - 1), dtype=torch.bool, device=device)
        scored[out_row, out_col] = True
        if not torch.equal(scored, labels[:, 1:] != -100):
            raise SharedPromptError("the labels score other tokens than the continuations ifpo_shared_prompt describes")
    fields: dict[str, Any] = {}
    for name in PER_TOKEN_FIELDS:
        value = getattr(outputs, name, None)
        if value is None:
            fields[name] = None
            continue
        scattered = value.new_zeros((rows, width - 1))
        scattered[out_row, out_col] = value[in_row, in_col]
        fields[name] = scattered
    label_mask = torch.zeros((rows, width - 1), dtype=torch.bool, device=device)
    label_mask[out_row, out_col] = True
    count = label_mask.sum().clamp(min=1)
    loss = -fields["log_probs"].sum() / count
    return FusedCausalLMOutput(loss=loss, label_mask=label_mask, aux_loss=getattr(outputs, "aux_loss", None), **fields)


def _attention(model) -> str | None:
    config = model.config.get_text_config() if hasattr(model.config, "get_text_config") else model.config
    return getattr(config, "_attn_implementation", None) or getattr(model.config, "_attn_implementation", None)


def _merge_size(model) -> int:
    vision = getattr(model.config, "vision_config", None)
    return int(getattr(vision, "spatial_merge_size", 2) or 2)


def install_shared_prompt(model) -> None:
    """Let ``model(..., ifpo_shared_prompt=spec, fused_lm_head=True)`` run the shared-prompt forward.

    Call after TRL's ``add_fused_lm_head`` (the trainer's ``__init__``), on the model PEFT wraps
    (``peft_model.get_base_model()``): PEFT, DDP and DeepSpeed call this module's ``forward``. Idempotent.
    """
    if getattr(model, "_ifpo_shared_prompt_installed", False):
        return
    original = model.forward

    @functools.wraps(type(model).forward)
    def forward(self, *args, ifpo_shared_prompt=None, ifpo_shared_prompt_leak=False, **kwargs):
        if ifpo_shared_prompt is None or not kwargs.get("fused_lm_head") or args:
            return original(*args, **kwargs)
        if kwargs.get("output_router_logits"):
            raise SharedPromptError("the shared-prompt forward does not support MoE router outputs; turn it off")
        return shared_forward(self, original, ifpo_shared_prompt, leak=ifpo_shared_prompt_leak, **kwargs)

    model.forward = types.MethodType(forward, model)
    model._ifpo_shared_prompt_installed = True


__all__ = [
    "SHARED_KEY",
    "SUPPORTED_ATTENTION",
    "Packing",
    "SharedPromptError",
    "attention_supported",
    "block_mask",
    "dpo_spec",
    "install_shared_prompt",
    "plan",
    "shared_forward",
    "spec",
]
