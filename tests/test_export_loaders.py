"""The exports read by the tools' own dataset loaders, each in its own cached venv (tests/engine_venvs.py).

- ms-swift 4.6.0: ``swift.dataset.load_dataset([train.jsonl], strict=True)`` (a bad row raises) gives one row
  per exported pair, the chosen answer last in ``messages``, ``rejected_response``, the media paths, and the
  number of ``<image>``/``<video>`` markers equal to the media of each row;
- LLaMA-Factory 0.9.5: ``get_dataset_list`` reads ``dataset_info.json`` and the sharegpt ranking converter
  ``get_dataset`` runs (``llamafactory.data.converter``) aligns every record: prompt turns, chosen/rejected,
  system, media resolved under ``media_dir``; and its template table registers ``qwen3_vl_nothink`` as a plain
  template (``qwen3_vl`` is a ``ReasoningTemplate``).

Venvs: ms-swift's is the one tests/test_engines.py uses (tests/test_engines_pkgs.py ``SWIFT``), so one build
serves both; LLaMA-Factory's gets ``llamafactory==0.9.5`` ``--no-deps`` beside what its data modules import
(pinned to its METADATA). The first build downloads torch-sized wheels (minutes); a test is skipped, with
pip's reason, where they cannot install.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from engine_venvs import ifpo_venv, run
from ifpo.train.sample_pairs import build_sample_pairs
from test_engines_pkgs import SWIFT

pytestmark = pytest.mark.slow

# llamafactory/data/{converter,parser,data_utils}.py, extras/{constants,misc}.py and hparams/data_args.py import
# these at their top; versions within llamafactory 0.9.5's own pins.
LLAMAFACTORY = (("torch==2.14.1", "transformers>=4.55,<=5.6.0", "datasets>=2.16,<=4.0.0", "peft>=0.18,<=0.18.1",
                 "accelerate<=1.11.0", "fsspec", "omegaconf", "pyyaml", "numpy", "packaging"), ("llamafactory==0.9.5",))


@pytest.fixture(scope="module")
def pairs_dir(tmp_path_factory):
    return build_sample_pairs(tmp_path_factory.mktemp("pairs") / "sample_pairs")


SWIFT_LOAD = r"""
import json, sys
from swift.dataset import load_dataset
train, _ = load_dataset([sys.argv[1]], strict=True)
rows = []
for row in train:
    rows.append({"messages": row["messages"], "rejected_response": row.get("rejected_response"),
                 "images": row.get("images"), "videos": row.get("videos")})
print(json.dumps(rows, default=str))
"""


def test_ms_swift_load_dataset_reads_every_exported_pair(pairs_dir, tmp_path):
    from ifpo.data_builders.export import export

    out = tmp_path / "swift"
    summary = export(pairs_dir, "ms-swift", out)
    python = ifpo_venv("ms-swift", *SWIFT)
    done = run(python, "-c", SWIFT_LOAD, str(out / "train.jsonl"), timeout=600)
    if done.returncode != 0 and "ModuleNotFoundError" in done.stderr:
        pytest.skip(f"ms-swift's dataset loader imports more than its venv holds: {done.stderr.strip()[-400:]}")
    assert done.returncode == 0, done.stderr[-4000:]
    rows = json.loads(done.stdout.strip().splitlines()[-1])
    exported = [json.loads(line) for line in (out / "train.jsonl").read_text().splitlines()]
    assert len(rows) == len(exported) == summary["pairs"]
    for row, source in zip(rows, exported):
        assert row["messages"][-1] == {"role": "assistant", "content": source["messages"][-1]["content"]} or (
            row["messages"][-1]["content"] == source["messages"][-1]["content"])
        assert row["rejected_response"] == source["rejected_response"]
        text = "".join(m["content"] for m in row["messages"] if isinstance(m.get("content"), str))
        for marker, key in (("<image>", "images"), ("<video>", "videos")):
            media = row[key] or []
            assert text.count(marker) == len(media) == len(source[key])


# llamafactory/data/__init__.py imports the collator and mm_plugin, and mm_plugin imports torchaudio, which has
# no build for torch 2.14: the packages are entered without their __init__ (LLaMA-Factory's own parser, converter
# and DataArguments modules run as they are), and the template table is read from data/template.py's source.
LF_LOAD = r"""
import ast, importlib.util, json, sys, types
from pathlib import Path

