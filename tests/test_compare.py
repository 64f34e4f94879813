"""`ifpo compare`: discovery of runs and checkpoints, flips, exports, skipped reports, and the dashboard
rendered in headless Chromium (Debian's package, installed by scripts/test.sh through scripts/install_chromium.sh)."""

from __future__ import annotations

import csv
import io
import json
import os
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest
from ifpo.eval_hooks.compare import cli_main as compare_main
from ifpo.eval_hooks.core import checkpoint_eval_dir, score_and_write
from ifpo.eval_hooks.dashboard import render_dashboard
from ifpo.eval_hooks.reports import default_pair, discover, find_checkpoint, flips
from ifpo.verifiers.checklist import ChecklistEvaluator
from ifpo.verifiers.schema import read_items

REPO = Path(__file__).resolve().parent.parent
ITEMS = REPO / "sample" / "items.jsonl"
BAD = "I do not know."
# A response that would end the data <script> if it were embedded unescaped.
HOSTILE = '</script><script>document.body.setAttribute("data-pwned", "1")</script><b>bold?</b>'


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Two runs scored by the real verifier suite with scripted answers, so every flip is known.

    alpha: step 0 all bad; step 10 right on F0-F3; step 20 right on F1-F5 (F0 regresses, F4 and F5 are fixed).
    beta: one evaluation without a step (an API model), right on F2-F5, hostile text on the others.
    Plus, in alpha: a corrupt report (30), a report of another shape (50) and a partial evaluation (40).
    """
    root = tmp_path_factory.mktemp("runs")
    items = read_items(ITEMS)
    evaluator = ChecklistEvaluator(None, media_root=ITEMS.parent)
    # Items whose reference passes every constraint and whose bad answer fails one: their outcome flips.
    flippable = [
        i["id"] for i in items
        if i.get("reference_response") and i["structure"] != "conflict"
        and evaluator.evaluate(i, i["reference_response"]).all_passed is True
        and evaluator.evaluate(i, BAD).all_passed is False
    ]
    F = flippable[:6]
    assert len(F) == 6
    by_id = {i["id"]: i for i in items}

    def write(folder: Path, right: list[str], step, other: str = BAD):
        responses = {i["id"]: (i["reference_response"] if i["id"] in right else other) for i in items}
        score_and_write(items, responses, folder, evaluator, {"step": step, "items": str(ITEMS)})

    write(checkpoint_eval_dir(root / "alpha", 0), [], 0)
    write(checkpoint_eval_dir(root / "alpha", 10), F[0:4], 10)
    write(checkpoint_eval_dir(root / "alpha", 20), F[1:6], 20)
    write(root / "beta", F[2:6], None, other=HOSTILE)
    bad = checkpoint_eval_dir(root / "alpha", 30)
    bad.mkdir(parents=True)
    (bad / "report.json").write_text('{"ipr": 0.5, "cpr_micro": ', encoding="utf-8")
    other = checkpoint_eval_dir(root / "alpha", 50)
    other.mkdir(parents=True)
    (other / "report.json").write_text('{"accuracy": 0.9}', encoding="utf-8")
    partial = checkpoint_eval_dir(root / "alpha", 40)
    partial.mkdir(parents=True)
    (partial / "responses.jsonl").write_text('{"id": "x", "response": "y"}\n', encoding="utf-8")
    # alpha's training log, as train/dpo.py's JsonlLogCallback writes it (the eval records are left out of the curves).
    history = [{"step": s, "loss": 0.7 - 0.02 * s, "rewards/margins": 0.05 * s, "rewards/accuracies/stripped": 0.5 + s / 50,
                "learning_rate": 1e-3, "epoch": s / 20} for s in (5, 10, 15, 20)]
    history.insert(1, {"step": 10, "eval_ifpo/ipr": 0.3})
    (root / "alpha" / "log_history.jsonl").write_text("".join(json.dumps(r) + "\n" for r in history), encoding="utf-8")
    return {"root": root, "F": F, "items": by_id, "history": history}


def test_discover_sorts_checkpoints_and_names_skips(runs):
    comp = discover([runs["root"] / "alpha", runs["root"] / "beta", runs["root"] / "missing"])
    assert comp.runs == ["alpha", "beta"]
    assert [(c.run, c.step) for c in comp.checkpoints] == [("alpha", 0), ("alpha", 10), ("alpha", 20), ("beta", None)]
    reasons = {s.path.parent.name if s.path.name == "report.json" else s.path.name: s.reason for s in comp.skipped}
    assert "corrupt JSON" in reasons["checkpoint-30"]
    assert "missing n_items" in reasons["checkpoint-50"]
    assert "partial evaluation" in reasons["checkpoint-40"]
    assert reasons["missing"] == "not a folder"


def test_flips_between_two_checkpoints(runs):
    F = runs["F"]
    comp = discover([runs["root"] / "alpha", runs["root"] / "beta"])
    a, b = find_checkpoint(comp, "alpha@10"), find_checkpoint(comp, "alpha@last")
    f = flips(a, b)
    assert [e["id"] for e in f["regressions"]] == [F[0]]
    assert sorted(e["id"] for e in f["fixes"]) == sorted(F[4:6])
    assert all(e["changed"] for e in f["regressions"] + f["fixes"])
    first, last = default_pair(comp)  # a run against its own step 0, never the first run's step 0 against beta
    assert (first.label, last.label) == ("alpha @ step 0", "alpha @ step 20")
    assert find_checkpoint(comp, "beta") is not None and find_checkpoint(comp, "alpha") is last
    assert sorted(e["id"] for e in flips(first, find_checkpoint(comp, "beta"))["fixes"]) == sorted(F[2:6])


@pytest.mark.parametrize("spec, message", [("gamma@1", "no run named 'gamma'"), ("alpha@7", "has no step '7'")])
def test_find_checkpoint_errors(runs, spec, message):
    comp = discover([runs["root"] / "alpha"])
    with pytest.raises(ValueError, match=message):
        find_checkpoint(comp, spec)


def test_cli_writes_dashboard_table_csv_json(runs, tmp_path, capsys):
    out = tmp_path / "dash.html"
    argv = [str(runs["root"] / "alpha"), str(runs["root"] / "beta"), "--out", str(out), "--a", "alpha@10",
            "--b", "alpha@20", "--csv", str(tmp_path / "t.csv"), "--json", str(tmp_path / "t.json")]
    assert compare_main(argv) == 1  # drawn, three reports skipped (named): docs/exit-codes.md
    captured = capsys.readouterr()
    lines = captured.out.strip().splitlines()
    assert lines[-1] == f"dashboard: {out.resolve()}"
    assert lines[0].split()[:5] == ["run", "step", "items", "IPR", "CPR"]
    assert "1 regression(s), 2 fix(es)" in captured.out
    assert "checkpoint-30" in captured.err and "corrupt JSON" in captured.err  # named, not fatal
    rows = list(csv.DictReader(io.StringIO((tmp_path / "t.csv").read_text())))
    assert [(r["run"], r["step"]) for r in rows] == [("alpha", "0"), ("alpha", "10"), ("alpha", "20"), ("beta", "")]
    assert "cpr/format" in rows[0] and any(k.startswith("cpr_type/") for k in rows[0])
    data = json.loads((tmp_path / "t.json").read_text())
    assert data["flips"]["a"] == "alpha @ step 10" and [e["id"] for e in data["flips"]["regressions"]] == [runs["F"][0]]
    assert len(data["skipped"]) == 3 and data["checkpoints"][2]["metrics"]["ipr"] is not None
    assert os.stat(out).st_mode & 0o044  # readable beyond its owner, like any written file
    page = out.read_text()
    assert "http://" not in page.replace("http://www.w3.org/2000/svg", "") and "https://" not in page  # offline
    assert "</script><script>" not in page.split('id="ifpo-data">')[1].split("</script>")[0]


def test_cli_without_any_report_fails_clearly(tmp_path, capsys):
    (tmp_path / "empty").mkdir()
    assert compare_main([str(tmp_path / "empty"), "--out", str(tmp_path / "d.html")]) == 2
    err = capsys.readouterr().err
    assert "no report.json found below it" in err and "no readable report.json" in err
    assert not (tmp_path / "d.html").exists()


def test_cli_bad_checkpoint_choice(runs, tmp_path, capsys):
    argv = [str(runs["root"] / "alpha"), "--out", str(tmp_path / "d.html"), "--a", "alpha@99"]
    assert compare_main(argv) == 2
    assert "has no step '99'" in capsys.readouterr().err


def test_render_needs_a_checkpoint():
    from ifpo.eval_hooks.reports import Comparison

    with pytest.raises(ValueError, match="nothing to compare"):
        render_dashboard(Comparison([], [], []), None)


@pytest.mark.slow
def test_wandb_tables_offline(runs, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("WANDB_MODE", "offline")
    monkeypatch.setenv("WANDB_DIR", str(tmp_path))
    monkeypatch.setenv("WANDB_SILENT", "true")
    argv = [str(runs["root"] / "alpha"), "--out", str(tmp_path / "d.html"), "--wandb"]
    assert compare_main(argv) == 1  # alpha's corrupt reports are skipped (named)
    assert "logged wandb run" in capsys.readouterr().out
    tables = sorted(p.name.split("_")[0] for p in tmp_path.glob("wandb/offline-run-*/files/media/table/ifpo/*.table.json"))
    assert tables == ["checkpoints", "flips"]
    (flips_file,) = tmp_path.glob("wandb/offline-run-*/files/media/table/ifpo/flips_*.table.json")
    flips_table = json.loads(flips_file.read_text())
    assert flips_table["columns"][3:] == ["response A (alpha @ step 0)", "response B (alpha @ step 20)"]
    fixed = {row[1]: row for row in flips_table["data"] if row[0] == "fixes"}
    assert fixed and all(row[3] == BAD and row[4] == runs["items"][i]["reference_response"] for i, row in fixed.items())
    # Into an existing run (the training run's id): the tables join that run, no new one is made.
    assert compare_main([*argv[:3], "--wandb-run", "trainrun1"]) == 1  # alpha's corrupt reports are skipped (named)
    assert len(list(tmp_path.glob("wandb/offline-run-*-trainrun1"))) == 1


# --- the dashboard in a real browser ---------------------------------------------------------------


def _chromium() -> str | None:
    for name in ("chromium", "chromium-browser"):
        path = shutil.which(name)
        if path:
            return path
    return None


@pytest.fixture(scope="session")
def chromium():
    """Debian's chromium, installed by the setup (scripts/test.sh runs scripts/install_chromium.sh); a test
    never installs system packages itself. Missing (a machine the setup could not install it on): skipped."""
    path = _chromium()
    if path is None:
        pytest.skip("headless Chromium not installed: run scripts/install_chromium.sh (scripts/test.sh runs it; "
                    "needs root or passwordless sudo and apt)")
    return path


def dump_dom(chromium: str, page: Path, profile: Path, fragment: str = "") -> str:
    """The DOM after the page's scripts ran, as Chromium serialises it."""
    cmd = [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
           "--disable-background-networking", "--disable-component-update", "--disable-sync",
           f"--user-data-dir={profile}", "--virtual-time-budget=5000", "--dump-dom", page.resolve().as_uri() + fragment]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout


