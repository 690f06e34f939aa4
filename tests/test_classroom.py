"""Class grading (``python -m gpuperf.grading grade``): sandboxed, parallel, and not gameable.

Three classes are graded with the real command, each once per session:

* **lab 1's regression class**, built from the lab's own notebooks with the recipes in
  ``tests/submissions/lab1_rooflines.py`` (honest ones and every known attack on a real lab),
  with a short cell limit and one hanging cell per submission, so that the hangs are waited
  for in parallel;
* **an attack class** on a small synthetic lab (``lab9_attacks``, four questions that need
  nothing heavier than torch): each attack of issue 22 beside an honest notebook, started from
  a course folder that holds the submissions, plus every kind of entry a submissions folder can
  hold (odd names, links, damaged files, copies), so each row can be checked;
* **the five real labs**: solutions score full marks and untouched notebooks zero, printing no
  traceback (lab 1's are part of its class above; labs 2 to 5 are graded all at once).

A kernel that zeroes its inputs, and a named tuple, are put to the real labs' tests in this
process, as ``otter run`` does (the class grader's answers behave the same way).

Each row of ``grades.csv`` is then checked: honest submissions score as they should, each attack
scores what it deserves (0 for what it tampered with, or UNGRADED "tampering detected"), crashes
and hangs cost only their own questions, no hidden test or file outside the sandbox reaches the
results, and nothing outside the sandbox changed. Unit tests of the wire, the sandbox's mounts,
the canary and the submission finder run in this process.
"""

from __future__ import annotations

import csv
import gc
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

from gpuperf.classroom import canary, grade, sandbox, wire
from gpuperf.classroom.submissions import find_submissions

pytestmark = pytest.mark.slow  # grades a class of submissions in sandboxes

ROOT = Path(__file__).resolve().parents[1]
LABS = ROOT / "labs"
LAB = LABS / "lab1_rooflines"
RECIPES = runpy.run_path(str(ROOT / "tests" / "submissions" / "lab1_rooflines.py"))["RECIPES"]
QUESTIONS = ["q1", "q2", "q3", "q4", "q5", "q6"]
#: Lab 1's class has cells that never end: each costs one cell limit, so the limit is short, yet
#: ten times what an honest cell of lab 1 needs (a busy machine must not stop honest cells).
TIMEOUT_S, CELL_TIMEOUT_S = "240", "30"
#: Classes with no hanging cell get limits that are only hang guards (generous, for busy CI).
GUARD_LIMITS = ("--timeout", "600", "--cell-timeout", "120")
#: Hang guard of one grading command.
COMMAND_TIMEOUT_S = 900


# ------------------------------------------------------------------------------ building


def _check_cells(nb) -> dict[str, int]:
    """Question → index of its ``grader.check`` cell."""
    return {
        cell.source.strip().split('"')[1]: index
        for index, cell in enumerate(nb.cells)
        if cell.cell_type == "code" and cell.source.strip().startswith('grader.check("')
    }


def _fill(source: str, places: dict[str, str]) -> str:
    for key, value in places.items():
        source = source.replace("{" + key + "}", value)
    return source


def build(recipe: dict, target: Path, lab: Path = LAB, places: dict | None = None) -> Path:
    """The notebook a recipe describes, built from ``lab``'s notebooks, written to ``target``.

    ``answers`` replaces a question's answer cell, ``substitute`` replaces text in it, ``after``
    inserts cells after a question's check cell (``"start"``: after the cell that creates the
    grader). ``{labs}`` in a source becomes the folder that holds ``lab``, and each key of
    ``places`` its value."""
    places = {"labs": str(lab.parent), **(places or {})}
    base = {
        "solution": lab / "autograder" / f"{lab.name}.ipynb",
        "student": lab / "student" / f"{lab.name}.ipynb",
    }[recipe["base"]]
    nb = nbformat.read(base, as_version=4)
    checks = _check_cells(nb)

    def answer_cell(question: str) -> int:
        index = checks[question] - 1
        while nb.cells[index].cell_type != "code":
            index -= 1
        return index

    for question, source in recipe.get("answers", {}).items():
        nb.cells[answer_cell(question)].source = _fill(source, places)
    for question, pairs in recipe.get("substitute", {}).items():
        cell = nb.cells[answer_cell(question)]
        for old, new in pairs:
            assert old in cell.source, f"{question}: {old!r} is not in the answer cell"
            cell.source = cell.source.replace(old, _fill(new, places))
    imports = next(i for i, c in enumerate(nb.cells) if "lab_grader(" in c.source)
    positions = {"start": imports, **checks}
    for where, sources in sorted(
        recipe.get("after", {}).items(), key=lambda item: -positions[item[0]]
    ):
        for source in reversed(sources):
            cell = nbformat.v4.new_code_cell(_fill(source, places))
            nb.cells.insert(positions[where] + 1, cell)
    for index, cell in enumerate(nb.cells):
        cell["id"] = f"cell-{index:03d}"
    nbformat.write(nb, target)
    return target


def _fingerprint_files(lab: Path) -> dict[str, str]:
    """Hashes of what no submission may change: the lab's tests and hidden tests."""
    return {str(p): hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(lab.rglob("*.py"))}


def _command(*args: str) -> list[str]:
    return [sys.executable, "-m", "gpuperf.grading", "grade", *args]


def run_grade(*args: str, env: dict | None = None, cwd: Path = ROOT):
    return subprocess.run(
        _command(*args),
        capture_output=True,
        text=True,
        timeout=COMMAND_TIMEOUT_S,
        cwd=cwd,
        env=os.environ | (env or {}),
    )


