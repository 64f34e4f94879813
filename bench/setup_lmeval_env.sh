#!/usr/bin/env bash
# Creates bench/.lmeval: lm-eval (the IFEval reference checkers) in its own environment, apart from
# ifpo's, so that the comparison never mixes their dependencies. Takes a few minutes (torch).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
python3 -m venv "$here/.lmeval"
"$here/.lmeval/bin/pip" install --quiet "lm-eval==0.4.13" langdetect immutabledict nltk
echo "reference environment ready: $here/.lmeval/bin/python"
