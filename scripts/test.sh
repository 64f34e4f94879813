#!/usr/bin/env bash
# The whole test suite: installs what it needs, then runs ruff and pytest. Extra args go to pytest.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"
# shellcheck source=setup.sh
. scripts/setup.sh
# Offline by construction: nothing in the tests may reach a hub.
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 HF_DATASETS_OFFLINE=1 WANDB_MODE=offline TOKENIZERS_PARALLELISM=false
echo "[test] ruff"
ruff check .
echo "[test] pytest"
python -m pytest -q "$@"
