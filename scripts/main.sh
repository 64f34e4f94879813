#!/usr/bin/env bash
# The main job, end to end on the learnable default (synthetic world + warm-started tiny Qwen3-VL), offline.
# Installs what it needs first. Outputs go to ${IFPO_OUT:-runs/main}. The learnable default ships with ifpo
# (train/models/tiny-world): nothing is built or downloaded.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"
# shellcheck source=setup.sh
. scripts/setup.sh
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 HF_DATASETS_OFFLINE=1 WANDB_MODE=offline TOKENIZERS_PARALLELISM=false
out="${IFPO_OUT:-runs/main}"
mkdir -p "$out"

echo "== 1/6 validate the bundled sample (77 items) and draw a fresh held-out split of the synthetic world (160 items)"
ifpo validate sample/items.jsonl > "$out/validate_sample.txt"   # no pipe: pipefail would stop on head's SIGPIPE
head -n 1 "$out/validate_sample.txt"
# seed 1: scenes disjoint from the train split's by construction (world.py scene_split), never used to tune
heldout="$out/heldout/heldout.jsonl"
[ -f "$heldout" ] || ifpo sample --world --split heldout --n 160 --seed 1 --out "$out/heldout" > /dev/null
ifpo validate "$heldout"

echo "== 2/6 the learnable default (shipped): a tiny Qwen3-VL warm-started on the world's train split, drawn again here"
world="$out/world"
model="$(ifpo tiny-model --learnable --world "$world")"

echo "== 3/6 build verified preference pairs on 64 train items, the learnable default as the policy"
mkdir -p "$out/train"
head -n 64 "$world/train.jsonl" > "$out/train/items.jsonl"   # media stay in the world folder (--root)
cat > "$out/build.yaml" <<YAML
# stripped negatives: the policy's answer to the bare task; on_policy: 4 samples ranked by the verifiers
kinds: [corrupted, stripped, on_policy]
corruptions_per_item: 1
policy:
  backend: transformers
  model: $model
  max_new_tokens: 96
  batch_size: 16
  media: {image_min_pixels: 4096, image_max_pixels: 16384, video_min_pixels: 4096, video_max_pixels: 16384, video_max_frames: 16}
seed: 0
YAML
rm -rf "$out/pairs"
ifpo build-pairs --items "$out/train/items.jsonl" --root "$world" --out "$out/pairs" --config "$out/build.yaml" --no-progress

echo "== 4/6 DPO with LoRA on the learnable default; the held-out split is scored before and after training"
rm -rf "$out/dpo"
python train/dpo.py recipes/tiny_world.yaml --model_name_or_path "$model" --pairs "$out/pairs" --output_dir "$out/dpo" \
  --save_strategy no --eval_hook.items "$heldout" --eval_hook.every_steps 0

echo "== 5/6 compare the checkpoints"
ifpo compare "$out/dpo" --out "$out/dashboard.html" --csv "$out/checkpoints.csv" --json "$out/comparison.json" >/dev/null

echo "== 6/6 before / after on the held-out split ($heldout): each change with its paired 95% interval"
python bench/before_after.py "$heldout" "$out/dpo/eval"
echo "main job done; outputs in $out; dashboard: $(cd "$out" && pwd)/dashboard.html"
