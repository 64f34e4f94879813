"""``ifpo compare``: compare checkpoints and runs; write a self-contained HTML dashboard.

    ifpo compare RUN_DIR [RUN_DIR ...] --out dashboard.html [--a RUN@STEP --b RUN@STEP]
                 [--csv table.csv] [--json comparison.json] [--items ITEMS.jsonl] [--wandb]

Each RUN_DIR is one run: a training ``output_dir`` (its ``eval/checkpoint-<step>/`` folders), an
``ifpo evaluate --out`` folder, or any folder above several of them. ``--a``/``--b`` choose the
checkpoints whose flips (regressions, fixes) and bars the page opens with (``RUN@STEP``,
``RUN@first``, ``RUN@last``, ``RUN`` (its last), a bare step of the first run, or a folder); by default a run
against its own first checkpoint (the last run that has two). Flips between different base models are
reported as differences, not regressions. A corrupt or partial report is named
and skipped; NaN rates and unreadable response or verdict lines are named. Prints a table. Exit codes
(docs/exit-codes.md): 0 every report drawn whole, 1 the page was written but something was skipped or
damaged (named on stderr and in --json), 2 nothing readable or bad options.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from ifpo.eval_hooks.core import REPORT, RESPONSES, VERDICTS
from ifpo.eval_hooks.dashboard import DEFAULT_MAX_MEDIA_KB, render_dashboard
from ifpo.eval_hooks.reports import (
    Comparison,
    default_pair,
    discover,
    find_checkpoint,
    flips,
    format_comparison,
    load_item_texts,
    model_of,
    same_base_model,
    to_csv,
    to_json,
)
from ifpo.verifiers.io import dumps, refuse_overwriting_inputs, write_text_atomic


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="ifpo compare", description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="+", metavar="RUN_DIR", help="run folders (training output_dir or ifpo evaluate --out)")
    parser.add_argument("--out", required=True, help="dashboard HTML to write")
    parser.add_argument("--a", help="checkpoint A (before): RUN@STEP, RUN@first|last, RUN, STEP, or a folder")
    parser.add_argument("--b", help="checkpoint B (after), same forms")
    parser.add_argument("--csv", help="also write one row per checkpoint (metrics, CPR per dimension and type) as CSV")
    parser.add_argument("--json", help="also write the comparison (metrics, flips A->B, skipped) as JSON")
    parser.add_argument("--items", nargs="*", default=None,
                        help="items JSONL for instructions in the browser (default: the files the evaluations name)")
    parser.add_argument("--title", default="ifpo checkpoint comparison", help="page title")
    parser.add_argument("--max-chars", type=int, default=4000, help="responses longer than this are clipped in the page")
    parser.add_argument("--max-media-kb", type=int, default=DEFAULT_MAX_MEDIA_KB,
                        help="cap on the embedded image/video-frame thumbnails in total (0: none)")
    parser.add_argument("--wandb", action="store_true",
                        help="also log the comparison as wandb tables (project: $WANDB_PROJECT or 'ifpo')")
    parser.add_argument("--wandb-run", metavar="RUN_ID",
                        help="with --wandb: add the tables to this existing run (e.g. the training run, whose id is "
                             "the suffix of its wandb/run-* folder) instead of a new one")
    return parser


def log_wandb(comparison: Comparison, pair, run_id: str | None = None) -> str:
    """Log the checkpoint table and the flips of the chosen pair (with both responses) to a new wandb run, or to
    the existing run ``run_id`` (resumed, so the tables sit beside that run's curves); returns its name."""
    import os

    import wandb

    data = to_json(comparison, pair)
    if run_id:
        run = wandb.init(project=os.environ.get("WANDB_PROJECT") or "ifpo", id=run_id, resume="allow")
    else:
        run = wandb.init(project=os.environ.get("WANDB_PROJECT") or "ifpo", job_type="ifpo-compare",
                         config={"runs": comparison.runs})
    try:
        cols = ["run", "step", "n_items", "ipr", "cpr_micro", "cpr_macro", "tcsr", "tisr", "unjudged_constraints"]
        table = wandb.Table(columns=cols, data=[[c.get(k) for k in cols] for c in data["checkpoints"]])
        logs = {"ifpo/checkpoints": table}
        if pair is not None:
            a, b = pair
            rows = [[kind, e["id"], ", ".join(e["changed"]), a.responses.get(e["id"]), b.responses.get(e["id"])]
                    for kind in ("regressions", "fixes") for e in data["flips"][kind]]
            logs["ifpo/flips"] = wandb.Table(
                columns=["kind", "item", "changed constraints", f"response A ({a.label})", f"response B ({b.label})"],
                data=rows)
        run.log(logs)
        return run.name or run.id
    finally:
        run.finish()


def cli_main(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    if args.max_chars <= 0:
        print("ifpo compare: --max-chars must be > 0", file=sys.stderr)
        return 2
    comparison = discover(args.runs)
    for s in comparison.skipped:
        print(f"ifpo compare: skipped {s.path}: {s.reason}", file=sys.stderr)
    for c in comparison.checkpoints:
        for w in c.warnings:
            print(f"ifpo compare: WARNING: {w}", file=sys.stderr)
    if not comparison.checkpoints:
        print("ifpo compare: no readable report.json in " + ", ".join(args.runs), file=sys.stderr)
        return 2
    try:
        if args.a or args.b:
            a = find_checkpoint(comparison, args.a) if args.a else comparison.checkpoints[0]
            b = find_checkpoint(comparison, args.b) if args.b else comparison.checkpoints[-1]
            pair = (a, b)
        else:
            pair = default_pair(comparison)
    except ValueError as exc:
        print(f"ifpo compare: {exc}", file=sys.stderr)
        return 2
    item_files = args.items
    if item_files is None:
        item_files = sorted({str((c.report.get("evaluation") or {}).get("items")) for c in comparison.checkpoints
                             if (c.report.get("evaluation") or {}).get("items")})
    else:
        for f in item_files:
            if not Path(f).is_file():
                print(f"ifpo compare: --items {f}: not a file; its instructions are left out of the page",
                      file=sys.stderr)
    outputs = [x for x in (args.out, args.csv, args.json) if x]
    if len({os.path.realpath(x) for x in outputs}) < len(outputs):
        print("ifpo compare: --out, --csv and --json must be different files", file=sys.stderr)
        return 2
    # Reports are replaced atomically: an output naming one of the inputs would swap it for the page.
    inputs = {f"--items file {f}": f for f in item_files}
    for c in comparison.checkpoints:
        inputs.update({f"{c.label}'s {name}": c.path / name for name in (REPORT, RESPONSES, VERDICTS)})
    for x in outputs:
        refuse_overwriting_inputs(x, inputs)
    texts = load_item_texts(item_files)
    if args.max_media_kb < 0:
        print("ifpo compare: --max-media-kb must be >= 0", file=sys.stderr)
        return 2
    page = render_dashboard(comparison, pair, texts, title=args.title, max_chars=args.max_chars,
                            max_media_kb=args.max_media_kb)
    out = Path(args.out)
    write_text_atomic(out, page)
    print(format_comparison(comparison, pair))
    if args.csv:
        write_text_atomic(Path(args.csv), to_csv(comparison))
        print(f"wrote {args.csv}")
    if args.json:
        write_text_atomic(Path(args.json), dumps(to_json(comparison, pair), indent=2) + "\n")
        print(f"wrote {args.json}")
    if args.wandb or args.wandb_run:
        name = log_wandb(comparison, pair, args.wandb_run)
        print(f"logged wandb run {name}")
    if pair is not None:
        f = flips(*pair)
        if same_base_model(*pair):
            print(f"{len(f['regressions'])} regression(s), {len(f['fixes'])} fix(es) between {pair[0].label} and "
                  f"{pair[1].label}")
        else:
            # Not one model before and after: what differs is not a regression of anything.
            models = " vs ".join(str((model_of(c) or ("unrecorded",))[0]) for c in pair)
            print(f"{len(f['regressions'])} item(s) pass only in {pair[0].label}, {len(f['fixes'])} only in "
                  f"{pair[1].label} (different or unrecorded base models: {models}; not regressions)")
    elif len(comparison.checkpoints) > 1:
        print("no pair compared: no run has two checkpoints and the evaluations record different base models; "
              "choose them with --a RUN@STEP --b RUN@STEP")
    print(f"dashboard: {out.resolve()}")
    damaged = sum(len(c.warnings) for c in comparison.checkpoints)
    if comparison.skipped or damaged:
        print(f"ifpo compare: exit 1: {len(comparison.skipped)} report(s) skipped, {damaged} warning(s) (named above)",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(cli_main(sys.argv[1:]))
