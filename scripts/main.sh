#!/usr/bin/env bash
# The main job, end to end on the embedded default (sample benchmark + tiny Qwen3-VL), offline.
# Installs what it needs first. Outputs go to ${IFPO_OUT:-runs/main}.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"
# shellcheck source=setup.sh
. scripts/setup.sh
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 HF_DATASETS_OFFLINE=1 WANDB_MODE=offline TOKENIZERS_PARALLELISM=false
out="${IFPO_OUT:-runs/main}"
mkdir -p "$out"

echo "== 1/6 validate the bundled sample benchmark"
ifpo validate sample/items.jsonl

echo "== 2/6 score the sample's reference responses with the verifier suite (rule routes; no judge)"
python - "$out/references.jsonl" <<'PY'
import json, sys
with open(sys.argv[1], "w") as fh:
    for line in open("sample/items.jsonl"):
        item = json.loads(line)
        if item.get("reference_response"):
            fh.write(json.dumps({"id": item["id"], "response": item["reference_response"]}) + "\n")
PY
ifpo score --items sample/items.jsonl --responses "$out/references.jsonl" --out "$out/references_report.json" --no-progress

echo "== 3/6 build the tiny Qwen3-VL offline (the policy for stripped / option-order negatives)"
ifpo tiny-model --out "$out/tiny-model" --force

echo "== 4/6 build verified preference pairs"
cat > "$out/build.yaml" <<YAML
# the policy answers the bare tasks (stripped negatives) and wrong branches (option-order negatives),
# at the tiny processor's media budgets (recipes/tiny.yaml)
policy:
  backend: transformers
  model: $out/tiny-model
  max_new_tokens: 32
  media: {image_min_pixels: 4096, image_max_pixels: 16384, video_min_pixels: 4096, video_max_pixels: 16384, video_max_frames: 16}
seed: 0
YAML
rm -rf "$out/pairs"
ifpo build-pairs --items sample/items.jsonl --out "$out/pairs" --config "$out/build.yaml"

echo "== 5/6 train DPO on the tiny model (LoRA), evaluating step 0 and every checkpoint with the verifier suite"
rm -rf "$out/dpo"
accelerate launch --num_processes 1 train/dpo.py recipes/tiny.yaml --pairs "$out/pairs" --output_dir "$out/dpo" \
  --eval_hook '{"items": "sample/items.jsonl", "max_items": 24, "generation": {"max_new_tokens": 32, "temperature": 0}}'

echo "== 6/6 compare the checkpoints"
ifpo compare "$out/dpo" --out "$out/dashboard.html" --csv "$out/checkpoints.csv" --json "$out/comparison.json"

echo "main job done; outputs in $out; dashboard: $(cd "$out" && pwd)/dashboard.html"
