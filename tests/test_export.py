"""``ifpo export``: HF datasets with the media inside, LLaMA-Factory and ms-swift layouts, checked against their formats.

The schema checks below are written from the tools' documentation: LLaMA-Factory's ``data/README.md``
(sharegpt preference datasets: ``conversations`` with human turns at odd positions ending on a human
turn, ``chosen``/``rejected`` gpt messages, ``system``/``images``/``videos`` columns named in
``dataset_info.json`` with ``formatting: sharegpt`` and ``ranking: true``; ``<image>``/``<video>``
markers, one per media file, paths relative to ``media_dir``) and ms-swift's custom-dataset page
(``messages`` with an optional system message first and the chosen answer last,
``rejected_response``, ``images``/``videos`` path lists, ``<image>``/``<video>`` markers).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from ifpo.data_builders.export import ExportError, budget_flags, export, read_budget
from ifpo.train.sample_pairs import build_sample_pairs

REPO = Path(__file__).resolve().parent.parent
TINY_RECIPE = REPO / "recipes" / "tiny.yaml"
# One OpenMP thread: a 2-thread pool on 2 shared cores waits on the busy one (tiny DPO steps 3-4x slower, measured).
ENV = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1",
       "TOKENIZERS_PARALLELISM": "false", "PYTHONPATH": str(REPO), "OMP_NUM_THREADS": "1"}


@pytest.fixture(scope="module")
def pairs_dir(tmp_path_factory):
    return build_sample_pairs(tmp_path_factory.mktemp("pairs") / "sample_pairs")


def source_pairs(pairs_dir: Path) -> list[dict]:
    return [json.loads(line) for line in (pairs_dir / "pairs.jsonl").read_text().splitlines()]


# --- schema checks from the tools' documented formats ----------------------------------------------


def check_llamafactory(out: Path, name: str) -> list[dict]:
    info = json.loads((out / "dataset_info.json").read_text())
    entry = info[name]
    assert entry["formatting"] == "sharegpt" and entry["ranking"] is True
    records = json.loads((out / entry["file_name"]).read_text())
    assert isinstance(records, list) and records
    columns = entry["columns"]
    assert set(columns) <= {"messages", "chosen", "rejected", "system", "tools", "images", "videos", "audios"}
    args = yaml.safe_load((out / "llamafactory_args.yaml").read_text())
    media_dir = Path(args["media_dir"])
    for r in records:
        for column in columns.values():
            assert column in r, column
        conv = r[columns["messages"]]
        assert len(conv) % 2 == 1, "a preference conversation ends on a human turn"
        for i, turn in enumerate(conv):
            assert set(turn) == {"from", "value"} and isinstance(turn["value"], str)
            assert turn["from"] == ("human" if i % 2 == 0 else "gpt")
        for key in ("chosen", "rejected"):
            answer = r[columns[key]]
            assert answer["from"] == "gpt" and isinstance(answer["value"], str) and answer["value"]
        assert isinstance(r[columns["system"]], str)
        text = "".join(t["value"] for t in conv)
        for marker, key in (("<image>", "images"), ("<video>", "videos")):
            paths = r[columns[key]]
            assert text.count(marker) == len(paths)
            assert all((media_dir / p).is_file() for p in paths)
    return records


def check_swift(out: Path) -> list[dict]:
    records = [json.loads(line) for line in (out / "train.jsonl").read_text().splitlines()]
    assert records
    for r in records:
        messages = r["messages"]
        roles = [m["role"] for m in messages]
        assert set(roles) <= {"system", "user", "assistant"} and "system" not in roles[1:]
        assert roles[-1] == "assistant" and roles[-2] == "user"
        assert all(isinstance(m["content"], str) for m in messages)
        assert isinstance(r["rejected_response"], str) and r["rejected_response"]
        text = "".join(m["content"] for m in messages)
        for marker, key in (("<image>", "images"), ("<video>", "videos")):
            assert text.count(marker) == len(r[key])
            assert all(Path(p).is_absolute() and Path(p).is_file() for p in r[key])
    return records


# --- layouts --------------------------------------------------------------------------------------


@pytest.mark.parametrize("media", ["copy", "absolute"])
def test_llamafactory_layout_matches_its_documented_format(pairs_dir, tmp_path, media):
    out = tmp_path / "lf"
    export(pairs_dir, "llamafactory", out, media=media, recipe=TINY_RECIPE, name="vcif")
    records = check_llamafactory(out, "vcif")
    source = source_pairs(pairs_dir)
    assert len(records) == len(source)
    with_system = [(r, s) for r, s in zip(records, source) if s["prompt"][0]["role"] == "system"]
    assert with_system and all(r["system"] == s["prompt"][0]["content"][0]["text"] if isinstance(
        s["prompt"][0]["content"], list) else s["prompt"][0]["content"] for r, s in with_system)
    assert all(r["kind"] == s["meta"]["kind"] and r["item_id"] == s["meta"]["item_id"] for r, s in zip(records, source))
    assert json.loads(records[0]["chosen_verdicts"]) == source[0]["meta"]["chosen_verdicts"]
    copied = list((out / "media").iterdir()) if (out / "media").is_dir() else []
    assert bool(copied) == (media == "copy")
    args = yaml.safe_load((out / "llamafactory_args.yaml").read_text())
    assert args["video_fps"] == 2.0 and args["video_maxlen"] == 16 and args["image_max_pixels"] == 16384
    assert args["template"] == "qwen3_vl_nothink"  # qwen3_vl would put an empty think block before each answer


def test_swift_layout_matches_its_documented_format(pairs_dir, tmp_path):
    out = tmp_path / "swift"
    export(pairs_dir, "ms-swift", out, recipe=TINY_RECIPE)
    records = check_swift(out)
    source = source_pairs(pairs_dir)
    for r, s in zip(records, source):
        assert r["messages"][-1]["content"] == s["chosen"][0]["content"][0]["text"]
        assert r["rejected_response"] == s["rejected"][0]["content"][0]["text"]
        assert (r["messages"][0]["role"] == "system") == (s["prompt"][0]["role"] == "system")
        assert r["kind"] == s["meta"]["kind"]
    env = dict(line.removeprefix("export ").split("=") for line in (out / "swift_env.sh").read_text().splitlines()
               if line.startswith("export "))
    assert env["FPS"] == "2.0" and env["FPS_MAX_FRAMES"] == "16" and env["IMAGE_MAX_TOKEN_NUM"] == "16"  # 16384 / 32^2
    assert "--model_type qwen3_vl" in (out / "swift_env.sh").read_text()


def test_budget_names_per_tool_and_what_they_cannot_express(tmp_path):
    recipe = tmp_path / "r.yaml"
    recipe.write_text("video_fps: 0.5\nvideo_max_side: 720\nvideo_max_frames: 64\nlearning_rate: 1e-5\n")
    flags = budget_flags(read_budget(recipe))
    assert flags["llamafactory"]["video_fps"] == 0.5 and flags["llamafactory"]["video_maxlen"] == 64
    assert flags["ms-swift_env"]["FPS"] == 0.5 and flags["ms-swift_env"]["FPS_MAX_FRAMES"] == 64
    assert "video_max_side" in flags["not_expressible"]["llamafactory"]
    assert flags["not_expressible"]["ms-swift"] == ["video_max_side"]


# What ms-swift 4.6 reads for Qwen3-VL with qwen-vl-utils 0.0.14 (model/models/qwen.py patch_qwen_vl_utils sets
# only the constants vision_process has; Qwen3VLLoader counts 32x32-pixel tokens; MODEL_SEQ_LEN caps the video
# total): every key written is one of these, and ifpo's default budget is qwen-vl-utils' own defaults.
SWIFT_READS = {"IMAGE_MAX_TOKEN_NUM", "IMAGE_MIN_TOKEN_NUM", "VIDEO_MAX_TOKEN_NUM", "VIDEO_MIN_TOKEN_NUM", "FPS",
               "FPS_MIN_FRAMES", "FPS_MAX_FRAMES", "MODEL_SEQ_LEN", "MAX_RATIO", "FRAME_FACTOR", "SPATIAL_MERGE_SIZE"}


@pytest.mark.parametrize(
    "recipe, env, inexact",
    [
        ("", {"IMAGE_MAX_TOKEN_NUM": 900, "IMAGE_MIN_TOKEN_NUM": 4, "VIDEO_MAX_TOKEN_NUM": 768, "VIDEO_MIN_TOKEN_NUM": 128,
              "MODEL_SEQ_LEN": 128000, "FPS": 2.0, "FPS_MIN_FRAMES": 4, "FPS_MAX_FRAMES": 768}, []),
        ("image_max_pixels: 50000\nvideo_total_pixels: 1000000\n", {"IMAGE_MAX_TOKEN_NUM": 48, "MODEL_SEQ_LEN": 1086},
         ["image_max_pixels (rounded to whole 1024-pixel tokens)"]),
    ],
)
def test_swift_env_keys_are_the_ones_ms_swift_reads(tmp_path, recipe, env, inexact):
    path = tmp_path / "r.yaml"
    path.write_text(recipe or "lora_r: 8\n")
    flags = budget_flags(read_budget(path))
    assert set(flags["ms-swift_env"]) <= SWIFT_READS and "VIDEO_TOTAL_PIXELS" not in flags["ms-swift_env"]
    assert {k: flags["ms-swift_env"][k] for k in env} == env
    assert flags["not_expressible"]["ms-swift"] == inexact
    # MODEL_SEQ_LEN * 32^2 * 0.9 covers the total pixels asked for, by less than one token's worth
    total = flags["ms-swift_env"]["MODEL_SEQ_LEN"] * 1024 * 0.9
    assert flags["ifpo"]["video_total_pixels"] <= total < flags["ifpo"]["video_total_pixels"] + 1024


def _with_marker(pairs_dir: Path, tmp_path: Path, text: str) -> tuple[Path, list[dict]]:
    """A copy of the pairs whose first text-only and first image pair carry ``text`` in the user turn."""
    import shutil

    work = tmp_path / "marked"
    shutil.copytree(pairs_dir, work)
    rows = source_pairs(work)
    targets = [next(i for i, r in enumerate(rows) if not r.get("images") and not r.get("videos")),
               next(i for i, r in enumerate(rows) if r.get("images"))]
    for i in targets:
        content = rows[i]["prompt"][-1]["content"]
        if isinstance(content, str):
            rows[i]["prompt"][-1]["content"] = content + text
        else:
            content.append({"type": "text", "text": text})
    (work / "pairs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return work, [rows[i] for i in targets]


@pytest.mark.parametrize("to, left", [("llamafactory", 2), ("ms-swift", 1)])
def test_a_literal_media_marker_in_text_is_left_out_with_a_named_warning(pairs_dir, tmp_path, to, left):
    """LLaMA-Factory refuses its whole load on a marker count mismatch; ms-swift would put the pair's image at the
    literal marker (a text-only pair keeps it as text there)."""
    from ifpo.data_builders.export import MediaMarkerInText

    work, marked = _with_marker(pairs_dir, tmp_path, " Explain what the HTML tag <image> does.")
    with pytest.warns(MediaMarkerInText) as caught:
        summary = export(work, to, tmp_path / "out")
    assert len(summary["left_out"]) == left == len(caught)
    assert summary["pairs"] == len(source_pairs(work)) - left
    assert all("literal <image>" in line for line in summary["left_out"])
    if to == "llamafactory":
        check_llamafactory(tmp_path / "out", "ifpo_pairs")
    else:  # the text-only pair stays: with no image to misplace, ms-swift keeps a literal <image> as text
        kept = [json.loads(line) for line in (tmp_path / "out" / "train.jsonl").read_text().splitlines()]
        literal = [r for r in kept if not r["images"] and "HTML tag <image>" in r["messages"][-2]["content"]]
        assert [r["item_id"] for r in literal] == [marked[0]["meta"]["item_id"]]
    summary = export(work, "hf", tmp_path / "hf")  # the HF layout has no markers in text: nothing is left out
    assert summary["left_out"] == [] and summary["pairs"] == len(source_pairs(work))


def test_cli_names_each_left_out_pair_and_exits_1(pairs_dir, tmp_path):
    work, _ = _with_marker(pairs_dir, tmp_path, " a <video> tag")
    done = subprocess.run([sys.executable, "-m", "ifpo.cli", "export", str(work), "--to", "llamafactory", "--out",
                           str(tmp_path / "o")], env=ENV, capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, done.stderr
    assert done.stderr.count("holds a literal <video>") == 2 and "left out" in done.stderr


def test_hf_export_carries_the_media_bytes(pairs_dir, tmp_path):
    from datasets import Image, List, Video, load_dataset

    out = tmp_path / "hf"
    export(pairs_dir, "hf", out, recipe=TINY_RECIPE)
    ds = load_dataset(str(out), split="train")
    assert isinstance(ds.features["images"], List) and isinstance(ds.features["images"].feature, Image)
    assert isinstance(ds.features["videos"].feature, Video)
    # The bytes are in the parquet: moving the folder elsewhere (or the hub) loses nothing.
    raw = ds.cast_column("images", List(Image(decode=False))).cast_column("videos", List(Video(decode=False)))
    source = source_pairs(pairs_dir)
    root = pairs_dir / json.loads((pairs_dir / "manifest.json").read_text())["media_root"]
    for row, s in zip(raw, source):
        for key in ("images", "videos"):
            assert [e["bytes"] for e in row[key]] == [(root / p).read_bytes() for p in s[key]]
        assert row["kind"] == s["meta"]["kind"]
    image_row = next(r for r in ds.select_columns(["images"]) if r["images"])  # decoding videos needs torchcodec
    assert image_row["images"][0].size[0] > 0  # decoded PIL image
    assert json.loads((out / "media_budget.json").read_text())["ifpo"]["video_max_frames"] == 16
    card = (out / "README.md").read_text()
    assert "configs:" in card and "from the recipe `tiny.yaml`" in card
    assert "records no model that saw the media" in card  # the sample pairs: references and corruptions


def test_hf_export_streams_size_bounded_shards(pairs_dir, tmp_path):
    """Small shards and row groups: several files, each row group within its media bound, the same rows back."""
    import pyarrow.parquet as pq
    from datasets import Image, List, Video, load_dataset

    out = tmp_path / "hf"
    summary = export(pairs_dir, "hf", out, max_shard_mb=1)
    shards = sorted((out / "data").glob("train-*.parquet"))
    assert [f"data/{p.name}" for p in shards] == [f for f in summary["files"] if f.startswith("data/")]
    assert all(p.name.endswith(f"-of-{len(shards):05d}.parquet") for p in shards)
    assert not list((out / "data").glob(".*tmp"))
    ds = load_dataset(str(out), split="train")
    raw = ds.cast_column("images", List(Image(decode=False))).cast_column("videos", List(Video(decode=False)))
    source = source_pairs(pairs_dir)
    root = pairs_dir / json.loads((pairs_dir / "manifest.json").read_text())["media_root"]
    assert [r["kind"] for r in raw] == [s["meta"]["kind"] for s in source]
    assert all([e["bytes"] for e in r["videos"]] == [(root / p).read_bytes() for p in s["videos"]]
               for r, s in zip(raw, source))
    # A row group closes once its media pass the bound: none holds more than the bound plus one row's media.
    from ifpo.data_builders import export as ex

    out2 = tmp_path / "hf2"
    rows = [sum(x.stat().st_size for x in p.images + p.videos) for p in ex.read_pairs(pairs_dir)]
    small, biggest_row = sum(rows) // 10, max(rows)  # about ten row groups, three to a shard
    shards2 = ex.write_hf_shards(ex.read_pairs(pairs_dir), out2, max_shard_bytes=3 * small, row_group_bytes=small)
    groups = [pq.ParquetFile(out2 / s).metadata for s in shards2]
    assert len(shards2) > 1 and sum(m.num_rows for m in groups) == len(source_pairs(pairs_dir))
    for m in groups:
        for g in range(m.num_row_groups):
            assert m.row_group(g).total_byte_size < small + biggest_row + 100_000  # + the text columns


def test_hf_card_states_the_budget_the_answers_were_generated_with(pairs_dir, tmp_path):
    import shutil

    work = tmp_path / "p"
    shutil.copytree(pairs_dir, work)
    manifest = json.loads((work / "manifest.json").read_text())
    # As `ifpo build-pairs` records the generation config of the policy model that wrote negatives.
    manifest.setdefault("config", {})["policy"] = {"backend": "transformers", "model": "m", "media": {"video_fps": 0.5}}
    (work / "manifest.json").write_text(json.dumps(manifest))
    export(work, "hf", tmp_path / "hf")
    card = (tmp_path / "hf" / "README.md").read_text()
    built = json.loads(card.split("by generating role):\n\n```json\n")[1].split("```")[0])
    assert built["policy"]["video_fps"] == 0.5 and built["policy"]["video_max_frames"] == 768
    assert "ifpo's defaults: give `--recipe` for yours" in card


def test_ifpo_reads_the_hf_export_with_its_media(pairs_dir, tmp_path):
    from ifpo.train.pairs import load_pairs

    out = tmp_path / "hf"
    export(pairs_dir, "hf", out)
    direct = load_pairs(str(pairs_dir), output_dir=tmp_path / "o")
    via_hf = load_pairs(f"hf:{out}", output_dir=tmp_path / "o")
    assert via_hf.dataset["pair_id"] == direct.dataset["pair_id"]
    assert via_hf.dataset["kind"] == direct.dataset["kind"]
    for a, b in zip(direct.dataset, via_hf.dataset):
        assert [Path(p).read_bytes() for p in a["videos"] + a["images"]] == \
            [Path(p).read_bytes() for p in b["videos"] + b["images"]]
    # Content-addressed files: a second load gives the same fingerprint (the reference cache key).
    assert load_pairs(f"hf:{out}", output_dir=tmp_path / "o").fingerprint == via_hf.fingerprint


def test_push_to_hub_pushes_data_and_budget(pairs_dir, tmp_path, monkeypatch):
    """The folder as written (shards with the media, card, budget), not a second in-memory copy of the dataset."""
    import fnmatch

    import huggingface_hub

    created, uploaded = [], []
    monkeypatch.setattr(huggingface_hub.HfApi, "create_repo", lambda self, repo, **kw: created.append((repo, kw)))

    def upload_folder(self, folder_path, repo_id, allow_patterns, **kw):
        root = Path(folder_path)
        uploaded.extend(sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file() and any(
            fnmatch.fnmatch(str(p.relative_to(root)), pattern) for pattern in allow_patterns)))

    monkeypatch.setattr(huggingface_hub.HfApi, "upload_folder", upload_folder)
    export(pairs_dir, "hf", tmp_path / "hf", push_to_hub="me/pairs", private=True)
    assert created == [("me/pairs", {"repo_type": "dataset", "private": True, "exist_ok": True})]
    assert uploaded == ["README.md", "data/train-00000-of-00001.parquet", "media_budget.json"]


# --- bad input -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "mutate, to, match",
    [
        (None, "llama", "did you mean 'llamafactory'"),
        (None, "ms-swift --push", None),
        (lambda d: (d / "pairs.jsonl").write_text('{"prompt": 1}\n'), "hf", r"pairs\.jsonl:1: prompt"),
        (lambda d: (d / "pairs.jsonl").write_text("not json\n"), "hf", r"pairs\.jsonl:1"),
        (lambda d: (d / "pairs.jsonl").unlink(), "hf", "no pairs.jsonl"),
        (lambda d: (d / "pairs.jsonl").write_text(json.dumps({
            "prompt": [{"role": "user", "content": [{"type": "image"}, {"type": "text", "text": "x"}]}],
            "chosen": [{"role": "assistant", "content": "a"}], "rejected": [{"role": "assistant", "content": "b"}],
            "images": ["../../etc/passwd"]}) + "\n"), "hf", r"pairs\.jsonl:1: images"),
    ],
)
def test_bad_input_is_one_line(pairs_dir, tmp_path, mutate, to, match):
    import shutil

    work = tmp_path / "p"
    shutil.copytree(pairs_dir, work)
    if mutate is not None:
        mutate(work)
    if match is None:  # --push-to-hub with a non-hf layout
        with pytest.raises(ExportError, match="--push-to-hub needs --to hf"):
            export(work, "ms-swift", tmp_path / "o", push_to_hub="me/x")
        return
    with pytest.raises(ExportError, match=match):
        export(work, to, tmp_path / "o")


def test_cli_reports_errors_without_a_traceback(tmp_path):
    done = subprocess.run([sys.executable, "-m", "ifpo.cli", "export", str(tmp_path / "nope"), "--to", "hf", "--out",
                           str(tmp_path / "o")], env=ENV, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "ifpo export: error:" in done.stderr and "not a pairs folder" in done.stderr


# --- round trips: trainers on the HF export --------------------------------------------------------


@pytest.mark.slow
def test_ifpo_dpo_trains_on_the_hf_export(pairs_dir, tmp_path):
    out = tmp_path / "hf"
    export(pairs_dir, "hf", out, recipe=TINY_RECIPE)
    run = tmp_path / "run"
    done = subprocess.run(
        [sys.executable, str(REPO / "train" / "dpo.py"), str(TINY_RECIPE), "--pairs", f"hf:{out}", "--output_dir",
         str(run), "--max_steps", "1", "--eval_pairs", "null", "--save_strategy", "no", "--logging_steps", "1",
         # every row is still read and its media materialised; the first 8 train (one step of the recipe's 8):
         # reference log-probs and lengths of all 71 took most of this test
         "--max_pairs", "8"],
        cwd=tmp_path, env=ENV, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    logs = [json.loads(line) for line in (run / "log_history.jsonl").read_text().splitlines()]
    assert any("loss" in x for x in logs)
    manifest = json.loads((run / "run_manifest.json").read_text())
    assert manifest["data"]["source"] == f"hf:{out}"


@pytest.mark.slow
def test_plain_trl_dpo_trains_on_the_hf_export_image_pairs(pairs_dir, tmp_path):
    """What a TRL user does with the export: load it, keep the image pairs, hand it to DPOTrainer."""
    import torch
    from datasets import Image, List, Video, load_dataset
    from ifpo.train.tiny_model import build_tiny_model
    from peft import LoraConfig
    from transformers import AutoModelForImageTextToText, AutoProcessor
    from trl import DPOConfig, DPOTrainer

    out = tmp_path / "hf"
    export(pairs_dir, "hf", out)
    ds = load_dataset(str(out), split="train")
    # Which rows are image-only, read from the undecoded columns (decoding videos would need torchcodec).
    media = ds.select_columns(["images", "videos"]).cast_column("images", List(Image(decode=False)))
    media = media.cast_column("videos", List(Video(decode=False)))
    keep = [i for i, r in enumerate(media) if r["images"] and not r["videos"]]
    images = ds.select(keep).select_columns(["prompt", "chosen", "rejected", "images"])
    assert len(images) >= 4
    tiny = build_tiny_model(tmp_path / "tiny", seed=0)
    torch.manual_seed(0)
    model = AutoModelForImageTextToText.from_pretrained(tiny)
    processor = AutoProcessor.from_pretrained(tiny)
    args = DPOConfig(output_dir=str(tmp_path / "trl"), max_steps=1, per_device_train_batch_size=2, logging_steps=1,
                     use_cpu=True, bf16=False, report_to=[], activation_checkpointing=False, max_length=None,
                     save_strategy="no", seed=0)
    trainer = DPOTrainer(model=model, args=args, train_dataset=images.select(range(4)), processing_class=processor,
                         peft_config=LoraConfig(r=4, lora_alpha=8, target_modules=["q_proj", "v_proj"]))
    trainer.train()
    losses = [x["loss"] for x in trainer.state.log_history if "loss" in x]
    assert losses and all(torch.isfinite(torch.tensor(v)) for v in losses)
