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

echo "== 1/4 validate the bundled sample benchmark"
ifpo validate sample/items.jsonl

echo "== 2/4 score the sample's reference responses with the verifier suite (rule routes; no judge)"
python - "$out/references.jsonl" <<'PY'
import json, sys
with open(sys.argv[1], "w") as fh:
    for line in open("sample/items.jsonl"):
        item = json.loads(line)
        if item.get("reference_response"):
            fh.write(json.dumps({"id": item["id"], "response": item["reference_response"]}) + "\n")
PY
ifpo score --items sample/items.jsonl --responses "$out/references.jsonl" --out "$out/references_report.json" --no-progress

echo "== 3/4 build the tiny Qwen3-VL offline (the policy for stripped / option-order negatives)"
ifpo tiny-model --out "$out/tiny-model" --force

echo "== 4/4 build verified preference pairs"
cat > "$out/build.yaml" <<YAML
policy: {backend: transformers, model: $out/tiny-model, max_new_tokens: 32}
seed: 0
YAML
rm -rf "$out/pairs"
ifpo build-pairs --items sample/items.jsonl --out "$out/pairs" --config "$out/build.yaml"

echo "main job done; outputs in $out"
