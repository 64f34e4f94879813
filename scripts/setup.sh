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
  touch "$stamp"
fi
