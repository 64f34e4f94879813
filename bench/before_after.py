"""Before / after on held-out items: a run's first and last checkpoint evaluations, each metric's change with
its paired 95% bootstrap interval (the same resampled items on both sides, so the interval is that of the
change, not two intervals side by side).

    python bench/before_after.py HELDOUT.jsonl RUN/eval

``RUN/eval`` is the eval hook's folder (``checkpoint-<step>/verdicts.jsonl``). The statistics are
bench/efficacy.py's (per-item pass counts, numpy percentile bootstrap). Used by ``scripts/main.sh``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from efficacy import bootstrap, read_jsonl, score_dir  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("items", type=Path, help="the held-out items JSONL the checkpoints were scored on")
    parser.add_argument("eval_dir", type=Path, help="the eval hook's folder of checkpoint-<step> evaluations")
    parser.add_argument("--resamples", type=int, default=2000, help="bootstrap resamples (default 2000)")
    args = parser.parse_args(argv)
    steps = sorted((int(d.name.removeprefix("checkpoint-")), d) for d in args.eval_dir.glob("checkpoint-*")
                   if (d / "verdicts.jsonl").is_file())
    if len(steps) < 2:
        parser.error(f"{args.eval_dir}: needs two checkpoint evaluations (checkpoint-<step>/verdicts.jsonl), "
                     f"found {len(steps)}")
    items = read_jsonl(args.items)
    (first, before_dir), (last, after_dir) = steps[0], steps[-1]
    before, after = score_dir(items, before_dir), score_dir(items, after_dir)
    result = bootstrap(after, before, resamples=args.resamples)
    keys = ["ipr", "cpr_micro", "cpr_macro"] + [f"cpr_{d}" for d in after["dims"]]
    print(f"{len(items)} held-out items; step {first} -> step {last}; points, change [paired 95% interval]")
    print(f"  {'metric':<12} {'before':>7} {'after':>7}  change")
    for key in keys:
        e = result[key]
        base = e["value"] - e["delta"]
        clear = "  clear of 0" if e["delta_lo"] > 0 or e["delta_hi"] < 0 else ""
        print(f"  {key:<12} {base:7.1f} {e['value']:7.1f}  {e['delta']:+5.1f} [{e['delta_lo']:+5.1f}, "
              f"{e['delta_hi']:+5.1f}]{clear}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