class Started:
    """A grading command running in the background, its output going to a log file; classes
    with no tight time limit are graded at the same time, each test waiting for its own."""

    def __init__(self, args: list[str], log: Path, cwd: Path = ROOT) -> None:
        self.log = log
        with open(log, "w") as handle:
            self.process = subprocess.Popen(
                _command(*args), stdout=handle, stderr=subprocess.STDOUT, cwd=cwd
            )

    def wait(self) -> str:
        """The command's output, once it has ended (successfully)."""
        code = self.process.wait(timeout=COMMAND_TIMEOUT_S)
        output = self.log.read_text()
        assert code == 0, output[-3000:]
        return output


def read_rows(csv_path: Path) -> dict[str, dict[str, str]]:
    with open(csv_path, newline="") as handle:
        return {row["student"]: row for row in csv.DictReader(handle)}


def results_of(out: Path, student: str) -> dict:
    return json.loads((out / student / "results.json").read_text())


# ------------------------------------------------------------------------------ lab 1's class


@pytest.fixture(scope="module")
def lab(tmp_path_factory) -> Path:
    """A private copy of lab 1 (what the attacks try to rewrite; the repository's stays safe)."""
    target = tmp_path_factory.mktemp("labs") / LAB.name
    shutil.copytree(LAB, target)
    return target


@pytest.fixture(scope="module")
def graded_class(tmp_path_factory, lab):
    """Grade lab 1's regression class once: (rows by student, OUT/<lab> folder, files before,
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
        str(lab), str(submissions), "--out", str(out), "--jobs", "6",
        "--timeout", TIMEOUT_S, "--cell-timeout", CELL_TIMEOUT_S,
    )  # fmt: skip
    after = _fingerprint_files(lab)
    assert result.returncode == 0, result.stdout + result.stderr
    rows = read_rows(out / LAB.name / "grades.csv")
    return rows, out / LAB.name, before, after, result.stdout


def test_one_row_per_submission_with_fixed_columns(graded_class) -> None:
    rows, out, *_ = graded_class
    expected = set(RECIPES) | {
        "wrong_lab", "no_metadata", "unreadable", "empty_folder", "in_a_folder"
    }  # fmt: skip
    assert set(rows) == expected
    with open(out / "grades.csv", newline="") as handle:
        header = next(csv.reader(handle))
    assert header == ["student", "submission", "status", "reason", *QUESTIONS, "total",
                      "max_total", "identical_to", "sandbox", "notes"]  # fmt: skip
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
    results = results_of(out, name)
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


def _hidden_only_lines(lab: Path) -> set[str]:
    autograder = lab / "autograder"
    hidden_lines = {
        line.strip()
        for path in [autograder / "hidden_tests.py", *(autograder / "tests").glob("*.py")]
        for line in path.read_text().splitlines()
        if len(line.strip()) > 30
    }
    public = "\n".join(p.read_text() for p in (lab / "student" / "tests").glob("*.py"))
    return {line for line in hidden_lines if line not in public}


def test_feedback_never_contains_hidden_tests(graded_class, lab) -> None:
    rows, out, *_ = graded_class
    hidden_only = _hidden_only_lines(lab)
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
        str(lab), str(submissions), "--out", str(tmp_path / "out"), *GUARD_LIMITS,
        env={"GPUPERF_SANDBOX": "fallback", "GPUPERF_CGROUP": "off"},
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    (row,) = read_rows(tmp_path / "out" / LAB.name / "grades.csv").values()
    assert (row["sandbox"], row["status"], row["total"]) == ("fallback", "GRADED", "12"), row
    # no cgroup either (issue 39): said once, with why; the canary is timed by /proc
    assert result.stdout.count("no cgroup: cgroups are switched off") == 1, result.stdout
    assert result.stdout.count("the fallback sandbox is used: GPUPERF_SANDBOX") == 1
    assert "canary" not in row["notes"], row


def test_bubblewrap_is_used_in_ci() -> None:
    if os.environ.get("CI") != "true" and sandbox.mechanism() != "bwrap":
        pytest.skip("bubblewrap is not installed here (CI installs it: .ci/run)")
    assert sandbox.mechanism() == "bwrap"


# ------------------------------------------------------------------------------ the attack class

SYNTHETIC = "lab9_attacks"


def _ok_test(name: str, cases: list[str], points: int = 2) -> str:
    """An otter OK-format test file with public doctest ``cases`` sharing ``points``."""
    spec = {
        "name": name,
        "points": points,
        "suites": [
            {
                "cases": [{"code": code, "hidden": False, "locked": False} for code in cases],
                "scored": True,
                "setup": "",
                "teardown": "",
                "type": "doctest",
            }
        ],
    }
    return f"OK_FORMAT = True\ntest = {spec!r}\n"


SYNTHETIC_TESTS = {
    # ±inf is within any relative tolerance of a finite number: it must be refused
    "q1": [
        ">>> from gpuperf.grading import check_close\n>>> check_close('value', value, 2.5)\n",
        ">>> from gpuperf.grading import check_mapping\n"
        ">>> check_mapping('table', table, {'a': 1.0, 'b': 3.0})\n",
    ],
    # a torch.dtype is passed to the notebook, a named tuple comes back as one
    "q2": [
        ">>> import torch\n>>> from gpuperf.grading import call, check_true\n"
        ">>> _y = call('cast', cast, [1.0, 2.0], torch.float16)\n"
        ">>> check_true(_y.dtype == torch.float16 and _y.tolist() == [1.0, 2.0], 'cast')\n",
        ">>> from gpuperf.grading import call, check_true, safe_repr\n"
        ">>> _s = call('stats', stats, 4)\n"
        ">>> check_true(isinstance(_s, tuple) and _s.n == 4 and _s == (4, 2.0), safe_repr(_s))\n",
    ],
    # what a function writes into a tensor argument comes back, guard cells included; a
    # tensor with an autograd graph stays inspectable
    "q3": [
        ">>> import torch\n>>> buf = torch.full((10,), -1.0)\n>>> out = buf[2:8]\n"
        ">>> fill(out, 3.0)\n>>> assert torch.equal(out, torch.full((6,), 3.0)), out\n"
        ">>> assert buf[0] == -1 and buf[1] == -1 and buf[8] == -1 and buf[9] == -1, buf\n",
        ">>> import torch\n>>> x = torch.ones(3, requires_grad=True)\n>>> y = double(x)\n"
        ">>> assert y.grad_fn is not None\n"
        ">>> assert torch.equal(y.detach(), torch.full((3,), 2.0))\n",
    ],
    # an answer's size is bounded on the wire; shapes are compared before converting
    "q4": [
        ">>> import numpy as np\n>>> from gpuperf.grading import call, check_tensor\n"
        ">>> check_tensor('make(3)', call('make', make, 3), np.full(3, 7.0))\n",
    ],
}
#: The handed-out notebook: answer cells with ``...`` and the check cells after them.
SYNTHETIC_HANDOUT = [
    "import numpy as np\nimport torch\n",
    "value = ...\ntable = ...\n",
    'grader.check("q1")',
    "def cast(x, dtype):\n    ...\n\n\ndef stats(n):\n    ...\n",
    'grader.check("q2")',
    "def fill(out, value):\n    ...\n\n\ndef double(x):\n    ...\n",
    'grader.check("q3")',
    "def make(n):\n    ...\n",
    'grader.check("q4")',
]
SYNTHETIC_SOLUTIONS = {
    "q1": "value = 2.5\ntable = {'a': 1.0, 'b': 3.0}\n",
    "q2": "from collections import namedtuple\n\nStats = namedtuple('Stats', 'n mean')\n\n\n"
    "def cast(x, dtype):\n    return torch.tensor(x, dtype=dtype)\n\n\n"
    "def stats(n):\n    return Stats(n, n / 2)\n",
    "q3": "def fill(out, value):\n    out.fill_(value)\n\n\ndef double(x):\n    return 2 * x\n",
    "q4": "def make(n):\n    return torch.full((n,), 7.0)\n",
}
# Writes past the end of its output (what an unmasked store does).
SPILL = "def fill(out, value):\n    out._base.fill_(value)\n\n\ndef double(x):\n    return 2 * x\n"
SECRET = "TOP-SECRET-0xC0FFEE: nothing outside the sandbox may reach the results"

# A canary reply nested deeper than any JSON parser's stack (RecursionError, not a WireError).
DEEP_JSON_CANARY = """
import gpuperf.classroom.wire as _wire

