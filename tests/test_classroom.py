"""Class grading (``python -m gpuperf.grading grade``): sandboxed, parallel, and not gameable.

One class of lab 1 submissions is built from the lab's own notebooks with the recipes in
``tests/submissions/lab1_rooflines.py`` (honest ones and every known attack), graded with the
real command in parallel with short time limits, and each row of ``grades.csv`` is checked:
honest submissions score as they should, each attack scores what it deserves (0 for what it
tampered with, or UNGRADED "tampering detected"), crashes and hangs cost only their own
questions, no hidden test reaches the feedback, and nothing outside the sandbox changed.
"""

from __future__ import annotations

import csv
import hashlib
import json
import os
import runpy
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import numpy as np
import pytest

from gpuperf.classroom import sandbox, wire

pytestmark = pytest.mark.slow  # grades a class of submissions in sandboxes

ROOT = Path(__file__).resolve().parents[1]
LAB = ROOT / "labs" / "lab1_rooflines"
RECIPES = runpy.run_path(str(ROOT / "tests" / "submissions" / "lab1_rooflines.py"))["RECIPES"]
QUESTIONS = ["q1", "q2", "q3", "q4", "q5", "q6"]
#: short limits: the hanging cells must not cost minutes
TIMEOUT_S, CELL_TIMEOUT_S = "240", "15"


# ------------------------------------------------------------------------------ building


def _check_cells(nb) -> dict[str, int]:
    """Question → index of its ``grader.check`` cell."""
    return {
        cell.source.strip().split('"')[1]: index
        for index, cell in enumerate(nb.cells)
        if cell.cell_type == "code" and cell.source.strip().startswith('grader.check("')
    }


def build(recipe: dict, target: Path, lab: Path = LAB) -> Path:
    """The notebook a recipe describes, built from ``lab``'s notebooks, written to ``target``;
    ``{labs}`` in its sources becomes the folder that holds ``lab``."""
    base = {
        "solution": lab / "autograder" / f"{lab.name}.ipynb",
        "student": lab / "student" / f"{lab.name}.ipynb",
    }[recipe["base"]]
    nb = nbformat.read(base, as_version=4)
    checks = _check_cells(nb)
    for question, source in recipe.get("answers", {}).items():
        answer = checks[question] - 1
        while nb.cells[answer].cell_type != "code":
            answer -= 1
        nb.cells[answer].source = source.replace("{labs}", str(lab.parent))
    imports = next(i for i, c in enumerate(nb.cells) if "lab_grader(" in c.source)
    positions = {"start": imports, **checks}
    for where, sources in sorted(
        recipe.get("after", {}).items(), key=lambda item: -positions[item[0]]
    ):
        for source in reversed(sources):
            cell = nbformat.v4.new_code_cell(source.replace("{labs}", str(lab.parent)))
            nb.cells.insert(positions[where] + 1, cell)
    for index, cell in enumerate(nb.cells):
        cell["id"] = f"cell-{index:03d}"
    nbformat.write(nb, target)
    return target


def _fingerprint_files(lab: Path) -> dict[str, str]:
    """Hashes of what no submission may change: the lab's tests and hidden tests."""
    return {str(p): hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(lab.rglob("*.py"))}


def run_grade(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "gpuperf.grading", "grade", *args],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT,
        env=os.environ | (env or {}),
    )


@pytest.fixture(scope="module")
def lab(tmp_path_factory) -> Path:
    """A private copy of lab 1 (what the attacks try to rewrite; the repository's stays safe)."""
    target = tmp_path_factory.mktemp("labs") / LAB.name
    shutil.copytree(LAB, target)
    return target