class Dom(HTMLParser):
    """Elements with their attributes, the ids of their ancestors, and text by ancestor id."""

    VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}

    def __init__(self, text: str):
        super().__init__(convert_charrefs=True)
        self.elements: list[tuple[str, dict, frozenset]] = []
        self.text_in: dict[str, list[str]] = {}
        self._stack: list[tuple[str, str | None]] = []
        self.feed(text)

    def _ids(self) -> frozenset:
        return frozenset(i for _, i in self._stack if i)

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.elements.append((tag, attrs, self._ids()))
        if tag not in self.VOID:
            self._stack.append((tag, attrs.get("id")))

    def handle_endtag(self, tag):
        for k in range(len(self._stack) - 1, -1, -1):
            if self._stack[k][0] == tag:
                del self._stack[k:]
                break

    def handle_data(self, data):
        for i in self._ids():
            self.text_in.setdefault(i, []).append(data)

    def find(self, tag: str, *classes: str, within: str | None = None) -> list[dict]:
        return [a for t, a, ids in self.elements
                if t == tag and set(classes) <= set((a.get("class") or "").split()) and (within is None or within in ids)]

    def text(self, element_id: str) -> str:
        return " ".join(self.text_in.get(element_id, []))


@pytest.mark.slow
def test_dashboard_renders_in_headless_chromium(runs, chromium, tmp_path):
    F = runs["F"]
    out = tmp_path / "dashboard.html"
    argv = [str(runs["root"] / "alpha"), str(runs["root"] / "beta"), "--out", str(out), "--a", "alpha@10", "--b", "alpha@20"]
    assert compare_main(argv) == 1  # alpha's corrupt reports are skipped (named)
    dom = Dom(dump_dom(chromium, out, tmp_path / "profile"))
    body = dom.find("body")[0]
    assert body.get("data-rendered") == "true", "the dashboard script did not finish"
    assert "data-pwned" not in body  # a hostile answer stayed text
    # Curves: one chart per metric; alpha is a line over steps, beta (no step) a dashed level.
    curves = dom.find("svg", "chart", "curve", within="curves")
    assert len(curves) == 5
    series = dom.find("path", "series", within="curves")
    assert {p["data-run"] for p in series} == {"alpha", "beta"}
    assert any("level" in p["class"] for p in series if p["data-run"] == "beta")
    assert len(dom.find("circle", within="curves")) >= 9  # IPR, CPR micro, CPR macro at 3 steps
    # Bars for A and B (dimensions, k, types) and the type x checkpoint heatmap.
    assert len(dom.find("svg", "chart", "bars", within="pair-charts")) == 2
    assert len(dom.find("svg", "chart", "hbars", within="pair-charts")) == 1
    assert {"bar-0", "bar-1"} <= {c for r in dom.find("rect", "bar") for c in r["class"].split()}
    n_types = len({t for c in discover([runs["root"] / "alpha", runs["root"] / "beta"]).checkpoints
                   for t in c.report["by_constraint_type"]})
    assert len(dom.find("rect", "cell", within="heatmap")) == n_types * 4
    # Flips alpha@10 -> alpha@20, with both responses and both verdict lists on each row.
    rows = dom.find("tr", "flip", within="flips")
    assert {r["data-id"] for r in rows if "regression" in r["class"]} == {F[0]}
    assert {r["data-id"] for r in rows if "fix" in r["class"]} == set(F[4:6])
    flips_text = dom.text("flips")
    assert runs["items"][F[0]]["reference_response"][:40] in flips_text and "I do not know." in flips_text
    assert len(dom.find("ul", "verdicts", within="flips")) == 2 * len(rows)
    assert "1 regression(s), 2 fix(es)" in flips_text
    # Sample browser (opens on B), skipped reports named.
    assert len(dom.find("details", "sample", within="samples")) == min(60, len(runs["items"]))
    skipped = dom.text("skipped")
    assert "checkpoint-30" in skipped and "corrupt JSON" in skipped and "partial evaluation" in skipped
    # With beta as B, the browser shows its hostile answers as plain text, and the page still works.
    assert compare_main([*argv[:4], "--a", "alpha@0", "--b", "beta"]) == 1  # alpha's corrupt reports are skipped (named)
    dom = Dom(dump_dom(chromium, out, tmp_path / "profile2"))
    body = dom.find("body")[0]
    assert body.get("data-rendered") == "true" and "data-pwned" not in body
    assert HOSTILE in dom.text("samples")
    assert {r["data-id"] for r in dom.find("tr", "flip", "fix", within="flips")} == set(F[2:6])
    # The legend's hide/show state: beta hidden (as a click on its legend entry does) hides its level lines only.
    hidden = Dom(dump_dom(chromium, out, tmp_path / "profile3", fragment="#hide=beta"))
    level = [p for p in hidden.find("path", "series", within="curves") if p["data-run"] == "beta"]
    assert level and all("hidden" in p["class"].split() for p in level)
    assert not any("hidden" in p["class"].split() for p in hidden.find("path", "series", within="curves")
                   if p["data-run"] == "alpha")
    assert any("off" in x["class"].split() for x in hidden.find("span", "legend-item") if x.get("data-run") == "beta")
    # 0% and unjudged read differently: TCSR/TISR (no judge) are "n/j" cells, IPR at step 0 is a real 0.0.
    summary = dom.text("summary")
    assert "n/j" in summary and "0.0" in summary


