"""``ifpo export --to verl`` and the adapters in this venv (verl's own code reading them: tests/test_engines.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from ifpo.verifiers.checklist import ChecklistEvaluator
from ifpo.verifiers.plugins import ifpo_openrlhf, ifpo_swift, ifpo_trl, ifpo_verl
from ifpo.verifiers.reward_adapters import AdapterSettings, adapter
from ifpo.verifiers.rewards import RewardSpec, reward_values

from ifpo.cli import main as ifpo_main

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "sample" / "items.jsonl"
ITEMS = [json.loads(line) for line in SAMPLE.read_text().splitlines() if line.strip()]


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    out = tmp_path_factory.mktemp("verl")
    assert ifpo_main(["export", str(SAMPLE), "--to", "verl", "--out", str(out)]) == 0
    return pq.read_table(out / "train.parquet").to_pylist(), out


def test_verl_rows_carry_the_item_prompt_and_media(exported):
    rows, out = exported
    assert len(rows) == len(ITEMS)
    for row, item in zip(rows, ITEMS):
        assert json.loads(row["reward_model"]["ground_truth"]) == item
        assert row["extra_info"]["item_id"] == item["id"] and row["data_source"] == f"ifpo/{item['source']}"
        user = row["prompt"][-1]
        assert user["role"] == "user" and user["content"].endswith(item["instruction"])
        media = item.get("media") or {}
        # verl's RLHFDataset pairs placeholders with the media columns in order, and asserts equal counts
        assert user["content"].count("<image>") == len(row["images"]) == len(media.get("images") or [])
        assert user["content"].count("<video>") == len(row["videos"]) == len(media.get("videos") or [])
        for entry in row["images"] + row["videos"]:
            path = Path(entry.get("image") or entry.get("video"))
            assert path.is_absolute() and path.is_file() and out in path.parents
        if item.get("system"):
            assert row["prompt"][0] == {"role": "system", "content": item["system"]}


def test_verl_compute_score_equals_in_process_rewards(exported):
    rows, _ = exported
    for row, item in list(zip(rows, ITEMS))[:20]:
        text = item.get("reference_response") or "x"
        got = ifpo_verl.compute_score(row["data_source"], text, row["reward_model"]["ground_truth"],
                                      row["extra_info"], rewards=["cpr", "ipr:format"])
        record = ChecklistEvaluator().evaluate(item, text)
        want = reward_values(record, [RewardSpec("cpr"), RewardSpec("ipr", "format")], text)
        assert got["score"] == (want["cpr"] if want["cpr"] is not None else 0.0)
        assert got["ipr_format"] == (want["ipr_format"] if want["ipr_format"] is not None else 0.0)
        assert got["unjudged"] == sum(v.passed is None for v in record.verdicts)


def test_adapters_agree(monkeypatch):
    monkeypatch.setenv("IFPO_ITEMS", str(SAMPLE))
    item = ITEMS[3]
    text = item["reference_response"]
    want = ifpo_verl.compute_score("x", text, item["id"])["cpr"]
    prompt = "<|im_start|>user\nq<|im_end|>\n<|im_start|>assistant\n"
    assert ifpo_openrlhf.reward_func([prompt + text + "<|im_end|>"], [prompt], [item["id"]])["rewards"] == [want]
    assert ifpo_swift.orms["ifpo_cpr"]()([text], item_id=[item["id"]]) == [want]
    assert ifpo_swift.orms["ifpo"]()([text], ifpo_item=[json.dumps(item)]) == [want]
    [cpr] = ifpo_trl.reward_funcs(SAMPLE)
    assert cpr(prompts=["q"], completions=[text], item_id=[item["id"]]) == [want]


@pytest.mark.parametrize("overrides,env,message", [
    ({"rewards": ["nope"]}, {}, "mode must be one of"),
    ({"rewardz": ["cpr"]}, {}, "unknown setting"),
    ({}, {"IFPO_UNJUDGED": "maybe"}, "unjudged must be one of"),
    ({}, {"IFPO_NONE_REWARD": "x"}, "none_reward"),
])
def test_bad_settings_are_named(monkeypatch, overrides, env, message):
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    with pytest.raises(ValueError, match=message):
        AdapterSettings.resolve(overrides)


def test_labels_that_name_no_item_are_named(monkeypatch):
    monkeypatch.delenv("IFPO_ITEMS", raising=False)
    a = adapter({"rewards": ["cpr"]})
    with pytest.raises(ValueError, match=r"labels\[0\]: item id 'v01' given, but no items file"):
        a.score(["v01"], ["x"])
    with pytest.raises(ValueError, match=r"labels\[0\]: not valid JSON"):
        a.score(["{broken"], ["x"])
    with pytest.raises(ValueError, match=r"labels\[0\]\.constraints"):
        a.score([{"id": "a", "source": "s", "instruction": "i", "structure": "single", "tasks": []}], ["x"])