@pytest.fixture(scope="module")
def graded_class(tmp_path_factory, lab):
    """Grade the whole regression class once: (rows by student, OUT/<lab> folder, files before,
    files after, the command's output)."""
    submissions = tmp_path_factory.mktemp("submissions")
    for name, recipe in RECIPES.items():
        build(recipe, submissions / f"{name}.ipynb", lab)
    # submissions that cannot be graded, each with its reason
    wrong = nbformat.read(lab / "student" / f"{LAB.name}.ipynb", as_version=4)
    wrong.metadata["otter"] = {"assignment_name": "lab2_fusion"}
    nbformat.write(wrong, submissions / "wrong_lab.ipynb")
    del wrong.metadata["otter"]
    nbformat.write(wrong, submissions / "no_metadata.ipynb")
    (submissions / "unreadable.ipynb").write_text("{ this is not a notebook")
    (submissions / "empty_folder").mkdir()
    (submissions / "empty_folder" / "notes.txt").write_text("forgot the notebook")
    (submissions / "in_a_folder").mkdir()
    build(RECIPES["untouched"], submissions / "in_a_folder" / f"{LAB.name}.ipynb", lab)
    out = tmp_path_factory.mktemp("out")
    before = _fingerprint_files(lab)
    result = run_grade(
        str(lab), str(submissions), "--out", str(out), "--jobs", "4",
        "--timeout", TIMEOUT_S, "--cell-timeout", CELL_TIMEOUT_S,
    )  # fmt: skip
    after = _fingerprint_files(lab)
    assert result.returncode == 0, result.stdout + result.stderr
    with open(out / LAB.name / "grades.csv", newline="") as handle:
        rows = {row["student"]: row for row in csv.DictReader(handle)}
    return rows, out / LAB.name, before, after, result.stdout


# ------------------------------------------------------------------------------ the class


def test_one_row_per_submission_with_fixed_columns(graded_class) -> None:
    rows, out, *_ = graded_class
    expected = set(RECIPES) | {
        "wrong_lab", "no_metadata", "unreadable", "empty_folder", "in_a_folder"
    }  # fmt: skip
    assert set(rows) == expected
    with open(out / "grades.csv", newline="") as handle:
        header = next(csv.reader(handle))
    assert header == ["student", "status", "reason", *QUESTIONS, "total", "max_total", "sandbox",
                      "notes"]  # fmt: skip
    for student, row in rows.items():
        assert row["status"] in ("GRADED", "UNGRADED"), student
        assert row["status"] == "GRADED" or row["reason"], f"{student}: UNGRADED without reason"
        assert row["sandbox"] == sandbox.mechanism()
        assert (out / student / "results.json").is_file() or row["status"] == "UNGRADED"


@pytest.mark.parametrize("name", sorted(RECIPES))
def test_submission_scores_what_it_deserves(graded_class, name: str) -> None:
    rows, out, *_ = graded_class
    row, expect = rows[name], RECIPES[name]["expect"]
    log = (out / name / "grading.log").read_text() if (out / name / "grading.log").exists() else ""
    assert row["status"] == expect["status"], f"{name}: {row}\n{log}"
    if "reason" in expect:
        assert expect["reason"] in row["reason"], row
    results = json.loads((out / name / "results.json").read_text())
    scores = {q: results["questions"][q]["score"] for q in QUESTIONS}
    if "total" in expect:
        assert sum(scores.values()) == expect["total"], f"{name}: {scores}\n{log}"
    for question, score in expect.get("scores", {}).items():
        assert scores[question] == score, f"{name}: {question} scored {scores}\n{log}"
    for probe in expect.get("tampering", []):
        assert any(probe in line for line in results["tampering"]), (
            f"{name}: the canary missed {probe}: {results['tampering']}"
        )
    for text in expect.get("notes", []):
        assert any(text in note for note in results["notes"]), f"{name}: {results['notes']}"


