"""The class grader and efficiency cases (issue 35): never a silent pass.

``check_traffic`` counts the bytes a student's launch requests in Triton's interpreter. In the
class grader the launch runs in the sandbox, out of the checking process's sight, so the check
would pass without grading anything. The class grader therefore does not run efficiency cases:
every row says so in its notes, and their points are left out of the score and the maximum for
every student alike. The unit tests read the real labs' autograder tests; one small class (lab 2:
its solution and the same solution reading ``x`` twice) is graded with the real command.
"""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from gpuperf.classroom.tester import EFFICIENCY_NOTE, efficiency_note, load_tests

ROOT = Path(__file__).resolve().parents[1]
LABS = ROOT / "labs"


@pytest.mark.parametrize(
    ("lab", "expected"),
    [("lab1_rooflines", []), ("lab2_fusion", ["q1_traffic"]),
     ("lab3_tiled_matmul", ["q1_traffic"]), ("lab4_flashattention", ["q2_traffic"]),
     ("lab5_memory_hierarchy", ["q3_traffic"])],
)  # fmt: skip
def test_efficiency_cases_are_found_in_the_labs_tests(lab: str, expected: list[str]) -> None:
    questions = load_tests(LABS / lab / "autograder" / "tests")
    found = [c.efficiency for cases in questions.values() for c in cases if c.efficiency]
    assert found == expected
    note = efficiency_note(questions)
    if expected:
        question = expected[0].split("_")[0]
        (case,) = [c for c in questions[question] if c.efficiency]
        assert case.hidden and case.points > 0
        assert note.startswith(EFFICIENCY_NOTE) and f"of {question}'s points" in note
        assert "for every student alike" in note
    else:
        assert note == ""


def _grade(tmp_path: Path, notebooks: dict[str, nbformat.NotebookNode]) -> tuple[dict, Path]:
    lab = LABS / "lab2_fusion"
    submissions = tmp_path / "subs"
    submissions.mkdir()
    for name, nb in notebooks.items():
        nbformat.write(nb, submissions / f"{name}.ipynb")
    out = tmp_path / "out"
    result = subprocess.run(
        [sys.executable, "-m", "gpuperf.grading", "grade", str(lab), str(submissions),
         "--out", str(out), "--jobs", "2", "--timeout", "600", "--cell-timeout", "120"],
        capture_output=True, text=True, timeout=900, cwd=ROOT,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    with open(out / lab.name / "grades.csv", newline="") as handle:
        return {row["student"]: row for row in csv.DictReader(handle)}, out / lab.name


@pytest.mark.slow
def test_class_grader_says_efficiency_is_not_graded_and_scores_everyone_alike(tmp_path) -> None:
    solution = nbformat.read(LABS / "lab2_fusion" / "autograder" / "lab2_fusion.ipynb", 4)
    wasteful = nbformat.read(LABS / "lab2_fusion" / "autograder" / "lab2_fusion.ipynb", 4)
    old = "    y = tl.maximum(a * x + b, 0.0)"
    (cell,) = [c for c in wasteful.cells if c.cell_type == "code" and old in c.source]
    cell.source = cell.source.replace(
        old, "    y = tl.maximum(a * tl.load(x_ptr + offs, mask=mask) + b, 0.0)"
    )
    rows, out = _grade(tmp_path, {"honest": solution, "wasteful": wasteful})
    questions = load_tests(LABS / "lab2_fusion" / "autograder" / "tests")
    (left_out,) = [c.points for c in questions["q1"] if c.efficiency]
    for student in ("honest", "wasteful"):
        row = rows[student]
        assert row["status"] == "GRADED", row
        # the efficiency case is out of the maximum, and of the score, for both alike
        assert float(row["max_total"]) == pytest.approx(12 - left_out, rel=1e-5), row
        assert row["total"] == row["max_total"], row
        assert EFFICIENCY_NOTE in row["notes"], row
        results = json.loads((out / student / "results.json").read_text())
        cases = results["questions"]["q1"]["cases"]
        assert [c["graded"] for c in cases if "graded" in c] == [False]  # neither pass nor fail
        assert "not graded here (efficiency" in (out / student / "feedback.txt").read_text()
