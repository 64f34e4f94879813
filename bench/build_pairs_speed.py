"""Rule-only pair building speed: prints items/s and pairs/s on the sample benchmark, repeated.

    python bench/build_pairs_speed.py [--reps 10] [--workers 1 2]

Builds the sample items (repeated under new ids) with the default kinds and no policy, judge or
teacher (rule verification only), once per worker count, into temporary directories.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from ifpo.data_builders.build import BuildConfig, build_pairs
from ifpo.verifiers.schema import read_items

REPO = Path(__file__).resolve().parent.parent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=10, help="copies of the sample items")
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    args = parser.parse_args()
    sample = read_items(REPO / "sample" / "items.jsonl")
    items = [dict(item, id=f"{item['id']}~{r}") for r in range(args.reps) for item in sample]
    for workers in args.workers:
        with tempfile.TemporaryDirectory() as tmp:
            start = time.perf_counter()
            report = build_pairs(items, Path(tmp), BuildConfig(workers=workers), media_root=REPO / "sample",
                                 progress=False)
            seconds = time.perf_counter() - start
        print(f"workers {workers}: {len(items)} items -> {report['pairs']} pairs in {seconds:.1f} s: "
              f"{len(items) / seconds:.1f} items/s, {report['pairs'] / seconds:.1f} pairs/s "
              f"({json.dumps(report['by_kind'])})")


if __name__ == "__main__":
    main()
