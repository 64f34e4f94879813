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
heldout=sample/world/heldout.jsonl

echo "== 1/6 validate the bundled samples: the 77-item benchmark sample and the synthetic world's held-out split"
ifpo validate sample/items.jsonl > "$out/validate_sample.txt"   # no pipe: pipefail would stop on head's SIGPIPE
head -n 1 "$out/validate_sample.txt"
ifpo validate "$heldout"

echo "== 2/6 the learnable default (shipped): a tiny Qwen3-VL warm-started on the world's train split, drawn again here"
world="$out/world"
model="$(ifpo tiny-model --learnable --world "$world")"

echo "== 3/6 build verified preference pairs on 64 train items, the learnable default as the policy"
mkdir -p "$out/train"
head -n 64 "$world/train.jsonl" > "$out/train/items.jsonl"   # media stay in the world folder (--root)
kinds='[corrupted, stripped]'
if python -c "import sys; from ifpo.data_builders.build import KINDS; sys.exit('on_policy' not in KINDS)"; then
  kinds='[corrupted, stripped, on_policy]'
fi
cat > "$out/build.yaml" <<YAML
# stripped negatives: the policy's answer to the bare task; on_policy: 4 samples ranked by the verifiers
kinds: $kinds
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

echo "== 4/6 DPO with LoRA on the learnable default; the held-out split is scored at step 0 and every 10 steps"
rm -rf "$out/dpo"
python train/dpo.py recipes/tiny_world.yaml --model_name_or_path "$model" --pairs "$out/pairs" --output_dir "$out/dpo" \
  --save_strategy no

echo "== 5/6 compare the checkpoints"
ifpo compare "$out/dpo" --out "$out/dashboard.html" --csv "$out/checkpoints.csv" --json "$out/comparison.json" >/dev/null

echo "== 6/6 before / after on the held-out split ($heldout)"
python - "$out/dpo/eval" <<'PY'
import json, pathlib, sys
rows = []
for d in pathlib.Path(sys.argv[1]).glob("checkpoint-*"):
    r = json.loads((d / "report.json").read_text())
    rows.append((int(d.name.split("-")[1]), r))
rows.sort()
keys = ["ipr", "cpr_micro", "cpr_macro"]
print(f"{'step':>6}  " + "  ".join(f"{k:>9}" for k in keys))
for step, r in rows:
    print(f"{step:>6}  " + "  ".join(f"{100 * r[k]:9.1f}" for k in keys))
first, last = rows[0][1], rows[-1][1]
print("before -> after: " + ", ".join(f"{k} {100 * first[k]:.1f} -> {100 * last[k]:.1f}" for k in keys))
PY
echo "main job done; outputs in $out; dashboard: $(cd "$out" && pwd)/dashboard.html"