_dumps = _wire.dumps


def _forged(message):
    value = message.get("value")
    if isinstance(value, dict) and "math.isclose origin" in value:
        return b'{"ok": true, "value": ' + b"[" * 200000 + b"]" * 200000 + b"}\\n"
    return _dumps(message)


_wire.dumps = _forged
"""
# A fingerprint taken while everything was pristine (torch imported), replayed after patching.
FORGED_CANARY = """
import gc
import math

from gpuperf.classroom import canary

_saved = canary.fingerprint()
_runner = next(o for o in gc.get_objects() if type(o).__name__ == "Runner")
type(_runner).op_canary = lambda self, request: {"ok": True, "value": _saved, "torch": True}
math.isclose = lambda *a, **k: True
"""
# The classmate's notebook, read through the folder the command was started from.
COPY_CLASSMATE = """
import glob, json

_found = glob.glob("{course}/submissions/right.ipynb") + glob.glob("{course}/**/right.ipynb")
for _path in _found:
    for _cell in json.load(open(_path))["cells"]:
        _source = "".join(_cell["source"])
        if _cell["cell_type"] == "code" and "grader" not in _source:
            exec(_source)
print("copied", _found)
"""
# Everything the grader might copy out of the sandbox, made a link to a file outside it.
LINK_EVERYTHING = """
import os

for _name in ["output.log", "results.json", "grading.log", "feedback.txt", "sandbox.log"]:
    _path = os.path.join(os.path.expanduser("~"), _name)
    if os.path.lexists(_path):
        os.remove(_path)
    os.symlink("{secret}", _path)
print("linked", sorted(os.listdir(os.path.expanduser("~"))))
"""
# The sandbox's own size check switched off: the grader must bound the answer itself.
HUGE_VIEW = """
import gpuperf.classroom.wire as _wire

_wire._check_elements = lambda shape: None


def make(n):
    return torch.zeros(1).expand(2**28)