@pytest.mark.slow
def test_screenshot_shows_training_curves_and_thumbnails(runs, chromium, tmp_path):
    """Chromium's own pixels: the first training curve holds the run's line colour, and the thumbnails in the
    flips table and the sample browser show the embedded image (compared with the data URI the page holds)."""
    import base64

    import numpy as np
    from PIL import Image

    out = tmp_path / "dashboard.html"
    assert compare_main([str(runs["root"] / "alpha"), "--out", str(out), "--a", "alpha@10", "--b", "alpha@20"]) == 1  # alpha's corrupt reports are skipped (named)
    size = "--window-size=1400,9000"
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--hide-scrollbars",
             "--disable-background-networking", "--disable-component-update", "--disable-sync", size,
             "--virtual-time-budget=5000", "--force-device-scale-factor=1"]
    dom_text = subprocess.run([chromium, *flags, f"--user-data-dir={tmp_path / 'p1'}", "--dump-dom", out.resolve().as_uri()],
                              capture_output=True, text=True, timeout=120).stdout
    dom = Dom(dom_text)
    body = dom.find("body")[0]
    assert body.get("data-rendered") == "true"
    # Training curves from alpha's log: loss, margins and the per-kind accuracy, and no eval key among them.
    charts = dom.find("svg", "train-curve", within="train-curves")
    assert [c["data-key"] for c in charts] == ["loss", "rewards/margins", "rewards/accuracies/stripped"]
    assert {p["data-run"] for p in dom.find("path", "series", "train", within="train-curves")} == {"alpha"}
    layout = json.loads(body["data-layout"])
    shot = tmp_path / "shot.png"
    subprocess.run([chromium, *flags, f"--user-data-dir={tmp_path / 'p2'}", f"--screenshot={shot}", out.resolve().as_uri()],
                   capture_output=True, text=True, timeout=120, check=True)
    image = np.asarray(Image.open(shot).convert("RGB")).astype(int)

    def crop(box):
        x, y, w, h = (round(v) for v in box)
        assert y + h <= image.shape[0], "element below the screenshot"
        return image[y:y + h, x:x + w]

    train = crop(layout["train"])
    blue = np.abs(train - np.array([0x1F, 0x77, 0xB4])).sum(axis=2) < 40  # alpha's colour, PALETTE[0]
    assert blue.sum() > 100, "no line of the run's colour in the first training chart"
    thumbs = [a for a in dom.find("img", "thumb", within="flips")]
    assert thumbs and all(a["src"].startswith("data:image/jpeg;base64,") for a in thumbs)
    for key, src in (("flip_thumb", thumbs[0]["src"]), ("sample_thumb", dom.find("img", "thumb", within="samples")[0]["src"])):
        shown = crop(layout[key])
        expected = Image.open(io.BytesIO(base64.b64decode(src.split(",", 1)[1]))).convert("RGB")
        expected = np.asarray(expected.resize((shown.shape[1], shown.shape[0]))).astype(int)
        inner = (slice(2, -2), slice(2, -2))  # leave the 1-pixel border out
        assert shown[inner].std() > 10, f"{key}: a blank box where the thumbnail should be"
        assert np.abs(shown[inner] - expected[inner]).mean() < 30, f"{key}: the screenshot does not show the thumbnail"


