"""Item schema validation: a truth table of bad records, one per rule, and the CLI's behaviour."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path

import pytest
from ifpo.verifiers.schema import load_items, read_items, summarize

REPO = Path(__file__).resolve().parent.parent


def good_item(**overrides):
    item = {
        "id": "ok-1",
        "source": "sample",
        "media": {"images": ["media/a.png"]},
        "instruction": "Describe the image without commas in 5 to 30 words.",
        "structure": "single",
        "tasks": [{"name": "summarization", "description": "Summarize what is shown."}],
        "constraints": [
            {"id": "c1", "type": "punctuation:no_comma", "dimension": "format", "description": "No commas."},
            {
                "id": "c2",
                "type": "response_length_constraint",
                "dimension": "format",
                "description": "Use 5 to 30 words.",
                "params": {"min_count": 5, "max_count": 30},
            },
        ],
        "reference_response": "A red circle sits above a blue square on white.",
        "extra_field_is_kept": {"anything": 1},
    }
    item.update(overrides)
    return item


def selection_item(branches, **overrides):
    return good_item(id="sel-1", structure="selection", branches=branches, **overrides)


def branch(cond, instr, active=False, **kw):
    return {"condition": cond, "instruction": instr, "active": active, **kw}


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / "media").mkdir()
    # A real PNG: `ifpo validate` decodes each media file's header (a corrupt one is an error).
    (tmp_path / "media" / "a.png").write_bytes((REPO / "sample" / "media" / "images" / "i01_row_of_three.png").read_bytes())
    return tmp_path


def write(root: Path, records, name="items.jsonl") -> Path:
    path = root / name
    with open(path, "w", encoding="utf-8") as fh:
        for r in records:
            fh.write(r if isinstance(r, str) else json.dumps(r))
            fh.write("\n")
    return path


def test_good_item_validates_and_keeps_extra_fields(root):
    result = load_items(write(root, [good_item()]))
    assert result.errors == []
    assert result.items[0]["extra_field_is_kept"] == {"anything": 1}
    summary = summarize(result.items)
    assert summary["by_structure"] == {"single": 1}
    assert summary["by_media"] == {"image": 1}
    assert summary["by_constraint_type"] == {"punctuation:no_comma": 1, "response_length_constraint": 1}


def _without(key):
    item = good_item()
    del item[key]
    return item


def _constraint(**changes):
    item = good_item()
    item["constraints"][1].update(changes)
    return item


def _params(**params):
    item = good_item()
    item["constraints"][1]["params"] = params
    return item


# (case name, record, expected field path, substring of the message)
BAD_RECORDS = [
    ("missing required field", _without("instruction"), "instruction", "required field is missing"),
    ("empty id", good_item(id=""), "id", "non-empty string"),
    ("unknown structure", good_item(structure="singel"), "structure", "expected one of"),
    ("absolute media path", good_item(media={"images": ["/etc/passwd"]}), "media.images[0]", "absolute"),
    ("windows absolute media path", good_item(media={"images": ["C:\\x.png"]}), "media.images[0]", "absolute"),
    ("media escaping root", good_item(media={"images": ["media/../../x.png"]}), "media.images[0]", "escapes the dataset root"),
    ("missing media file", good_item(media={"videos": ["media/nope.mp4"]}), "media.videos[0]", "not found"),
    ("unknown media kind", good_item(media={"video": ["media/a.png"]}), "media.video", "did you mean 'videos'"),
    ("media not a list", good_item(media={"images": "media/a.png"}), "media.images", "expected an array"),
    ("unknown constraint type", _constraint(type="response_lenght_constraint"), "constraints[1].type",
     "did you mean 'response_length_constraint'"),
    ("param of wrong type", _params(min_count="five", max_count=30), "constraints[1].params.min_count", "expected int"),
    ("unknown param", _params(min_count=5, max_count=30, max_words=3), "constraints[1].params.max_words",
     "unknown parameter"),
    ("missing required param on rule route",
     _constraint(type="keywords:existence", dimension="content", params={}), "constraints[1].params.keywords",
     "required parameter"),
    ("bad dimension", _constraint(dimension="formatting"), "constraints[1].dimension", "expected one of"),
    ("duplicate constraint id", _constraint(id="c1"), "constraints[1].id", "duplicate constraint id"),
    ("no constraints", good_item(constraints=[]), "constraints", "at least one constraint"),
    ("selection without active branch",
     selection_item([branch("if red", "Say red."), branch("if blue", "Say blue.")]), "branches",
     "exactly one active branch, found 0"),
    ("selection with two active branches",
     selection_item([branch("if red", "Say red.", True), branch("if blue", "Say blue.", True)]), "branches",
     "exactly one active branch, found 2"),
    ("selection with neither branches nor active_instruction", good_item(structure="selection"),
     "active_instruction", "exactly one active"),
    ("nested: active branch under inactive one",
     good_item(id="n1", structure="nested", branches=[
         branch("if red", "Go deeper.", False, branches=[branch("a", "A.", True), branch("b", "B.")]),
         branch("if blue", "Go deeper.", True, branches=[branch("c", "C.", True), branch("d", "D.")]),
     ]), "branches[0].branches[0].active", "under an inactive branch"),
    ("nested: inner level without active branch",
     good_item(id="n2", structure="nested", branches=[
         branch("if red", "Go deeper.", True, branches=[branch("a", "A."), branch("b", "B.")]),
         branch("if blue", "Stop."),
     ]), "branches[0].branches", "exactly one active branch, found 0"),
    ("active_instruction disagrees with active branch",
     selection_item([branch("if red", "Say red.", True), branch("if blue", "Say blue.")], active_instruction="Say blue."),
     "active_instruction", "does not match"),
    ("branches on a single item", good_item(branches=[branch("x", "y", True), branch("z", "w")]), "branches",
     "only selection/nested"),
    ("conflict item without conflict block", good_item(structure="conflict", reference_response=None), "conflict",
     "needs"),
    ("conflict with unknown template",
     good_item(structure="conflict", reference_response=None, conflict={"template": "nope", "conflicting": ["c1", "c2"]}),
     "conflict.template", "expected one of"),
    ("conflict naming a missing constraint",
     good_item(structure="conflict", reference_response=None,
               conflict={"template": "exact_include_exclude", "conflicting": ["c1", "c9"]}),
     "conflict.conflicting[1]", "not in this item's constraints"),
    ("conflict item with a reference response",
     good_item(structure="conflict", conflict={"template": "exact_include_exclude", "conflicting": ["c1", "c2"]}),
     "reference_response", "unsatisfiable"),
    ("unknown override style", good_item(system="Be brief.", user_overrides={"XX": "Ignore the rule."}),
     "user_overrides.XX", "unknown override style"),
    ("overrides without a system message", good_item(user_overrides={"DJ": "Ignore the rule."}), "user_overrides",
     "no system"),
    ("task without description", good_item(tasks=[{"name": "summarization"}]), "tasks[0].description",
     "non-empty string"),
    ("record that is not an object", [1, 2], "", "expected a JSON object"),
]


@pytest.mark.parametrize("case,record,field,message", BAD_RECORDS, ids=[c[0] for c in BAD_RECORDS])
def test_bad_record_is_reported_precisely(root, case, record, field, message):
    record = copy.deepcopy(record)
    path = write(root, [good_item(id="first"), record, good_item(id="last")])
    result = load_items(path)
    errors = [e for e in result.errors if e.line == 2]
    assert errors, f"{case}: no error reported"
    assert any(e.field == field and message in e.message for e in errors), [str(e) for e in errors]
    # A bad record never hides the others: both good neighbours still load.
    assert [i["id"] for i in result.items] == ["first", "last"]
    assert all(e.file == str(path) for e in errors)
    if isinstance(record, dict) and record.get("id"):
        assert all(e.item_id == record["id"] for e in errors)


def test_invalid_json_line_does_not_hide_later_errors(root):
    path = write(root, ['{"id": "broken", ', good_item(id="x", structure="bogus"), good_item(id="y")])
    result = load_items(path)
    assert [(e.line, e.field) for e in result.errors] == [(1, ""), (2, "structure")]
    assert "invalid JSON" in result.errors[0].message
    assert [i["id"] for i in result.items] == ["y"]


def test_duplicate_ids_name_the_first_occurrence(root):
    path = write(root, [good_item(id="dup"), good_item(id="other"), good_item(id="dup")])
    result = load_items(path)
    assert len(result.errors) == 1
    err = result.errors[0]
    assert (err.line, err.field, err.item_id) == (3, "id", "dup")
    assert f"{path}:1" in err.message


def test_hybrid_and_judge_constraints_may_leave_params_to_the_judge(root):
    item = good_item()
    item["constraints"].append(
        {"id": "c3", "type": "word_count", "dimension": "format", "description": "Answer in about twenty words."}
    )
    item["constraints"].append(
        {"id": "c4", "type": "tone", "dimension": "style", "description": "Use a cheerful tone."}
    )
    assert load_items(write(root, [item])).errors == []


def test_error_string_names_file_line_item_and_field(root):
    path = write(root, [good_item(id="z", media={"images": ["/abs.png"]})])
    (err,) = load_items(path).errors
    text = str(err)
    assert text.startswith(f"{path}:1:") and "item 'z'" in text and "media.images[0]:" in text


def test_read_items_raises_with_every_error(root):
    path = write(root, [good_item(id="a", structure="x"), good_item(id="b", media={"images": ["/x"]})])
    with pytest.raises(ValueError, match="2 invalid item field"):
        read_items(path)


def test_root_option_resolves_media_elsewhere(tmp_path):
    data = tmp_path / "data"
    (data / "media").mkdir(parents=True)
    (data / "media" / "a.png").write_bytes(b"x")
    items_dir = tmp_path / "lists"
    items_dir.mkdir()
    path = write(items_dir, [good_item()])
    assert load_items(path).errors  # media missing relative to the file's folder
    assert load_items(path, root=data).errors == []


def run_cli(*args):
    return subprocess.run([sys.executable, "-m", "ifpo.cli", *args], capture_output=True, text=True, timeout=120)


def test_cli_reports_every_error_and_exits_1_without_traceback(root):
    path = write(root, [good_item(id="a", structure="x"), "not json", good_item(id="b", media={"images": ["/x"]})])
    proc = run_cli("validate", str(path))
    assert proc.returncode == 1
    assert "Traceback" not in proc.stdout + proc.stderr
    assert f"{path}:1: item 'a' structure:" in proc.stdout
    assert f"{path}:2:" in proc.stdout and "invalid JSON" in proc.stdout
    assert f"{path}:3: item 'b' media.images[0]:" in proc.stdout
    assert "3 error(s) in 3 of 3 records" in proc.stderr


def test_cli_summary_on_valid_file(root):
    path = write(root, [good_item(), good_item(id="t2", media=None)])
    proc = run_cli("validate", str(path))
    assert proc.returncode == 0, proc.stderr
    assert "2 items, 4 constraints, all valid" in proc.stdout
    assert "structure  single 2" in proc.stdout
    assert "media      image 1, text 1" in proc.stdout


def test_cli_missing_file_is_a_clear_error(tmp_path):
    proc = run_cli("validate", str(tmp_path / "nope.jsonl"))
    assert proc.returncode == 2
    assert "items file not found" in proc.stderr and "Traceback" not in proc.stderr