"""

# Answers that attack the checks, each in its own question: ±inf in three forms (q1), a write
# past the end of an output (q3, what an unmasked store does: 1 of 2 cases), a view of 2**28
# elements with the sandbox's own size check switched off (q4).
BAD_ANSWERS = {
    "q1": "value = torch.tensor(float('inf'))\n"
    "table = {'a': np.float64('inf'), 'b': np.array([np.inf])}\n",
    "q3": SPILL,
    "q4": HUGE_VIEW,
}
#: The class: honest notebooks and attacks, what each must score (per question) and its status.
ATTACKS = {
    "right": {"answers": SYNTHETIC_SOLUTIONS, "scores": [2, 2, 2, 2]},
    "twin": {"answers": SYNTHETIC_SOLUTIONS, "scores": [2, 2, 2, 2]},
    "bad_answers": {"answers": BAD_ANSWERS, "scores": [0, 0, 1, 0]},
    # out of the sandbox: links to a file outside, a classmate's notebook read from the folder
    # the command was started from
    "escape": {"start": [LINK_EVERYTHING], "after": [COPY_CLASSMATE], "scores": [0, 0, 0, 0]},
    "forged_canary": {"start": [FORGED_CANARY], "scores": [0, 0, 0, 0], "tampering": True},
    "deep_json_canary": {"start": [DEEP_JSON_CANARY], "scores": [0, 0, 0, 0], "tampering": True},
}
#: Names that collide once cleaned up, start with a formula character or a dot, or shout.
ODD_NAMES = ["x y", "x_y", "x_y-2", ".dotted", "+1+2", "@SUM(A1)", "=1+1", "-x"]


def _synthetic_notebook(lab_name: str, cells: list[str]) -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook()
    nb.metadata["otter"] = {"assignment_name": lab_name}
    nb.cells = [nbformat.v4.new_code_cell(source) for source in cells]
    for index, cell in enumerate(nb.cells):
        cell["id"] = f"cell-{index:03d}"
    return nb


def _attack_notebook(attack: dict, places: dict[str, str]) -> nbformat.NotebookNode:
    cells = list(SYNTHETIC_HANDOUT)
    for question, source in attack.get("answers", {}).items():
        cells[SYNTHETIC_HANDOUT.index(f'grader.check("{question}")') - 1] = source
    cells[1:1] = [_fill(source, places) for source in attack.get("start", [])]
    cells += [_fill(source, places) for source in attack.get("after", [])]
    return _synthetic_notebook(SYNTHETIC, cells)


@pytest.fixture(scope="module")
def synthetic_lab(tmp_path_factory) -> Path:
    lab = tmp_path_factory.mktemp("synthetic") / SYNTHETIC
    (lab / "student").mkdir(parents=True)
    (lab / "autograder" / "tests").mkdir(parents=True)
    for question, cases in SYNTHETIC_TESTS.items():
        (lab / "autograder" / "tests" / f"{question}.py").write_text(_ok_test(question, cases))
    nbformat.write(
        _synthetic_notebook(SYNTHETIC, SYNTHETIC_HANDOUT), lab / "student" / f"{SYNTHETIC}.ipynb"
    )
    solution = _attack_notebook({"answers": SYNTHETIC_SOLUTIONS}, {})
    nbformat.write(solution, lab / "autograder" / f"{SYNTHETIC}.ipynb")
    return lab


def _start_attack_class(tmp_path_factory, synthetic_lab) -> tuple[Started, Path, list[str]]:
    """Build the attack class in a course folder that holds ``submissions/`` (the classmates'
    notebooks) and a secret file, and start grading it from there."""
    course = tmp_path_factory.mktemp("course")
    submissions = course / "submissions"
    submissions.mkdir()
    secret = course / "secret.txt"
    secret.write_text(SECRET)
    places = {"course": str(course), "secret": str(secret)}
    for name, attack in ATTACKS.items():
        nbformat.write(_attack_notebook(attack, places), submissions / f"{name}.ipynb")
    for index, name in enumerate([*ODD_NAMES, "Upper"]):
        other = _synthetic_notebook(f"other-{index}", ["x = 1\n"])
        suffix = ".IPYNB" if name == "Upper" else ".ipynb"
        nbformat.write(other, submissions / f"{name}{suffix}")
    # links: to a classmate, to the solutions, inside a folder, to a folder
    (submissions / "link_to_classmate.ipynb").symlink_to("right.ipynb")
    (submissions / "link_to_solutions.ipynb").symlink_to(
        synthetic_lab / "autograder" / f"{SYNTHETIC}.ipynb"
    )
    (submissions / "linked_inside").mkdir()
    (submissions / "linked_inside" / f"{SYNTHETIC}.ipynb").symlink_to(submissions / "right.ipynb")
    (submissions / "link_to_folder").symlink_to(submissions / "linked_inside")
    # damaged files: a cell whose source is an int, one 70 MB cell, and not a notebook at all
    damaged = json.loads(nbformat.writes(_attack_notebook({"answers": SYNTHETIC_SOLUTIONS}, {})))
    damaged["cells"][1]["source"] = 42
    (submissions / "int_source.ipynb").write_text(json.dumps(damaged))
    damaged["cells"][1]["source"] = "x = 1  # " + "a" * 70_000_000
    (submissions / "huge_cell.ipynb").write_text(json.dumps(damaged))
    (submissions / "notes.txt").write_text("the notebook is attached")
    entries = sorted(os.listdir(submissions))
    out = course / "out"
    args = [str(synthetic_lab), "submissions", "--out", str(out), "--jobs", "3", *GUARD_LIMITS]
    return Started(args, course / "grade.log", cwd=course), out / SYNTHETIC, entries


def _start_real_labs(tmp_path_factory) -> dict[str, tuple[Started, Path]]:
    """Start grading labs 2 to 5's solutions and untouched notebooks (lab 1's class holds its
    own), one command per lab: lab → (its command, OUT/<lab>)."""
    work = tmp_path_factory.mktemp("real")
    started = {}
    for name in REAL_LABS:
        if name == LAB.name:
            continue
        lab = LABS / name
        submissions = work / name
        submissions.mkdir()
        build({"base": "solution"}, submissions / "solution.ipynb", lab)
        build({"base": "student"}, submissions / "untouched.ipynb", lab)
        args = [str(lab), str(submissions), "--out", str(work / "out"), "--jobs", "1",
                *GUARD_LIMITS]  # fmt: skip
        started[name] = (Started(args, work / f"{name}.log"), work / "out" / name)
    return started


@pytest.fixture(scope="module")
def started_classes(tmp_path_factory, synthetic_lab):
    """The attack class and the real labs, graded at the same time (their limits are hang
    guards only, so sharing the CPU cannot change an outcome)."""
    started = {
        "attacks": _start_attack_class(tmp_path_factory, synthetic_lab),
        "labs": _start_real_labs(tmp_path_factory),
    }
    yield started
    commands = [started["attacks"][0], *(command for command, _ in started["labs"].values())]
    for command in commands:  # a failed or interrupted session leaves nothing running
        if command.process.poll() is None:
            command.process.kill()
            command.process.wait()


@pytest.fixture(scope="module")
def attacked_class(started_classes):
    """The attack class, graded: (rows, OUT/<lab>, the entries of its folder, the output)."""
    command, out, entries = started_classes["attacks"]
    output = command.wait()
    return read_rows(out / "grades.csv"), out, entries, output


@pytest.mark.parametrize("name", sorted(ATTACKS))
def test_attack_scores_what_it_deserves(attacked_class, name: str) -> None:
    """Each attack of issue 22 beside honest notebooks: the dtype and the named tuple cross
    (``right`` scores 8/8), ±inf in any form is refused, a view of 2**28 elements costs the
    grader no memory, a classmate's notebook is out of sight wherever the command is started,
    links in the sandbox lead nowhere, and a forged or unparsable canary is tampering."""
    if name == "escape" and sandbox.mechanism() != "bwrap":
        pytest.skip("the fallback sandbox does not hide the file system (documented)")
    rows, out, *_ = attacked_class
    row, attack = rows[name], ATTACKS[name]
    log = (out / name / "grading.log").read_text()
    results = results_of(out, name)
    scores = [results["questions"][q]["score"] for q in SYNTHETIC_TESTS]
    assert scores == attack["scores"], f"{name}: {results['questions']}\n{log}"
    if attack.get("tampering"):
        assert row["status"] == "UNGRADED" and row["reason"].startswith("tampering detected"), row
    else:
        assert row["status"] == "GRADED" and not results["tampering"], f"{name}: {row}\n{log}"


def test_infinity_is_refused_in_every_form(attacked_class) -> None:
    _, out, *_ = attacked_class
    for case in results_of(out, "bad_answers")["questions"]["q1"]["cases"]:
        assert "is infinite" in case["output"], case["output"][-800:]


def test_a_replayed_canary_is_caught_by_its_challenge(attacked_class) -> None:
    _, out, *_ = attacked_class
    tampering = results_of(out, "forged_canary")["tampering"]
    assert any(line.startswith("challenge ") for line in tampering), tampering
    deep = results_of(out, "deep_json_canary")["tampering"]
    assert any("RecursionError" in line or "protocol" in line for line in deep), deep


def test_a_huge_answer_never_reaches_the_graders_memory(attacked_class) -> None:
    _, out, *_ = attacked_class
    honest = results_of(out, "right")["grader_max_rss_mb"]
    attacked = results_of(out, "bad_answers")
    assert attacked["grader_max_rss_mb"] < honest + 200, (honest, attacked["grader_max_rss_mb"])
    (case,) = attacked["questions"]["q4"]["cases"]
    assert "limit" in case["output"], case["output"][-500:]


def test_nothing_outside_the_sandbox_reaches_the_results(attacked_class) -> None:
    _, out, *_ = attacked_class
    for path in out.rglob("*"):
        if path.is_symlink():
            pytest.fail(f"the results hold a link: {path}")
        if path.is_file():
            text = path.read_bytes()
            assert SECRET.encode() not in text, f"{path} holds the secret file's content"
    printed = (out / "escape" / "output.log").read_text()
    assert "linked" in printed, printed[-1000:]
    if sandbox.mechanism() == "bwrap":  # the fallback hides no file (documented)
        assert "copied []" in printed, f"the sandbox saw the submissions folder: {printed[-1000:]}"


def test_every_entry_has_exactly_one_row_with_a_unique_name(attacked_class) -> None:
    rows, out, entries, _ = attacked_class
    assert len(rows) == len(entries), (sorted(rows), entries)
    submitted = sorted(row["submission"].removeprefix("'") for row in rows.values())
    assert submitted == entries
    folders = {row["student"].lower() for row in rows.values()}
    assert len(folders) == len(rows), "two rows share a results folder"
    by_entry = {row["submission"].removeprefix("'"): row for row in rows.values()}
    for index, name in enumerate([*ODD_NAMES, "Upper"]):
        entry = f"{name}{'.IPYNB' if name == 'Upper' else '.ipynb'}"
        row = by_entry[entry]
        # the row, its folder and its results all belong to this file
        assert (
            row["reason"] == f"wrong lab: the notebook is 'other-{index}', this is {SYNTHETIC!r}"
        )
        assert results_of(out, row["student"])["submission"].endswith(entry)
    assert by_entry["x_y.ipynb"]["student"] == "x_y"
    assert by_entry["x_y-2.ipynb"]["student"] == "x_y-2"
    assert by_entry["x y.ipynb"]["student"].startswith("x_y~")


def test_no_cell_of_the_csv_is_a_formula(attacked_class) -> None:
    rows, out, *_ = attacked_class
    with open(out / "grades.csv", newline="") as handle:
        for row in csv.reader(handle):
            for cell in row:
                assert not cell.startswith(grade.FORMULA_START), row
    by_entry = {row["submission"]: row for row in rows.values()}
    assert by_entry["'+1+2.ipynb"]["student"].startswith("_+1+2~")
    assert by_entry["'=1+1.ipynb"]["student"].startswith("_1+1~")


def test_links_and_damaged_files_are_ungraded_with_the_reason(attacked_class) -> None:
    rows, *_ = attacked_class
    by_entry = {row["submission"]: row for row in rows.values()}
    for entry in ("link_to_classmate.ipynb", "link_to_solutions.ipynb", "link_to_folder",
                  "linked_inside"):  # fmt: skip
        row = by_entry[entry]
        assert row["status"] == "UNGRADED" and "symbolic link" in row["reason"], row
    assert "right.ipynb" in by_entry["link_to_classmate.ipynb"]["reason"]
    assert "the source of cell 1 is an int" in by_entry["int_source.ipynb"]["reason"]
    assert "holds 70.0 MB of source" in by_entry["huge_cell.ipynb"]["reason"]
    assert by_entry["notes.txt"]["reason"].startswith("not a notebook")
    for entry in ("int_source.ipynb", "huge_cell.ipynb"):
        assert by_entry[entry]["status"] == "UNGRADED", by_entry[entry]


def test_identical_submissions_are_flagged_not_penalised(attacked_class) -> None:
    rows, *_ = attacked_class
    assert rows["right"]["identical_to"] == "twin" and rows["twin"]["identical_to"] == "right"
    assert rows["right"]["total"] == rows["twin"]["total"] == "8"
    assert rows["bad_answers"]["identical_to"] == ""


# ------------------------------------------------------------------------------ the five labs

#: Attacks on the real labs' kernels: the kernel zeroes its inputs (and writes zeros), which
#: passed while references were computed after the kernel ran (substitutions in the solution's
#: answer cell); and lab 3's ``wave_stats`` returning a named tuple, a right answer.
ZEROING = {
    "lab2_fusion": {
        "q1": [
            (
                "    y = tl.maximum(a * x + b, 0.0)\n"
                "    tl.store(y_ptr + offs, y, mask=mask)  # write n·4 bytes",
                "    zero = tl.zeros((BLOCK_SIZE,), dtype=tl.float32)\n"
                "    tl.store(x_ptr + offs, zero, mask=mask)\n"
                "    tl.store(b_ptr + offs, zero, mask=mask)\n"
                "    tl.store(y_ptr + offs, zero, mask=mask)",
            )
        ]
    },
    "lab3_tiled_matmul": {
        "q1": [
            (
                '        acc += tl.dot(a, b, input_precision="ieee")',
                "        tl.store(a_ptr + offs_m[:, None] * stride_am + (k0 + offs_k[None, :])"
                " * stride_ak, tl.zeros((BLOCK_M, BLOCK_K), dtype=tl.float32), mask=a_mask)\n"
                "        tl.store(b_ptr + (k0 + offs_k[:, None]) * stride_bk + offs_n[None, :]"
                " * stride_bn, tl.zeros((BLOCK_K, BLOCK_N), dtype=tl.float32), mask=b_mask)",
            )
        ],
    },
}
NAMED_TUPLE = {
    "lab3_tiled_matmul": {
        "q3": [
            (
                "def wave_stats(",
                "from collections import namedtuple\n\n"
                "WaveStats = namedtuple('WaveStats', 'tiles waves efficiency')\n\n\n"
                "def wave_stats(",
            ),
            (
                "    return tiles, waves, tiles / (waves * sms)",
                "    return WaveStats(tiles, waves, tiles / (waves * sms))",
            ),
        ],
    }
}
REAL_LABS = sorted(p.name for p in LABS.glob("lab[0-9]*_*") if (p / f"{p.name}.ipynb").is_file())


@pytest.fixture(scope="module")
def real_labs(started_classes) -> dict[str, tuple[dict, Path]]:
    """Labs 2 to 5's solutions and untouched notebooks, graded: lab → (rows, OUT/<lab>)."""
    graded = {}
    for name, (command, out) in started_classes["labs"].items():
        command.wait()
        graded[name] = (read_rows(out / "grades.csv"), out)
    return graded


