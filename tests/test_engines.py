"""The RL engines' own reward-calling code scores through ifpo, each in its own venv with the light ifpo.

- verl 0.9.1: ``RLHFDataset`` reads ``ifpo export --to verl``'s parquet with a Qwen3-VL processor, and
  ``RewardLoopWorker`` (naive reward manager, ``custom_reward_function`` = ``pkg://ifpo.verifiers.plugins.
  ifpo_verl``) scores a batch built from its rows (tests/engine_scripts/verl_check.py);
- OpenRLHF 0.11.2: ``SingleTurnAgentExecutor.execute`` decodes the query as it does and fetches the reward
  from a running ``ifpo serve`` (``--remote_rm_url http://.../get_reward``) and from ifpo's ``reward_func``
  file (tests/engine_scripts/openrlhf_check.py);
- ms-swift 4.6.0: ``--external_plugins`` loading (``swift.utils.import_external_file``) registers ifpo's ORMs
  in ``swift.rewards.orms``, and ms-swift's GRPO reward step (``compute_rewards_per_func``) calls them on
  ``GRPOSample`` rollouts (tests/engine_scripts/swift_check.py).

Each venv: the engine ``--no-deps`` plus what its reward path imports (tests/test_engines_pkgs.py), cached under
``IFPO_TEST_VENVS``. They hold torch with its CUDA libraries (about 6 GB and 10-15 minutes each on 2 busy
cores), so a test run builds them only with ``IFPO_BUILD_ENGINE_VENVS=1`` (or ``python tests/test_engines.py``
builds all three) and otherwise reuses them where present or skips saying so; later runs take about a minute
each (ifpo reinstalled ``--no-deps``). Each expected
reward is ifpo's in-process score of the text the engine handed over.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from engine_venvs import ROOT, ifpo_venv, run
from ifpo.verifiers.checklist import ChecklistEvaluator
from ifpo.verifiers.rewards import RewardSpec, reward_values
from serve_helpers import Server
from test_engines_pkgs import OPENRLHF, SWIFT, VERL

pytestmark = pytest.mark.slow

SAMPLE = ROOT / "sample" / "items.jsonl"
ITEMS = {it["id"]: it for it in map(json.loads, SAMPLE.read_text().splitlines())}
SCRIPTS = Path(__file__).parent / "engine_scripts"


def _expected(item_id: str, text: str, names=("cpr", "ipr", "tcsr")) -> dict:
    item = ITEMS[item_id]
    record = ChecklistEvaluator().evaluate(item, text)
    return reward_values(record, [RewardSpec.parse(n) for n in names], text)


def _completions(item) -> list[str]:
    ref = item.get("reference_response") or ""
    return [ref, "", "A red circle moves right, then stops."]


def _json_out(done) -> object:
    assert done.returncode == 0, f"exit {done.returncode}:\n{done.stderr[-4000:]}"
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_verl_dataset_and_reward_loop_score_through_ifpo(tiny_dir, tmp_path):
    python = ifpo_venv("verl", *VERL, heavy=True)
    # image and text items (verl's dataset reads videos through qwen-vl-utils' video backends, torchvision's
    # reader is gone from torchvision 0.29 and decord/torchcodec are not installed here)
    chosen = [it for it in ITEMS.values() if not (it.get("media") or {}).get("videos")
              and it.get("structure") != "conflict"][:6]
    items_file = tmp_path / "items.jsonl"
    items_file.write_text("".join(json.dumps(it) + "\n" for it in chosen))
    for rel in {p for it in chosen for p in (it.get("media") or {}).get("images") or []}:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_bytes((SAMPLE.parent / rel).read_bytes())
    from ifpo.data_builders.rl_export import export_verl

    summary = export_verl(items_file, tmp_path / "verl", media="copy")
    completions = {it["id"]: _completions(it) for it in chosen}
    (tmp_path / "completions.json").write_text(json.dumps(completions))
    done = run(python, str(SCRIPTS / "verl_check.py"), str(tiny_dir), str(tmp_path / "verl" / summary["files"][0]),
               str(tmp_path / "completions.json"), str(tmp_path / "verl_cache"), timeout=600)
    out = _json_out(done)
    assert out["dataset_rows"] == len(chosen) and out["ground_truth_is_item"]
    assert out["media_parts"] == sum(len(it["media"].get("images") or []) for it in chosen) > 0
    assert len(out["scored"]) == sum(len(v) for v in completions.values())
    for scored in out["scored"]:
        expected = _expected(scored["item_id"], scored["solution_str"])
        number = {k: 0.0 if v is None else v for k, v in expected.items()}
        assert scored["reward_score"] == number["cpr"], scored
        assert {k: scored["extra"][k] for k in number} == number


def test_openrlhf_executor_fetches_rewards_from_ifpo_serve_and_reward_func(tiny_dir, tmp_path):
    python = ifpo_venv("openrlhf", *OPENRLHF, heavy=True)
    chosen = [it for it in ITEMS.values() if it.get("structure") != "conflict"][:5]
    cases = [{"messages": [{"role": "user", "content": it["instruction"]}], "label": it["id"] if i % 2 else
              json.dumps(it), "completion": text} for i, it in enumerate(chosen) for text in _completions(it)[::2]]
    (tmp_path / "cases.json").write_text(json.dumps(cases))
    expected = [_expected(json.loads(c["label"])["id"] if c["label"].startswith("{") else c["label"],
                          c["completion"], ["cpr"])["cpr"] or 0.0 for c in cases]

    server = Server("--items", str(SAMPLE), "--pool", "1", log=tmp_path / "serve.log").start()
    try:
        out = _json_out(run(python, str(SCRIPTS / "openrlhf_check.py"), str(tiny_dir), f"{server.url}/get_reward",
                            str(tmp_path / "cases.json"), timeout=600))
    finally:
        server.stop()
    assert [o["reward"] for o in out] == [[e] for e in expected]
    assert all(o["extra_logs"]["cpr"] == o["reward"] for o in out)

    plugin = ROOT / "verifiers" / "plugins" / "ifpo_openrlhf.py"
    out = _json_out(run(python, str(SCRIPTS / "openrlhf_check.py"), str(tiny_dir), str(plugin),
                        str(tmp_path / "cases.json"), timeout=600, env={"IFPO_ITEMS": str(SAMPLE)}))
    assert [o["reward"] for o in out] == [[e] for e in expected]


def test_ms_swift_grpo_reward_step_calls_the_orm_plugin():
    python = ifpo_venv("ms-swift", *SWIFT, heavy=True)
    chosen = [it for it in ITEMS.values() if it.get("structure") != "conflict"][:4]
    pairs = [(it["id"], text) for it in chosen for text in _completions(it)]
    plugin = ROOT / "verifiers" / "plugins" / "ifpo_swift.py"
    out = _json_out(run(python, str(SCRIPTS / "swift_check.py"), str(plugin), json.dumps(pairs),
                        env={"IFPO_ITEMS": str(SAMPLE)}, timeout=600))
    for name, mode in (("ifpo", "cpr"), ("ifpo_cpr", "cpr"), ("ifpo_ipr", "ipr"), ("ifpo_tcsr", "tcsr")):
        assert out[name] == [_expected(i, t, [mode])[mode] for i, t in pairs], name


if __name__ == "__main__":  # build the venvs ahead of a test run
    import os

    os.environ["IFPO_BUILD_ENGINE_VENVS"] = "1"
    for name, pkgs in (("verl", VERL), ("openrlhf", OPENRLHF), ("ms-swift", SWIFT)):
        print(name, ifpo_venv(name, *pkgs, heavy=True), file=sys.stderr)
