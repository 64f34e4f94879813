#!/usr/bin/env bash
# The whole test suite: installs what it needs, then runs ruff and pytest. Extra args go to pytest.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"
# shellcheck source=setup.sh
. scripts/setup.sh
# System packages the tests use: headless Chromium for the dashboard tests (tests/test_compare.py). Installed
# here, never from inside a test; where it cannot be installed (no root, no apt) those tests skip, saying so.
bash scripts/install_chromium.sh || echo "[test] chromium not installed (see above); the browser tests will skip"
# Offline by construction: nothing in the tests may reach a hub.
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 HF_DATASETS_OFFLINE=1 WANDB_MODE=offline TOKENIZERS_PARALLELISM=false
# One OpenMP thread unless set: the tests' models are tiny, and on 2 shared cores torch's default 2-thread pool waits
# on the busy core (tests/test_grpo.py + test_shared_prompt.py in-process: 131 s at the default, 22 s at 1, load ~3).
# The learning tests' margins were tuned with OMP_NUM_THREADS=1 too (the bench/efficacy.py runs).
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-1}"
echo "[test] ruff"
ruff check .
echo "[test] pytest"
# Two worker processes (pytest-xdist), a whole file to each at a time (module fixtures such as the vLLM server and the
# efficacy runs' models are built once): most of the suite is single-threaded, so the second core would otherwise
# idle outside the two-rank launches. IFPO_TEST_WORKERS=0 runs everything in this process (what -s needs).
python -m pytest -q -n "${IFPO_TEST_WORKERS:-2}" --dist loadfile "$@"