@pytest.fixture(scope="module")
def every_lab(real_labs, graded_class) -> dict[str, tuple[dict, Path]]:
    """:func:`real_labs` plus lab 1's solutions and untouched notebook from its class."""
    rows, out, *_ = graded_class
    lab1 = {"solution": rows["master"], "untouched": rows["untouched"]}
    return {**real_labs, LAB.name: (lab1, out)}


@pytest.mark.parametrize("name", REAL_LABS)
def test_real_lab_solutions_score_full_marks(every_lab, name: str) -> None:
    rows, _ = every_lab[name]
    row = rows["solution"]
    assert row["status"] == "GRADED" and row["total"] == row["max_total"], row


@pytest.mark.parametrize("name", REAL_LABS)
def test_real_lab_untouched_scores_zero_without_a_traceback(every_lab, name: str) -> None:
    """An untouched notebook earns nothing, and none of its cells raises: the course's own print
    lines say "not answered yet" instead (issue 21)."""
    rows, out = every_lab[name]
    row = rows["untouched"]
    assert row["status"] == "GRADED" and row["total"] == "0", row
    assert " raised " not in row["notes"], row["notes"]
    assert "Not answered yet" in (out / row["student"] / "output.log").read_text()


def _answers_module(lab: Path, substitutions: dict, where: Path):
    """The solution's answer cells of ``lab``, changed by ``substitutions`` (question → [(old,
    new)]), as a module (Triton kernels need a file): the namespace otter gives the tests."""
    import importlib.util

    nb = nbformat.read(lab / "autograder" / f"{lab.name}.ipynb", as_version=4)
    checks = _check_cells(nb)
    header = (
        "from gpuperf.runtime import configure_triton\nconfigure_triton()\n"
        "import math\nimport numpy as np\nimport torch\nimport triton\n"
        "import triton.language as tl\nfrom gpuperf import chip\n"
        "from gpuperf.grading import all_answered, padded\nfrom gpuperf.runtime import DEVICE\n"
    )
    sources = [header]
    for question, pairs in substitutions.items():
        index = checks[question] - 1
        while nb.cells[index].cell_type != "code":
            index -= 1
        source = nb.cells[index].source
        for old, new in pairs:
            assert old in source, f"{question}: {old!r} is not in the answer cell"
            source = source.replace(old, new)
        sources.append(source)
    path = where / f"answers_{lab.name}.py"
    path.write_text("\n\n".join(sources))
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return vars(module)