def test_wilson_intervals():
    from ifpo.eval_hooks.reports import wilson

    assert wilson(0, 0) is None
    lo, hi = wilson(0, 10)
    assert lo == 0.0 and hi == pytest.approx(0.2775, abs=1e-4)
    lo, hi = wilson(5, 10)
    assert (lo, hi) == (pytest.approx(0.2366, abs=1e-4), pytest.approx(0.7634, abs=1e-4))
    lo, hi = wilson(10, 10)
    assert hi == pytest.approx(1.0) and lo == pytest.approx(0.7225, abs=1e-4)


def test_intervals_cover_every_rate_of_a_report(runs):
    from ifpo.eval_hooks.reports import rate_intervals

    comp = discover([runs["root"] / "alpha"])
    report = comp.checkpoints[-1].report
    ci = rate_intervals(report)
    for key in ("ipr", "cpr_micro", "cpr_macro"):
        lo, hi = ci[key]
        assert lo <= report[key] <= hi, key
    assert ci["n"]["items_decided"] == report["items_passed"] + report["items_failed"]
    assert set(ci["dims"]) == set(report["cpr_by_dimension"]) and set(ci["by_k"]) == set(report["by_k"])
    assert rate_intervals(report) == ci  # seeded bootstrap: the same page for the same report


