"""``ifpo sample --out DIR [--seed N] [--force]``: regenerate the bundled sample benchmark.

Writes the procedural media and ``facts.json`` (:func:`generate_media`) and ``items.jsonl``
(:func:`build_items`, which refuses to write a reference response that fails its constraints),
then prints a summary. The shipped sample is ``ifpo sample --out sample --force``.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path


def _summary(path: Path) -> str:
    import json

    items = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    by_structure = Counter(i["structure"] for i in items)
    n_constraints = sum(len(i["constraints"]) for i in items)
    media = Counter("video" if i["media"]["videos"] else "image" if i["media"]["images"] else "text"
                    for i in items)
    return (f"{len(items)} items, {n_constraints} constraints ("
            + ", ".join(f"{k} {v}" for k, v in by_structure.most_common()) + "; "
            + ", ".join(f"{k} {v}" for k, v in media.most_common()) + "; "
            + f"{sum(1 for i in items if i.get('system'))} with a system message, "
            + f"{sum(1 for i in items if i.get('reference_response'))} with a verified reference)")


MAX_WORLD_ITEMS = 100_000


def _world(args: argparse.Namespace, out: Path) -> int:
    from ifpo.data_builders.sample_benchmark.world import write_world

    if args.n < 1:
        print(f"ifpo sample: --n must be >= 1, got {args.n}", file=sys.stderr)
        return 2
    if args.n > MAX_WORLD_ITEMS:
        # Every item renders its own image or video and all are held in memory until written: a typo of a
        # few zeros exhausted the machine's memory instead of failing.
        print(f"ifpo sample: --n must be <= {MAX_WORLD_ITEMS:,} (one media file per item), got {args.n:,}",
              file=sys.stderr)
        return 2
    try:
        path = write_world(out, args.n, args.split, seed=args.seed)
    except ValueError as exc:
        print(f"ifpo sample: {exc}", file=sys.stderr)
        return 2  # nothing written (docs/exit-codes.md)
    print(f"wrote {path} and its media under {out / 'media'} (world split {args.split}, seed {args.seed})")
    print(f"  {_summary(path)}")
    return 0


def cli_main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="ifpo sample",
        description="Regenerate the bundled sample benchmark: procedural videos and images, facts.json, "
                    "and items.jsonl with verified reference responses.",
    )
    parser.add_argument("--out", required=True, help="output folder (created if missing)")
    parser.add_argument("--seed", type=int, default=0,
                        help="0 gives the canonical scenes; another seed permutes colours and shapes")
    parser.add_argument("--force", action="store_true",
                        help="write into a non-empty folder, overwriting the sample files there")
    parser.add_argument("--world", action="store_true",
                        help="write the synthetic verified-instruction world instead (data_builders/sample_benchmark/"
                             "world.py): --n items of --split with their media")
    parser.add_argument("--split", choices=("train", "heldout"), default="heldout", help="world split (with --world)")
    parser.add_argument("--n", type=int, default=48, help="number of world items (with --world)")
    args = parser.parse_args(argv)
    if args.seed < 0:
        print(f"ifpo sample: --seed must be >= 0, got {args.seed}", file=sys.stderr)
        return 2
    out = Path(args.out)
    if out.exists() and not out.is_dir():
        print(f"ifpo sample: --out {str(out)!r} exists and is not a folder", file=sys.stderr)
        return 2
    if out.is_dir() and any(out.iterdir()) and not args.force:
        print(f"ifpo sample: {str(out)!r} is not empty; pass --force to overwrite the sample files in it "
              "(other files are left alone)", file=sys.stderr)
        return 2
    if args.world:
        return _world(args, out)
    from ifpo.data_builders.sample_benchmark.items import write_sample

    try:
        path = write_sample(out, seed=args.seed)
    except ValueError as exc:
        print(f"ifpo sample: {exc}", file=sys.stderr)
        return 2  # nothing written (docs/exit-codes.md)
    print(f"wrote {out / 'media'}, {out / 'facts.json'} and {path} (seed {args.seed})")
    print(f"  {_summary(path)}")
    return 0


if __name__ == "__main__":
    sys.exit(cli_main(sys.argv[1:]))