def _run_question(lab: Path, question: str, namespace: dict, monkeypatch) -> list[bool]:
    """Each test case of ``question`` (public and hidden) run on ``namespace``, in this process,
    as ``otter run`` runs them (the class grader's answers behave the same: what a kernel writes
    into its arguments comes back into the test's tensors)."""
    from gpuperf.classroom.tester import load_tests, run_case

    monkeypatch.chdir(lab / "autograder")  # run_hidden finds hidden_tests.py here
    cases = load_tests(lab / "autograder" / "tests")[question]
    return [run_case(question, case.code, dict(namespace))[0] for case in cases]


@pytest.mark.parametrize("name", sorted(ZEROING))
def test_a_kernel_that_zeroes_its_inputs_fails_every_case(name, tmp_path, monkeypatch) -> None:
    """References are computed before the kernel runs: zeroed inputs and a zero output fail
    the public and the hidden case (they passed lab 2 and lab 3's public case before); the
    unchanged solution passes the same cases, so the harness can tell."""
    lab = LABS / name
    solution = _answers_module(lab, {"q1": []}, tmp_path)
    # every case: the public one, the hidden one and the efficiency case (issue 35)
    assert _run_question(lab, "q1", solution, monkeypatch) == [True, True, True]
    zeroing = _answers_module(lab, ZEROING[name], tmp_path)
    assert _run_question(lab, "q1", zeroing, monkeypatch) == [False, False, False]