def test_training_history_from_jsonl_or_trainer_state(tmp_path):
    from ifpo.eval_hooks.reports import load_history, train_series

    run = tmp_path / "run"
    (run / "checkpoint-4").mkdir(parents=True)
    (run / "checkpoint-2").mkdir(parents=True)
    (run / "checkpoint-2" / "trainer_state.json").write_text(json.dumps({"log_history": [{"step": 2, "loss": 1.0}]}))
    (run / "checkpoint-4" / "trainer_state.json").write_text(json.dumps({"log_history": [
        {"step": 2, "loss": 1.0}, {"step": 4, "loss": 0.5, "rewards/cpr/mean": 0.4, "reward_std": 0.1},
        {"step": 4, "eval_ifpo/ipr": 0.2, "checklist/pass_rate/word_count": 1.0, "rewards/cpr/std": 0.1}]}))
    series = train_series(load_history(run))
    assert series == {"loss": [[2, 1.0], [4, 0.5]], "rewards/cpr/mean": [[4, 0.4]]}
    # ifpo's own log wins, and a resumed run's repeated step keeps the last value.
    (run / "log_history.jsonl").write_text('{"step": 2, "loss": 3.0}\n{"step": 2, "loss": 2.0}\n')
    assert train_series(load_history(run / "eval" if (run / "eval").mkdir() is None else run)) == {"loss": [[2, 2.0]]}


