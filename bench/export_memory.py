"""Peak memory of ``ifpo export --to hf`` as the media grow: the streamed shards against the in-memory dataset.

    python bench/export_memory.py [--pairs 40] [--mb-per-pair 5] [--scales 1 10] [--memory-max-scale 1]

Builds a pairs folder of ``pairs x scale`` video pairs, each with its own ``mb-per-pair`` MB media file
(random bytes: the export copies bytes, it does not decode), then exports it in a fresh process per
run and prints that process's peak RSS (``ru_maxrss``), its RSS after the imports, and the media size.
``stream`` is ``export(..., "hf")`` (row groups of ``ROW_GROUP_BYTES``, shards of ``MAX_SHARD_MB``);
``memory`` is the former path, ``to_hf_dataset(pairs).to_parquet(...)`` (every byte in memory at once),
run only up to ``--memory-max-scale`` (its peak is several times the media: keep it within the machine).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

CHILD = r"""
import resource, sys, json
from pathlib import Path
from ifpo.data_builders import export as ex
import datasets, pyarrow  # the imports both paths pay, before the baseline reading
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
pairs_dir, out, mode = sys.argv[1:4]
if mode == "stream":
    ex.export(pairs_dir, "hf", out)
else:
    Path(out, "data").mkdir(parents=True, exist_ok=True)
    ex.to_hf_dataset(ex.read_pairs(pairs_dir)).to_parquet(str(Path(out) / ex.HF_DATA_FILE))
print(json.dumps({"base_kb": base, "peak_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))
"""


def make_pairs(folder: Path, n: int, size: int) -> int:
    """``n`` video pairs, each with its own ``size``-byte file; returns the media bytes."""
    (folder / "media").mkdir(parents=True)
    rows = []
    for i in range(n):
        with open(folder / "media" / f"v{i}.mp4", "wb") as fh:
            left = size
            while left:
                chunk = min(left, 1 << 20)
                fh.write(os.urandom(chunk))
                left -= chunk
        rows.append({
            "prompt": [{"role": "user", "content": [{"type": "video"}, {"type": "text", "text": f"Describe clip {i}."}]}],
            "chosen": [{"role": "assistant", "content": [{"type": "text", "text": "A fine answer."}]}],
            "rejected": [{"role": "assistant", "content": [{"type": "text", "text": "A worse answer."}]}],
            "videos": [f"media/v{i}.mp4"],
            "meta": {"item_id": f"clip{i}", "kind": "corrupted"},
        })
    (folder / "pairs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    (folder / "manifest.json").write_text(json.dumps({"media_root": "."}), encoding="utf-8")
    return n * size


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=40, help="pairs at scale 1")
    parser.add_argument("--mb-per-pair", type=float, default=5.0, help="media MB per pair")
    parser.add_argument("--scales", type=int, nargs="+", default=[1, 10])
    parser.add_argument("--memory-max-scale", type=int, default=1, help="largest scale the in-memory path runs at")
    args = parser.parse_args()
    env = {**os.environ, "PYTHONPATH": str(REPO), "HF_DATASETS_OFFLINE": "1", "OMP_NUM_THREADS": "1"}
    print(f"{'mode':<7} {'scale':>5} {'pairs':>6} {'media MB':>9} {'RSS after imports MB':>21} {'peak RSS MB':>12} "
          f"{'peak - imports MB':>18}")
    for scale in args.scales:
        with tempfile.TemporaryDirectory(prefix="ifpo-export-mem-") as tmp:
            pairs = Path(tmp) / "pairs"
            media = make_pairs(pairs, args.pairs * scale, int(args.mb_per_pair * (1 << 20)))
            for mode in ("memory", "stream"):
                if mode == "memory" and scale > args.memory_max_scale:
                    continue
                out = Path(tmp) / f"out-{mode}"
                done = subprocess.run([sys.executable, "-c", CHILD, str(pairs), str(out), mode], env=env,
                                      capture_output=True, text=True, check=False)
                if done.returncode:
                    print(f"{mode} at scale {scale} failed:\n{done.stderr[-2000:]}", file=sys.stderr)
                    continue
                rss = json.loads(done.stdout.strip().splitlines()[-1])
                base, peak = rss["base_kb"] / 1024, rss["peak_kb"] / 1024
                print(f"{mode:<7} {scale:>5} {args.pairs * scale:>6} {media / (1 << 20):>9.0f} {base:>21.0f} "
                      f"{peak:>12.0f} {peak - base:>18.0f}", flush=True)


if __name__ == "__main__":
    main()