def test_a_named_tuple_is_a_right_tuple(tmp_path, monkeypatch) -> None:
    lab = LABS / "lab3_tiled_matmul"
    answers = _answers_module(lab, NAMED_TUPLE[lab.name], tmp_path)
    assert type(answers["wave_stats"](2048, 2048, 128, 128, "T4")) is not tuple
    assert _run_question(lab, "q3", answers, monkeypatch) == [True, True]


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
    (row,) = read_rows(out / LAB.name / "grades.csv").values()
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
        (["LAB", "SUBS", "--memory", "8"], "--memory=8 must be an integer ≥ 16"),
        (["LAB", "SUBS", "--cpus", "0.001"], "--cpus=0.001 must be between 0.01 and 4096"),
        (["LAB", "SUBS", "--processes", "0"], "--processes must be > 0"),
        (["LAB", "EMPTY"], "no submissions"),
        (["LAB", "SUBS", "--out", "SUBS/results"], "must not be inside SUBMISSIONS_DIR"),
    ],
)
def test_arguments_are_validated(tmp_path, capsys, args: list[str], message: str) -> None:
    (tmp_path / "subs").mkdir()
    (tmp_path / "subs" / "a.ipynb").write_text("{}")
    (tmp_path / "empty").mkdir()
    names = {"LAB": str(LAB), "SUBS": str(tmp_path / "subs"), "EMPTY": str(tmp_path / "empty"),
             "missing": str(tmp_path / "missing"), "labs": str(ROOT / "labs"),
             "SUBS/results": str(tmp_path / "subs" / "results")}  # fmt: skip
    if "--out" not in args:
        args = [*args, "--out", str(tmp_path / "out")]
    with pytest.raises(SystemExit) as exit_:
        grade.main(["grade", *[names.get(a, a) for a in args]])
    assert exit_.value.code == 2 and message in capsys.readouterr().err


def test_both_entry_points_run_the_command() -> None:
    """``python -m gpuperf.grading`` (the documented one) and ``python -m gpuperf.classroom``."""
    for module in ("gpuperf.grading", "gpuperf.classroom"):
        done = subprocess.run([sys.executable, "-m", module, "grade", "--help"],
                              capture_output=True, text=True, timeout=120)  # fmt: skip
        assert done.returncode == 0 and "SUBMISSIONS" in done.stdout.upper(), done.stderr


# ------------------------------------------------------------------------------ submissions


def test_find_submissions_gives_every_entry_one_stable_unique_row(tmp_path) -> None:
    folder = tmp_path / "subs"
    folder.mkdir()
    names = ["x y.ipynb", "x_y.ipynb", "x_y-2.ipynb", ".dotted.ipynb", "Upper.IPYNB",
             "+1+2.ipynb", "@SUM(A1).ipynb", "=1+1.ipynb", "-x.ipynb", "ada.ipynb", "Ada.ipynb",
             "notes.txt", "é ü.ipynb"]  # fmt: skip
    for name in names:
        (folder / name).write_text("{}")
    (folder / "ada").mkdir()  # a folder named like a notebook file
    (folder / "ada" / "lab1_rooflines.ipynb").write_text("{}")
    (folder / "two").mkdir()
    (folder / "two" / "a.ipynb").write_text("{}")
    (folder / "two" / "b.ipynb").write_text("{}")
    (folder / "link.ipynb").symlink_to(folder / "x_y.ipynb")
    (folder / "with_link").mkdir()
    (folder / "with_link" / "lab1_rooflines.ipynb").symlink_to(folder / "x_y.ipynb")
    os.mkfifo(folder / "pipe.ipynb")
    first = find_submissions(folder, "lab1_rooflines")
    assert find_submissions(folder, "lab1_rooflines") == first  # stable
    assert sorted(s.entry for s in first) == sorted(os.listdir(folder))  # one row per entry
    students = [s.student for s in first]
    assert len({s.lower() for s in students}) == len(students), students
    by_entry = {s.entry: s for s in first}
    assert by_entry["x_y.ipynb"].student == "x_y" and by_entry["x_y-2.ipynb"].student == "x_y-2"
    assert by_entry["Upper.IPYNB"].notebook == folder / "Upper.IPYNB"
    assert by_entry[".dotted.ipynb"].notebook is not None
    for entry in ("ada.ipynb", "Ada.ipynb", "ada"):  # same name up to case: all made unique
        assert "~" in by_entry[entry].student, by_entry[entry]
    for student in students:
        assert student[0].isalnum() or student[0] == "_", student
        assert student == Path(student).name and "/" not in student
    assert by_entry["ada"].notebook == folder / "ada" / "lab1_rooflines.ipynb"
    assert by_entry["two"].problem.startswith("several notebooks")
    assert "symbolic link" in by_entry["link.ipynb"].problem
    assert "symbolic link" in by_entry["with_link"].problem
    assert by_entry["pipe.ipynb"].problem == "not a regular file or folder"
    assert by_entry["notes.txt"].problem.startswith("not a notebook")