def test_ungraded_submissions_say_why(graded_class) -> None:
    rows, *_ = graded_class
    assert rows["wrong_lab"]["reason"].startswith("wrong lab: the notebook is 'lab2_fusion'")
    assert rows["no_metadata"]["reason"].startswith("missing otter metadata")
    assert rows["unreadable"]["reason"].startswith("notebook unreadable")
    assert rows["empty_folder"]["reason"] == "no .ipynb in the folder"
    for name in ("wrong_lab", "no_metadata", "unreadable", "empty_folder"):
        assert rows[name]["status"] == "UNGRADED" and rows[name]["total"] == ""
        assert all(rows[name][q] == "" for q in QUESTIONS), rows[name]  # nothing was tested
    # a tampering row keeps what the trusted tests gave, for the instructor to judge
    assert [rows["patch_checks"][q] for q in QUESTIONS] == ["0"] * len(QUESTIONS)
    assert rows["master"]["max_total"] == "12"
    assert rows["in_a_folder"]["status"] == "GRADED" and rows["in_a_folder"]["total"] == "0"


def test_nothing_outside_the_sandbox_changed(graded_class) -> None:
    rows, out, before, after, _ = graded_class
    changed = [path for path in before if before[path] != after.get(path)]
    assert not changed, f"a submission changed files outside its sandbox: {changed}"
    # the attack found nothing it could write: not the tests, not gpuperf, no other results
    printed = (out / "rewrite_files" / "output.log").read_text()
    assert "rewrote []" in printed, printed[-2000:]
    # other students' results were not rewritten (the attack writes 12/12 everywhere it can)
    assert rows["untouched"]["total"] == "0" and rows["master"]["total"] == "12"


def test_feedback_never_contains_hidden_tests(graded_class, lab) -> None:
    rows, out, *_ = graded_class
    autograder = lab / "autograder"
    hidden_lines = {
        line.strip()
        for path in [autograder / "hidden_tests.py", *(autograder / "tests").glob("*.py")]
        for line in path.read_text().splitlines()
        if len(line.strip()) > 30
    }
    public = "\n".join(p.read_text() for p in (lab / "student" / "tests").glob("*.py"))
    hidden_only = {line for line in hidden_lines if line not in public}
    assert hidden_only, "found no hidden-only test lines to look for"
    for student in rows:
        feedback = out / student / "feedback.txt"
        if feedback.is_file():
            text = feedback.read_text()
            leaked = [line for line in hidden_only if line in text]
            assert not leaked, f"{student}'s feedback shows hidden test code: {leaked[:3]}"
    # the feedback of a failing public test is there, and says what is off
    assert "public test 1: failed" in (out / "untouched" / "feedback.txt").read_text()


