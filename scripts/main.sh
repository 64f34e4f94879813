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

echo "== 1/3 validate the bundled sample benchmark"
ifpo validate sample/items.jsonl

echo "== 2/3 constraint registry"
ifpo constraints --json > "$out/constraints.json"
python - "$out/constraints.json" <<'PY'
import collections, json, sys
types = json.load(open(sys.argv[1]))
by = collections.Counter((t["source"], t["route"]) for t in types)
print(f"{len(types)} constraint types:", ", ".join(f"{s}/{r} {n}" for (s, r), n in sorted(by.items())))
PY

echo "== 3/3 build the tiny Qwen3-VL offline"
ifpo tiny-model --out "$out/tiny-model" --force

echo "main job done; outputs in $out"