def test_spreadsheet_safe_text() -> None:
    for text in ("=1+1", "+1", "-2", "@SUM(A1)", "\tx", "\rx"):
        assert grade.spreadsheet_safe(text) == "'" + text
    for text in ("ada", "", "1+1", "_=x"):
        assert grade.spreadsheet_safe(text) == text


def test_identical_code_is_flagged_except_the_handout() -> None:
    rows = [{"student": name} for name in ("a", "b", "c", "d", "e")]
    grade.flag_identical(rows, ["x", "x", "handout", "handout", None], "handout")
    assert [r["identical_to"] for r in rows] == ["b", "a", "", "", ""]


# ------------------------------------------------------------------------------ the sandbox


def test_sandbox_mounts_do_not_depend_on_the_working_directory(tmp_path, monkeypatch) -> None:
    """From a course folder holding ``submissions/`` (no ``labs/``, no ``.git``), the sandbox
    must see exactly what it sees from anywhere else (issue 22, attack 3)."""
    course = tmp_path / "course"
    (course / "submissions").mkdir(parents=True)
    views = []
    for where in (course, tmp_path):
        monkeypatch.chdir(where)
        monkeypatch.setattr(sys, "path", [str(where), *sys.path[1:]])
        views.append(sandbox._bwrap_args(sandbox.Limits()))
    assert views[0] == views[1]
    assert not any(str(course) in arg for arg in views[0]), views[0]
    assert str(sandbox.package_root() / "gpuperf") in views[0]


def test_output_log_keeps_the_first_bytes_and_counts_the_rest() -> None:
    from gpuperf.classroom.student import OutputLog

    log = OutputLog(limit=10)
    read, write = os.pipe()
    log.follow(os.fdopen(read, "rb"), b">")
    os.write(write, b"0123456789abcdef")
    os.close(write)
    assert log.text() == b">012345678\n[7 more bytes not kept]\n"


# ------------------------------------------------------------------------------ the canary


def test_canary_challenge_defeats_a_copied_fingerprint() -> None:
    now = canary.fingerprint(challenge=11)
    assert canary.fingerprint(challenge=11) == now  # deterministic for one challenge
    replayed = canary.fingerprint(challenge=12)
    changed = canary.differences(now, replayed)
    assert changed and all(line.startswith("challenge ") for line in changed), changed
    assert canary.differences(now, {"a": 1}) == [
        "the sandbox's reply to the canary is not a fingerprint"
    ]


# ------------------------------------------------------------------------------ the wire


def _round_trip(value):
    return wire.decode(wire.loads(wire.dumps({"v": wire.encode(value)}))["v"])


def test_wire_round_trips_data_and_refuses_code() -> None:
    import torch

    values = [
        None, True, 3, 2**80, 0.1, float("inf"), float("-inf"), "s", b"b", ..., 1 + 2j,
        [1, (2.5, "x")], {("relu", "T4"): "memory"}, {1, 2}, np.arange(6.0).reshape(2, 3),
        np.float32(1.5), torch.arange(4, dtype=torch.bfloat16), slice(1, None, 2), range(3, 9),
    ]  # fmt: skip
    for value in values:
        back = _round_trip(value)
        if isinstance(value, np.ndarray):
            np.testing.assert_array_equal(back, value)
        elif isinstance(value, torch.Tensor):
            assert back.dtype == value.dtype and torch.equal(back, value)
        else:
            assert back == value and type(back) is type(value), (value, back)
    assert np.isnan(_round_trip(float("nan")))
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


def test_wire_carries_the_plain_values_a_check_needs() -> None:
    """dtypes, devices, numpy dtypes and scalar types, built-in types and named tuples cross by
    value (lab 3 passes ``torch.float16`` to a student's function; a named tuple is a tuple)."""
    import collections

    import torch

    for value in (torch.float16, torch.bfloat16, torch.int64, torch.device("cpu"),
                  np.dtype("float32"), np.float16, int, float, bool):  # fmt: skip
        assert _round_trip(value) == value, value
    point = collections.namedtuple("Point", "x y")(1, 2.5)
    back = _round_trip(point)
    assert back == (1, 2.5) and isinstance(back, tuple) and (back.x, back.y) == (1, 2.5)
    assert type(back).__name__ == "Point"
    for bad in (
        {"~": "namedtuple", "name": "P", "fields": ["__class__"], "v": [1]},
        {"~": "namedtuple", "name": "import os", "fields": ["x"], "v": [1]},
        {"~": "dtype", "v": "__import__('os')"},
        {"~": "dtype", "v": "Tensor"},  # a torch attribute, but not a dtype
        {"~": "device", "v": "cpu; rm -rf /"},
        {"~": "npdtype", "v": "O"},
        {"~": "type", "v": "eval"},
    ):
        with pytest.raises(wire.WireError):
            wire.decode(bad)


def test_wire_bounds_every_answer_by_its_shape() -> None:
    """A stride-0 view is one number in memory but 2**28 as seen: refused on both sides before
    anything is expanded, and so is a message over the byte limit."""
    import torch

    huge = torch.zeros(1).expand(2**28)
    with pytest.raises(wire.WireError, match="over the limit"):
        wire.encode(huge)
    forged = wire.encode(torch.zeros(1).expand(4))
    forged["view"][0] = [2**28]
    with pytest.raises(wire.WireError, match="over the limit"):
        wire.decode(forged)
    with pytest.raises(wire.WireError, match="byte limit"):
        wire.dumps({"v": "x" * wire.MAX_MESSAGE_BYTES})


def test_wire_turns_any_unparsable_reply_into_a_wire_error() -> None:
    deep = b"[" * 200_000 + b"]" * 200_000
    for line in (deep, b'{"v": ' + deep + b"}", b"\xff\xfe", b"{"):
        with pytest.raises(wire.WireError):
            wire.loads(line)
    nested: list = []
    for _ in range(100_000):
        nested = [nested]
    with pytest.raises(wire.WireError):
        wire.dumps({"v": nested})
    del nested
    gc.collect()


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