def test_different_item_sets_are_warned_about(runs, tmp_path, capsys):
    from ifpo.eval_hooks.reports import item_set_warning

    items = read_items(ITEMS)
    evaluator = ChecklistEvaluator(None, media_root=ITEMS.parent)
    score_and_write(items[:12], {i["id"]: BAD for i in items[:12]}, tmp_path / "small", evaluator, {"items": str(ITEMS)})
    comp = discover([runs["root"] / "alpha", tmp_path / "small"])
    warning = item_set_warning(comp.checkpoints)
    assert warning and "small: 12 items" in warning and "12 items shared" in warning
    assert item_set_warning(discover([runs["root"] / "alpha"]).checkpoints) is None
    # 1: alpha holds reports that are skipped (named); the item-set warning itself does not change the code.
    assert compare_main([str(runs["root"] / "alpha"), str(tmp_path / "small"), "--out", str(tmp_path / "d.html")]) == 1
    assert "WARNING: checkpoints were evaluated on different item sets" in capsys.readouterr().out
    data = json.loads((tmp_path / "d.html").read_text().split('id="ifpo-data">')[1].split("</script>")[0])
    assert data["item_set_warning"] == warning


def test_thumbnails_respect_the_size_cap(runs):
    from ifpo.eval_hooks.dashboard import thumbnails
    from ifpo.eval_hooks.reports import load_item_texts

    texts = load_item_texts([ITEMS])
    ids = sorted(texts)
    media, note = thumbnails(texts, ids, max_kb=4096)
    with_media = [i for i in ids if texts[i]["media"]["images"] or texts[i]["media"]["videos"]]
    assert set(media) == set(with_media) and not note["capped_items"]
    small, note = thumbnails(texts, ids, max_kb=20)
    assert note["bytes"] <= 20 * 1024 and note["capped_items"] and len(small) < len(media)
