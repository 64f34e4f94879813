"""Why does a run's content CPR move? The world's pixel rules, per role, and the description they rest on.

    python bench/content_diagnosis.py HELDOUT.jsonl EVAL_DIR [EVAL_DIR ...]

Every content rule of the synthetic world (``data_builders/sample_benchmark/world.py``) is answered from
the pixels: the colour of the first / last shape, the number of shapes. A tiny model writes them after its
own description of the scene ("... The colours are black, orange and red. The shape that appears last is
red."), so a content score is only as good as that description. For each ``ifpo evaluate`` folder
(``responses.jsonl`` + ``verdicts.jsonl``) on world items this prints:

- the pass rate of every constraint role (``first_color``, ``last_color``, ``count`` and the format roles);
- how many colours the description lists against how many shapes the scene has: ``P(lists 3 | 3 shapes)``
  and ``P(lists 3 | 2 shapes)``; their gap is the pixel signal behind the count rule (0 = a guess);
- how often the count answer equals the number of colours listed and the colour answer is one of them
  (the answer follows the description, not the pixels directly).

Written for ``bench/efficacy.py``'s folders (``OUT/eval/<tag>/<split>/<run>``); it reads the world's own
phrasing, so other items are skipped (and counted).
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from ifpo.data_builders.sample_benchmark.media import PALETTE  # noqa: E402
from ifpo.verifiers.io import iter_jsonl  # noqa: E402

COLOUR = re.compile(r"\b(" + "|".join(sorted(PALETTE, key=len, reverse=True)) + r")\b")
LISTED = re.compile(r"the colours are ([a-z ,]+?)\.")
COUNT = re.compile(r"\b(one|two|three) shapes\b")
ANSWER = re.compile(r"\bis (" + "|".join(PALETTE) + r")\b")
NUMBER = {"one": 1, "two": 2, "three": 3}


def read_jsonl(path: Path) -> list[dict]:
    rows = []
    for line, record, error in iter_jsonl(path):
        if error is not None or not isinstance(record, dict):
            raise SystemExit(f"{path}:{line}: {error or 'expected a JSON object'}")
        rows.append(record)
    return rows


def diagnose(items: dict[str, dict], folder: Path) -> dict[str, float | int]:
    responses = {r["id"]: r["response"] for r in read_jsonl(folder / "responses.jsonl")}
    passed, judged, c = Counter(), Counter(), Counter()
    for verdict in read_jsonl(folder / "verdicts.jsonl"):
        item = items.get(verdict["id"])
        if item is None or not (item.get("world") or {}).get("roles"):
            c["skipped"] += 1
            continue
        roles = item["world"]["roles"]
        for v in verdict["verdicts"]:
            if v.get("passed") is not None:
                judged[roles[v["constraint_id"]]] += 1
                passed[roles[v["constraint_id"]]] += bool(v["passed"])
        text = responses.get(verdict["id"], "").lower()
        shapes = len(item["world"]["scene"]["objects"])
        listed_match = LISTED.search(text)
        listed = COLOUR.findall(listed_match.group(1)) if listed_match else []
        c[f"scenes_{shapes}"] += 1
        c[f"lists3_given_{shapes}"] += len(listed) == 3
        after = text[listed_match.end():] if listed_match else text
        for role in roles.values():
            if role == "count" and (m := COUNT.search(after)):
                c["count_answers"] += 1
                c["count_follows_list"] += NUMBER[m.group(1)] == len(listed)
            elif role in ("first_color", "last_color") and (m := ANSWER.search(after)):
                c["colour_answers"] += 1
                c["colour_in_list"] += m.group(1) in listed
    out: dict[str, float | int] = {f"cpr_{r}": round(100 * passed[r] / judged[r], 1) for r in sorted(judged)}
    for n in (2, 3):
        out[f"P(lists 3 | {n} shapes)"] = round(c[f"lists3_given_{n}"] / max(c[f"scenes_{n}"], 1), 2)
    out["count answer = colours listed"] = f"{c['count_follows_list']}/{c['count_answers']}"
    out["colour answer among listed"] = f"{c['colour_in_list']}/{c['colour_answers']}"
    if c["skipped"]:
        out["skipped (not world items)"] = c["skipped"]
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("heldout", type=Path, help="the world items the folders were evaluated on (JSONL)")
    parser.add_argument("evals", type=Path, nargs="+", help="ifpo evaluate output folders")
    args = parser.parse_args(argv)
    if not args.heldout.is_file():
        parser.error(f"{args.heldout}: no such items file")
    items = {i["id"]: i for i in read_jsonl(args.heldout)}
    for folder in args.evals:
        if not (folder / "responses.jsonl").is_file() or not (folder / "verdicts.jsonl").is_file():
            parser.error(f"{folder}: expected responses.jsonl and verdicts.jsonl (an ifpo evaluate folder)")
        print(f"{folder}:")
        for key, value in diagnose(items, folder).items():
            print(f"  {key:32s} {value}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
