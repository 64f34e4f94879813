"""Throughput of loading + validating items: prints items/s for N synthetic items (default 100k).

    python bench/validate_throughput.py [--n 100000]

Items are copies of the bundled sample benchmark's items with fresh ids (so media paths, branches,
conflict blocks and params are realistic); media existence checks are included (cached per path).
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from ifpo.verifiers.schema import load_items

REPO = Path(__file__).resolve().parent.parent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100_000, help="number of items")
    parser.add_argument("--items", default=str(REPO / "sample" / "items.jsonl"), help="template items")
    args = parser.parse_args()
    templates = [json.loads(line) for line in open(args.items, encoding="utf-8") if line.strip()]
    root = Path(args.items).parent
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "items.jsonl"
        with open(path, "w", encoding="utf-8") as fh:
            for i in range(args.n):
                item = dict(templates[i % len(templates)])
                item["id"] = f"bench-{i}"
                fh.write(json.dumps(item) + "\n")
        size_mb = path.stat().st_size / 2**20
        load_items(path, root=root)  # warm imports (registry, checkers) outside the timing
        start = time.perf_counter()
        result = load_items(path, root=root)
        seconds = time.perf_counter() - start
    constraints = sum(len(i["constraints"]) for i in result.items)
    print(f"validated {len(result.items):,} items ({constraints:,} constraints, {size_mb:.1f} MiB) "
          f"in {seconds:.2f} s: {len(result.items) / seconds:,.0f} items/s, {len(result.errors)} errors")


if __name__ == "__main__":
    main()