def test_fallback_sandbox_grades_and_says_so(tmp_path, lab) -> None:
    submissions = tmp_path / "subs"
    submissions.mkdir()
    build(RECIPES["master"], submissions / "ada.ipynb", lab)
    result = run_grade(
        str(lab), str(submissions), "--out", str(tmp_path / "out"),
        "--timeout", TIMEOUT_S, "--cell-timeout", CELL_TIMEOUT_S,
        env={"GPUPERF_SANDBOX": "fallback"},
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    with open(tmp_path / "out" / LAB.name / "grades.csv", newline="") as handle:
        (row,) = list(csv.DictReader(handle))
    assert (row["sandbox"], row["status"], row["total"]) == ("fallback", "GRADED", "12"), row


def test_bubblewrap_is_used_in_ci() -> None:
    if os.environ.get("CI") != "true" and sandbox.mechanism() != "bwrap":
        pytest.skip("bubblewrap is not installed here (CI installs it: .ci/run)")
    assert sandbox.mechanism() == "bwrap"


# ------------------------------------------------------------------------------ the command


def test_rerun_regrades_and_replaces_the_folder(tmp_path) -> None:
    submissions = tmp_path / "subs"
    submissions.mkdir()
    nb = nbformat.read(LAB / "student" / f"{LAB.name}.ipynb", as_version=4)
    nb.metadata["otter"] = {"assignment_name": "lab3_tiled_matmul"}
    nbformat.write(nb, submissions / "bob.ipynb")
    out = tmp_path / "out"
    assert run_grade(str(LAB), str(submissions), "--out", str(out)).returncode == 0
    stale = out / LAB.name / "bob" / "stale.txt"
    stale.write_text("from the first run")
    (submissions / "bob.ipynb").write_text("not json")
    assert run_grade(str(LAB), str(submissions), "--out", str(out)).returncode == 0
    with open(out / LAB.name / "grades.csv", newline="") as handle:
        (row,) = list(csv.DictReader(handle))
    assert row["reason"].startswith("notebook unreadable"), row
    assert not stale.exists()


@pytest.mark.parametrize(
    "args, message",
    [
        (["labs", "SUBS"], "is not a lab folder"),
        (["LAB", "missing"], "is not a folder"),
        (["LAB", "SUBS", "--jobs", "0"], "--jobs must be > 0"),
        (["LAB", "SUBS", "--timeout", "soon"], "--timeout must be a number"),
        (["LAB", "SUBS", "--timeout", "5", "--cell-timeout", "10"], "must be ≤ --timeout"),
        (["LAB", "SUBS", "--memory", "-1"], "--memory must be > 0"),
        (["LAB", "EMPTY"], "no submissions"),
    ],
)
def test_arguments_are_validated(tmp_path, args: list[str], message: str) -> None:
    (tmp_path / "subs").mkdir()
    (tmp_path / "subs" / "a.ipynb").write_text("{}")
    (tmp_path / "empty").mkdir()
    names = {"LAB": str(LAB), "SUBS": str(tmp_path / "subs"), "EMPTY": str(tmp_path / "empty"),
             "missing": str(tmp_path / "missing"), "labs": str(ROOT / "labs")}  # fmt: skip
    result = run_grade(*[names.get(a, a) for a in args], "--out", str(tmp_path / "out"))
    assert result.returncode == 2 and message in result.stderr, result.stderr


# ------------------------------------------------------------------------------ the wire


def test_wire_round_trips_data_and_refuses_code() -> None:
    import torch

    values = [
        None, True, 3, 2**80, 0.1, float("inf"), "s", b"b", ..., 1 + 2j,
        [1, (2.5, "x")], {("relu", "T4"): "memory"}, {1, 2}, np.arange(6.0).reshape(2, 3),
        np.float32(1.5), torch.arange(4, dtype=torch.bfloat16),
    ]  # fmt: skip
    for value in values:
        back = wire.decode(wire.loads(wire.dumps({"v": wire.encode(value)}))["v"])
        if isinstance(value, np.ndarray):
            np.testing.assert_array_equal(back, value)
        elif isinstance(value, torch.Tensor):
            assert back.dtype == value.dtype and torch.equal(back, value)
        else:
            assert back == value and type(back) is type(value), (value, back)
    with pytest.raises(wire.WireError):
        wire.encode(lambda: 0)  # not data, and no handle table
    with pytest.raises(wire.WireError):
        wire.encode(np.array([object()]))
    # a pickled object array cannot be decoded
    import base64
    import io

    buffer = io.BytesIO()
    np.save(buffer, np.array([object()]), allow_pickle=True)
    pickled = {"~": "ndarray", "v": base64.b64encode(buffer.getvalue()).decode()}
    with pytest.raises(wire.WireError):
        wire.decode(pickled)
    with pytest.raises(wire.WireError):
        wire.decode({"~": "handle", "id": 1, "type": "f", "call": True})
    with pytest.raises(wire.WireError):
        wire.loads(b"[1, 2]")


def test_wire_sends_a_view_with_its_whole_buffer() -> None:
    import torch

    buffer = torch.full((12,), -1.0)
    view = buffer[2:10]  # an output with guard cells on both sides
    back = wire.decode(wire.encode(view))
    assert back.shape == (8,) and back._base is not None
    assert torch.equal(back._base, buffer) and back.storage_offset() == 2
    bad = wire.encode(view)
    bad["view"][2] = 10  # a view past the end of its buffer
    with pytest.raises(wire.WireError):
        wire.decode(bad)


def test_references_come_from_the_handout_and_answers_from_the_notebook() -> None:
    from gpuperf.classroom.tester import reference_namespace

    references, answers = reference_namespace(LAB / "student" / f"{LAB.name}.ipynb")
    for name in ("np", "OPS", "CHIPS", "CHIP_PRECISION"):
        assert name in references and name not in answers, name
    for name in ("add_intensity", "t_math_s", "critical_batch", "roof", "verdicts"):
        assert name in answers and name not in references, name


# ------------------------------------------------------------------------------ kernels' outputs

INPLACE_TEST = """OK_FORMAT = True
test = {'name': 'q1', 'points': 2, 'suites': [{'cases': [
    {'code': '>>> import torch\\n>>> buf = torch.full((10,), -1.0)\\n>>> out = buf[2:8]\\n'
             '>>> fill(out, 3.0)\\n'
             '>>> assert torch.equal(out, torch.full((6,), 3.0)), out\\n'
             '>>> assert buf[0] == -1 and buf[1] == -1 and buf[8] == -1 and buf[9] == -1, buf\\n',
     'hidden': False, 'locked': False},
    {'code': '>>> import torch\\n>>> x = torch.ones(3, requires_grad=True)\\n'
             '>>> y = double(x)\\n>>> assert y.grad_fn is not None\\n'
             '>>> assert torch.equal(y.detach(), torch.full((3,), 2.0))\\n',
     'hidden': True, 'locked': False}],
  'scored': True, 'setup': '', 'teardown': '', 'type': 'doctest'}]}
"""


def test_kernel_outputs_written_in_place_come_back_guards_included(tmp_path) -> None:
    """A test that hands the student's code an output view (guard cells around it) sees what the
    code wrote, in the view and past its ends; a tensor with an autograd graph can be inspected."""
    lab = tmp_path / "lab9_inplace"
    (lab / "student").mkdir(parents=True)
    (lab / "autograder" / "tests").mkdir(parents=True)
    (lab / "autograder" / "tests" / "q1.py").write_text(INPLACE_TEST)

    def notebook(fill: str, double: str) -> nbformat.NotebookNode:
        nb = nbformat.v4.new_notebook()
        nb.metadata["otter"] = {"assignment_name": lab.name}
        nb.cells = [
            nbformat.v4.new_code_cell("import torch"),
            nbformat.v4.new_code_cell(fill),
            nbformat.v4.new_code_cell(double),
            nbformat.v4.new_code_cell('grader.check("q1")'),
        ]
        return nb

    stub = "def fill(out, value):\n    ...\n", "def double(x):\n    ...\n"
    nbformat.write(notebook(*stub), lab / "student" / f"{lab.name}.ipynb")
    submissions = tmp_path / "subs"
    submissions.mkdir()
    right = "def fill(out, value):\n    out.fill_(value)\n", "def double(x):\n    return 2 * x\n"
    nbformat.write(notebook(*right), submissions / "right.ipynb")
    # writes past the end of its output (what an unmasked store does)
    spill = "def fill(out, value):\n    out._base.fill_(value)\n", right[1]
    nbformat.write(notebook(*spill), submissions / "spill.ipynb")
    result = run_grade(
        str(lab), str(submissions), "--out", str(tmp_path / "out"), "--jobs", "2",
        "--timeout", TIMEOUT_S, "--cell-timeout", CELL_TIMEOUT_S,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    with open(tmp_path / "out" / lab.name / "grades.csv", newline="") as handle:
        rows = {row["student"]: row for row in csv.DictReader(handle)}
    assert (rows["right"]["status"], rows["right"]["total"]) == ("GRADED", "2"), rows["right"]
    assert (rows["spill"]["status"], rows["spill"]["total"]) == ("GRADED", "1"), rows["spill"]