root = Path(importlib.util.find_spec("llamafactory").submodule_search_locations[0])
for name in ("llamafactory", "llamafactory.data", "llamafactory.hparams"):
    module = types.ModuleType(name)
    module.__path__ = [str(root.joinpath(*name.split(".")[1:]))]
    sys.modules[name] = module
from llamafactory.data.converter import get_dataset_converter
from llamafactory.data.parser import get_dataset_list
from llamafactory.hparams.data_args import DataArguments

args = json.loads(sys.argv[1])
data_args = DataArguments(dataset=args["dataset"], dataset_dir=args["dataset_dir"], media_dir=args["media_dir"],
                          template=args["template"])
(attr,) = get_dataset_list([args["dataset"]], args["dataset_dir"])
convert = get_dataset_converter(attr.formatting, attr, data_args)
records = json.loads(Path(args["dataset_dir"], attr.dataset_name).read_text())
templates = {}
for node in ast.walk(ast.parse((root / "data" / "template.py").read_text())):
    if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "register_template":
        kw = {k.arg: k.value for k in node.keywords}
        if "name" in kw and isinstance(kw["name"], ast.Constant):
            cls = kw.get("template_class")
            templates[kw["name"].value] = cls.id if isinstance(cls, ast.Name) else "Template"
print(json.dumps({"rows": [convert(r) for r in records], "template_class": templates.get(args["template"]),
                  "reasoning_class": templates.get("qwen3_vl")}, default=str))
"""


def test_llamafactory_converter_reads_every_exported_pair(pairs_dir, tmp_path):
    import yaml
    from ifpo.data_builders.export import export

    out = tmp_path / "lf"
    summary = export(pairs_dir, "llamafactory", out)
    args = yaml.safe_load((out / "llamafactory_args.yaml").read_text())
    python = ifpo_venv("llamafactory", *LLAMAFACTORY)
    done = run(python, "-c", LF_LOAD, json.dumps(args), timeout=600)
    if done.returncode != 0 and "ModuleNotFoundError" in done.stderr:
        pytest.skip(f"LLaMA-Factory's data modules import more than its venv holds: {done.stderr.strip()[-400:]}")
    assert done.returncode == 0, done.stderr[-4000:]
    data = json.loads(done.stdout.strip().splitlines()[-1])
    assert data["template_class"] == "Template" and data["reasoning_class"] == "ReasoningTemplate"
    rows = data["rows"]
    assert len(rows) == summary["pairs"]
    exported = json.loads((out / "train.json").read_text())
    for row, source in zip(rows, exported):
        # Converted rows: _prompt (turns), _response (chosen then rejected), _system, _images/_videos resolved.
        assert [t["content"] for t in row["_prompt"]] == [t["value"] for t in source["conversations"]]
        assert [t["content"] for t in row["_response"]] == [source["chosen"]["value"], source["rejected"]["value"]]
        assert row["_system"] == source["system"]
        text = "".join(t["content"] for t in row["_prompt"] + row["_response"])
        for marker, key in (("<image>", "_images"), ("<video>", "_videos")):
            media = row[key] or []
            assert text.count(marker) == len(media) and all(Path(p).is_file() for p in media)


if __name__ == "__main__":  # build the venvs ahead of a test run
    for name, pkgs in (("ms-swift", SWIFT), ("llamafactory", LLAMAFACTORY)):
        print(name, ifpo_venv(name, *pkgs), file=sys.stderr)
