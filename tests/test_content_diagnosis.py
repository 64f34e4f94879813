"""bench/content_diagnosis.py: per-role pass rates and the description statistics, on hand-written world items."""

from __future__ import annotations

import json

from bench_modules import load

diag = load("content_diagnosis")


def item(iid, colours, roles):
    objects = [{"shape": "circle", "color": c, "position": "top"} for c in colours]
    return {"id": iid, "world": {"scene": {"kind": "image", "objects": objects}, "roles": roles}}


def folder(tmp_path, rows):
    """rows: (item id, response, {constraint id: passed})."""
    (tmp_path / "responses.jsonl").write_text(
        "".join(json.dumps({"id": i, "response": r}) + "\n" for i, r, _ in rows), encoding="utf-8")
    (tmp_path / "verdicts.jsonl").write_text("".join(json.dumps({"id": i, "verdicts": [
        {"constraint_id": c, "passed": p} for c, p in v.items()]}) + "\n" for i, _, v in rows), encoding="utf-8")
    return tmp_path


def test_roles_description_and_answers(tmp_path):
    items = {x["id"]: x for x in [
        item("a", ["red", "blue", "green"], {"c1": "count", "c2": "no_comma"}),
        item("b", ["red", "blue"], {"c1": "count"}),
        item("c", ["red", "blue", "green"], {"c1": "last_color"}),
        item("d", ["red", "blue"], {"c1": "first_color", "c2": "opening"}),
    ]}
    out = diag.diagnose(items, folder(tmp_path, [
        ("a", "A circle. The colours are blue and green and red. There are three shapes.", {"c1": True, "c2": True}),
        ("b", "A circle. The colours are blue, green, and red. There are three shapes.", {"c1": False}),
        ("c", "A circle. The colours are blue and red. The shape that appears last is green.", {"c1": True}),
        ("d", "Sure. The colours are blue and red. The shape that is leftmost is blue.", {"c1": False, "c2": None}),
        ("zz", "not a world item", {"c1": True}),
    ]))
    assert out["cpr_count"] == 50.0 and out["cpr_no_comma"] == 100.0 and out["cpr_last_color"] == 100.0
    assert out["cpr_first_color"] == 0.0 and "cpr_opening" not in out  # unjudged verdicts are not counted
    # lists three colours: a (3 shapes) and b (2 shapes); c (3 shapes) lists two, d (2 shapes) lists two
    assert out["P(lists 3 | 3 shapes)"] == 0.5 and out["P(lists 3 | 2 shapes)"] == 0.5
    assert out["count answer = colours listed"] == "2/2"
    assert out["colour answer among listed"] == "1/2"  # c's "green" is not among "blue and red"
    assert out["skipped (not world items)"] == 1


def test_cli_refuses_a_folder_without_an_evaluation(tmp_path, capsys):
    (tmp_path / "items.jsonl").write_text(json.dumps(item("a", ["red"], {"c1": "count"})) + "\n", encoding="utf-8")
    try:
        diag.main([str(tmp_path / "items.jsonl"), str(tmp_path)])
    except SystemExit as exc:
        assert exc.code == 2
    else:
        raise AssertionError("expected a usage error")
    assert "expected responses.jsonl and verdicts.jsonl" in capsys.readouterr().err
