"""Grade one submission: trusted tests, in a clean process, on answers fetched from a sandbox.

``python -m gpuperf.classroom.tester`` is started once per submission by
:mod:`gpuperf.classroom.grade` (a fresh process each time, so nothing one submission does can
persist into the next). It

1. reads the submission (:func:`~gpuperf.classroom.submissions.read_submission`: a regular
   file, never through a link, in a process of its own with a memory cap) and refuses it,
   with the reason, when it is unreadable, damaged, too complex to read, or its otter metadata
   names another lab or no lab;
2. builds the *reference namespace* from the instructor's copy of the lab (never from the
   submission): every top-level statement of the handed-out notebook that contains no ``...``
   placeholder is run here, so names such as ``np``, ``OPS``, ``CHIPS``, ``DEVICE`` or
   ``attention_ref`` mean what the instructor wrote, whatever the student redefined them to;
   names assigned by a statement with a placeholder are the *answers*;
3. runs the submission's code cells in a sandbox (:mod:`gpuperf.classroom.student`), each
   under a time limit enforced from outside;
4. runs each question's tests (the instructor's ``autograder/tests/q*.py``, otter's OK format)
   with Python's doctest *in this process*, answers fetched from the sandbox as data and the
   student's functions called there through proxies: the student's code cannot patch the
   checks, the tests, or this process. Every public case runs before any hidden one, so the
   message of a public case (handed back) cannot show what the notebook saw of a hidden one;
5. compares the sandbox's :func:`~gpuperf.classroom.canary.fingerprint` with this process's: a
   notebook that replaced ``isclose``, ``assert_close``, otter's ``run_doctest`` or a
   ``gpuperf.grading`` check is reported as "tampering detected"; a canary that runs out of
   time (measured in its sandbox's own CPU time) or memory is a note, never tampering;
6. reports, after every question and at the end, one line of JSON on its standard output
   (:meth:`Grader.save`): the results (``results.json``: every case, ``null`` for one not run
   yet), the feedback (``feedback.txt``: public tests' messages, escaped line by line; a hidden
   test says "passed" or "failed", never its code or output), the log and what the notebook
   printed (``output.log``, received through a pipe: this process never opens a path inside
   the sandbox, where the student could have left a link). The class command keeps the last
   complete line, so a run killed at the outer time limit keeps what completed, and writes the
   files itself: this process writes nothing to disk.

Points follow otter's rules for OK-format tests: a question's points are split equally between
its test cases unless a case states its own points.

Efficiency cases (``run_hidden("q1_traffic", ...)``: :func:`gpuperf.grading.check_traffic`,
:func:`~gpuperf.grading.check_sector_efficiency`) count the bytes the student's kernel requests
in Triton's interpreter. Counted in the submission's sandbox, those numbers would come from a
process the student's code controls; so they are counted in a second sandbox of the submission's
own (:mod:`.recount`), started before any of its cells run, where only the kernel's source runs,
once it has been checked to be Triton and nothing else (:mod:`.kernel_source`). In those cases
a kernel the submission defines with ``@triton.jit`` is that checked source
(:class:`~gpuperf.classroom.recount.CountedKernel`); every other name comes from the notebook as
usual. A kernel whose source is refused fails the case with the reason.
"""

from __future__ import annotations

import argparse
import ast
import builtins
import contextlib
import doctest
import io
import json
import os
import re
import resource
import sys
import time
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._validate import (
    choice,
    file_path,
    flag,
    instance,
    name_string,
    optional,
    positive_float,
    show,
)
from . import canary, sandbox
from .box import Box
from .kernel_source import KernelSource, KernelSourceError, kernel_names, kernel_source
from .recount import CountedKernel, CountingSandbox
from .student import CHECK_CELL, Notebook
from .submissions import SubmissionError, code_digest, read_submission
from .text import printable, quoted

MAX_OUTPUT_CHARS = 4000
#: Lines kept in ``grading.log``.
MAX_LOG_LINES = 2000


@dataclass
class Case:
    """One test case of a question: doctest code, whether it is hidden, its points."""

    code: str
    hidden: bool
    points: float

    def __post_init__(self) -> None:
        if not isinstance(self.code, str):
            raise TypeError(f"code={show(self.code)} must be a doctest (a string)")
        self.hidden = flag("hidden", self.hidden)
        self.points = positive_float("points", self.points, allow_zero=True)

    @property
    def efficiency(self) -> str:
        """The hidden efficiency case this runs (``"q1_traffic"``), or ``""``: its kernels are
        counted in a sandbox of their own (:mod:`.recount`)."""
        found = EFFICIENCY_CASE.search(self.code)
        return found.group(1) if found else ""


#: A hidden case that grades efficiency by counting (``run_hidden("q1_traffic", globals())``).
EFFICIENCY_CASE = re.compile(r"""run_hidden\(\s*['"](\w+_traffic)['"]""")


def _natural(path: Path) -> tuple[int, str]:
    digits = re.sub(r"\D", "", path.stem)
    return (int(digits) if digits else 0, path.stem)


def load_tests(tests_dir: Path) -> dict[str, list[Case]]:
    """Question → its cases, from otter OK-format files ``q1.py``, ... (instructor's copy)."""
    tests_dir = file_path("tests_dir", tests_dir)
    if not tests_dir.is_dir():
        raise FileNotFoundError(f"tests_dir={str(tests_dir)!r} is not a folder of tests")
    questions: dict[str, list[Case]] = {}
    for path in sorted(tests_dir.glob("*.py"), key=_natural):
        namespace: dict[str, Any] = {}
        exec(compile(path.read_text(), str(path), "exec"), namespace)
        spec = namespace["test"]
        cases = spec["suites"][0]["cases"]
        total = spec.get("points")
        stated = [c.get("points") for c in cases]
        if isinstance(total, list):
            stated, total = list(total), None
        fixed = sum(p for p in stated if p is not None)
        free = sum(p is None for p in stated)
        if total is not None:
            share = (total - fixed) / free if free else 0.0
        else:
            share = 1 / free if free and fixed == 0 else 0.0
        questions[spec["name"]] = [
            Case(c["code"], bool(c.get("hidden", True)), float(p if p is not None else share))
            for c, p in zip(cases, stated, strict=True)
        ]
    return questions


class AnswerNamespace(dict):
    """The namespace a test runs in: the instructor's references, then the notebook's answers.

    Names the references define are looked up here; any other name (``add_intensity``,
    ``roof``) is fetched from the sandboxed notebook the first time a test reads it, as data or
    as a proxy for a function (:class:`~gpuperf.classroom.student.Remote`) — unless
    ``kernels(name)`` (an efficiency case's) gives a counted kernel for it. Built-in names are
    never fetched. ``globals()`` inside a test is this object, so hidden tests that take answers
    with ``env[name]``, ``name in env`` or ``env.get(name)`` get them the same way.
    """

    def __init__(
        self, references: dict[str, Any], notebook: Notebook, kernels: Any = None
    ) -> None:
        if not isinstance(references, dict) or not all(isinstance(k, str) for k in references):
            raise TypeError(
                f"references={show(references)} must be a dict of names (strings) to values, "
                "the namespace reference_namespace() gives"
            )
        if not isinstance(notebook, Notebook):
            raise TypeError(f"notebook={show(notebook)} must be a running Notebook")
        if kernels is not None and not callable(kernels):
            raise TypeError(f"kernels={show(kernels)} must map a name to a counted kernel or None")
        super().__init__(references)
        self._notebook = notebook
        self._kernels = kernels
        self._missing: set[str] = set()

    def __missing__(self, name: str) -> Any:
        if (
            not isinstance(name, str)
            or name.startswith("__")
            or hasattr(builtins, name)
            or name in self._missing
        ):
            raise KeyError(name)
        counted = self._kernels(name) if self._kernels is not None else None
        if counted is not None:
            self[name] = counted
            return counted
        try:
            value = self._notebook.get(name)
        except NameError:
            self._missing.add(name)
            raise KeyError(name) from None
        self[name] = value
        return value

    def __contains__(self, name: object) -> bool:
        if dict.__contains__(self, name):
            return True
        try:
            self[name]
        except KeyError:
            return False
        return True

    def get(self, name: Any, default: Any = None) -> Any:
        try:
            return self[name]
        except KeyError:
            return default


def _has_placeholder(node: ast.AST) -> bool:
    return any(isinstance(n, ast.Constant) and n.value is Ellipsis for n in ast.walk(node))


def _bound_names(node: ast.AST) -> set[str]:
    """Names a statement binds or fills in: ``x = ...``, ``def f``, ``import m``, and the
    containers of ``d[k] = ...`` / ``obj.attr = ...`` (a dict the student completes)."""
    names = set()
    for sub in ast.walk(node):
        if isinstance(sub, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(sub.name)
        elif isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store):
            names.add(sub.id)
        elif isinstance(sub, ast.Subscript | ast.Attribute) and isinstance(sub.ctx, ast.Store):
            base = sub.value
            while isinstance(base, ast.Subscript | ast.Attribute):
                base = base.value
            if isinstance(base, ast.Name):
                names.add(base.id)
        elif isinstance(sub, ast.Import | ast.ImportFrom):
            names.update((a.asname or a.name).split(".")[0] for a in sub.names)
    return names


def _loaded_names(node: ast.AST) -> set[str]:
    return {
        n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
    }


def reference_namespace(template: Path) -> tuple[dict[str, Any], set[str]]:
    """(names the instructor's handed-out notebook defines, names the student's notebook gives).

    The student's names are those bound by a statement with a ``...`` placeholder, and, to a
    fixed point, by any statement that reads one of them (a launcher the handout gives around
    the student's kernel, a loop over the student's dict): those come from the sandbox. Every
    other top-level statement of the handout runs here, one at a time; one that fails is
    skipped.
    """
    import nbformat
    from IPython.core.inputtransformer2 import TransformerManager

    template = file_path("template", template)
    if not template.is_file():
        raise FileNotFoundError(f"template={str(template)!r} is not a notebook file")
    transform = TransformerManager().transform_cell
    statements: list[ast.stmt] = []
    for cell in nbformat.read(template, as_version=4).cells:
        if cell.cell_type != "code" or CHECK_CELL.match(cell.source.strip()):
            continue
        try:
            statements += ast.parse(transform(cell.source)).body
        except SyntaxError:
            continue
    answers: set[str] = set()
    for statement in statements:
        if _has_placeholder(statement):
            answers |= _bound_names(statement)
    given = [s for s in statements if not _has_placeholder(s)]
    changed = True
    while changed:
        changed = False
        for statement in given:
            if _loaded_names(statement) & answers and not _bound_names(statement) <= answers:
                answers |= _bound_names(statement)
                changed = True
    answers.discard("grader")
    namespace: dict[str, Any] = {"__name__": "__main__", "__builtins__": builtins}
    sink = io.StringIO()
    with (
        contextlib.redirect_stdout(sink),
        contextlib.redirect_stderr(sink),
        warnings.catch_warnings(),
    ):
        warnings.simplefilter("ignore")
        for statement in given:
            bound = _bound_names(statement)
            if "grader" in bound or _loaded_names(statement) & answers:
                continue  # the otter grader object is not needed; the rest needs answers
            module = ast.Module(body=[statement], type_ignores=[])
            try:
                exec(compile(module, str(template), "exec"), namespace)
            except BaseException:  # a statement that fails without the student's answers
                continue
    with contextlib.suppress(Exception):
        import matplotlib.pyplot as plt

        plt.close("all")
    for name in answers:
        namespace.pop(name, None)
    return namespace, answers


def run_case(name: str, code: str, globs: dict[str, Any]) -> tuple[bool, str]:
    """Run one doctest case like otter's ``run_doctest``: (passed, doctest's report). ``globs``
    is the namespace the case runs in (a dict, used as it is: the case's names land in it)."""
    name_string("name", name)
    if not isinstance(code, str):
        raise TypeError(f"code={show(code)} must be a doctest (a string)")
    if not isinstance(globs, dict):
        raise TypeError(f"globs={show(globs)} must be a dict (the namespace of the test)")
    examples = doctest.DocTestParser().parse(code, name)
    test = doctest.DocTest(
        [e for e in examples if isinstance(e, doctest.Example)], globs, name, None, None, code
    )
    test.globs = globs  # DocTest keeps a plain-dict copy; the tests need the namespace itself
    runner = doctest.DocTestRunner(verbose=False)
    report = io.StringIO()
    with contextlib.redirect_stdout(report), contextlib.redirect_stderr(report):
        runner.run(test, clear_globs=False, out=report.write)
    return runner.failures == 0, report.getvalue()


class Grader:
    """Grades one submission; every outcome is reported through ``report`` (see
    :meth:`save`): a file of its own would sit on a disk a submission might have filled."""

    def __init__(
        self,
        lab_dir: Path,
        submission: Path,
        student: str,
        report: Any,
        *,
        timeout_s: float,
        cell_timeout_s: float,
        limits: sandbox.Limits,
        kind: str | None = None,
        box: Box | None = None,
        scratch: Path | None = None,
    ) -> None:
        lab_dir = file_path("lab_dir", lab_dir)
        submission = file_path("submission", submission)
        name_string("student", student)
        if not callable(getattr(report, "write", None)):
            raise TypeError(f"report={show(report)} must be a binary file open for writing")
        timeout_s = positive_float("timeout_s", timeout_s)
        cell_timeout_s = positive_float("cell_timeout_s", cell_timeout_s)
        instance("limits", limits, sandbox.Limits)
        kind = None if kind is None else choice("kind", kind, ("bwrap", "fallback"))
        optional("box", box, instance, Box)
        scratch = optional("scratch", scratch, file_path)
        self.lab_dir, self.lab = lab_dir, lab_dir.name
        self.submission, self.student, self.report = submission, student, report
        self.start = time.monotonic()
        self.deadline = self.start + timeout_s
        self.cell_timeout_s = cell_timeout_s
        self.limits = limits
        self.kind = kind or sandbox.mechanism()
        self.box, self.scratch = box, scratch
        self.questions = load_tests(lab_dir / "autograder" / "tests")
        self.cells: list[str] = []
        self.counter: CountingSandbox | None = None
        self.log_lines: list[str] = []
        self.output = ""
        self.result: dict[str, Any] = {
            "student": student,
            "lab": self.lab,
            "submission": os.fsdecode(submission),
            "sandbox": self.kind,
            "status": "UNGRADED",
            "reason": "grading did not finish",
            "complete": False,
            "notes": [],
            "tampering": [],
            "questions": {
                q: {
                    "score": 0.0,
                    "max_score": sum(c.points for c in cases),
                    "cases": [None] * len(cases),
                }
                for q, cases in self.questions.items()
            },
        }

    def log(self, message: str) -> None:
        if len(self.log_lines) < MAX_LOG_LINES:
            line = f"[{time.monotonic() - self.start:7.1f} s] {printable(message)}"
            self.log_lines.append(line)

    def save(self) -> None:
        """Send the results so far, the feedback and the log as one line of JSON on the report
        channel (the class command keeps the last complete line and writes the files)."""
        # this process's peak memory: an answer must never be able to inflate it
        peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        self.result["grader_max_rss_mb"] = peak_kib / 1024
        scores = [q["score"] for q in self.result["questions"].values()]
        self.result["total"] = sum(scores)
        self.result["max_total"] = sum(q["max_score"] for q in self.result["questions"].values())
        line = json.dumps({
            "results": self.result,
            "feedback": self.feedback(),
            "log": "\n".join(self.log_lines) + "\n",
            "output": self.output,
        })  # fmt: skip
        self.report.write(line.encode("ascii") + b"\n")
        self.report.flush()

    def refuse(self, reason: str) -> None:
        self.result.update(status="UNGRADED", reason=reason, complete=True)
        self.log(f"UNGRADED: {reason}")
        self.save()

    def read_cells(self) -> list[str] | None:
        try:
            notebook = read_submission(self.submission)
        except SubmissionError as error:
            self.refuse(str(error))
            return None
        name = notebook.assignment
        if name is None:
            self.refuse(
                "missing otter metadata: the notebook has no metadata.otter.assignment_name "
                f"(expected {self.lab!r}); was it made from the handed-out notebook?"
            )
            return None
        if name != self.lab:
            self.refuse(f"wrong lab: the notebook is {str(name)[:100]!r}, this is {self.lab!r}")
            return None
        cells = list(notebook.code_cells)
        self.result["code_sha256"] = code_digest(cells)
        return cells

    def grade(self) -> None:
        self.log(f"grading {os.fsdecode(self.submission)} for {self.lab} in a {self.kind} sandbox")
        cells = self.read_cells()
        if cells is None:
            return
        references, answers = reference_namespace(self.lab_dir / "student" / f"{self.lab}.ipynb")
        self.log(f"answers taken from the notebook: {sorted(answers)}")
        # hidden tests load ``hidden_tests.py`` from the working directory: the instructor's copy
        os.chdir(self.lab_dir / "autograder")
        notebook = self._notebook(self.scratch, self.log)
        self.cells = cells
        if any(case.efficiency for cases in self.questions.values() for case in cases):
            # its own scratch folder (fallback): nothing the student's notebook wrote is in it
            home = None if self.scratch is None else self.scratch.parent / "counting-home"
            self.counter = CountingSandbox(
                lambda: self._notebook(home, lambda m: self.log(f"counting sandbox: {m}"))
            )
        try:
            self._grade(notebook, cells, references)
        except Exception as error:  # keep what was graded; say what went wrong
            self.log(f"grading stopped: {type(error).__name__}: {error}")
            self.result["notes"].append(
                f"grading stopped early: {type(error).__name__}: {quoted(str(error), 300)}"
            )
        finally:
            notebook.stop()
            if self.counter is not None:
                self.counter.stop()
            # from the sandbox's pipe, never from a file; control characters escaped
            self.output = _readable_output(notebook.output.text())
            self.save()

    def _notebook(self, scratch: Path | None, log: Any) -> Notebook:
        return Notebook(
            None if self.kind == "bwrap" else scratch,
            self.limits,
            deadline=self.deadline,
            cell_limit_s=self.cell_timeout_s,
            kind=self.kind,
            log=log,
            box=self.box,
        )

    def _grade(self, notebook: Notebook, cells: list[str], references: dict[str, Any]) -> None:
        # the notebook gets at most 70 % of the time; the tests need the rest
        budget_end = self.start + 0.7 * (self.deadline - self.start)
        try:
            notebook._ensure()
        except Exception as error:
            self.refuse(f"the sandbox did not start: {error}")
            return
        # the sandbox's own view of the gpuperf sources before any student code ran
        baseline = notebook.canary().fingerprint
        if not isinstance(baseline, dict):
            baseline = {}
        # (only in the fallback, where the sources are a private, writable copy: under bwrap
        # they are mounted read-only, and the instructor may edit the originals meanwhile)
        sources = {k: v for k, v in baseline.items() if str(k).endswith(" sha256")}
        if self.counter is not None:  # before any of the student's cells runs anywhere
            self.counter.start(budget_end)
            if self.counter.failure:
                self.log(self.counter.failure)
        notes = notebook.run_cells(cells, budget_end)
        self.result["notes"] += notes
        self.result.update(status="GRADED", reason="")
        self.save()
        # every public case before any hidden one: a public test's message (handed back) can
        # then only show what the notebook knew before it saw a hidden test's inputs
        for hidden in (False, True):
            for question, cases in self.questions.items():
                entry = self.result["questions"][question]
                for index, case in enumerate(cases):
                    if case.hidden != hidden:
                        continue
                    passed, report = self._run_case(
                        notebook, references, f"{question} {index}", case
                    )
                    entry["cases"][index] = {
                        "hidden": case.hidden,
                        "points": case.points,
                        "passed": passed,
                        "output": "" if passed else report[-MAX_OUTPUT_CHARS:],
                    }
                    entry["score"] += case.points if passed else 0.0
                if hidden:
                    self.log(f"{question}: {entry['score']:g}/{entry['max_score']:g}")
                self.save()
        changed = self._tampering(notebook, sources)
        if changed:
            self.result["tampering"] = changed
            self.result.update(status="UNGRADED", reason=f"tampering detected: {changed[0]}")
            self.log("tampering detected:\n  " + "\n  ".join(changed))
        if notebook.remaining() <= 0:
            self.result["notes"].append("the time limit was reached while grading")
        if self.box is not None:
            kills = self.box.oom_kills()
            self.result["box"] = {"cpu_s": round(self.box.cpu_seconds(), 3), "oom_kills": kills,
                                  "memory_peak_mb": self.box.memory_peak_mb()}  # fmt: skip
            if kills:
                self.result["notes"].append(
                    f"the kernel stopped {kills} of the notebook's processes for want of memory "
                    f"(its sandbox's share: {self.limits.memory_mb} MiB, files in /tmp and home "
                    "included)"
                )
        self.result["complete"] = True

    def _tampering(self, notebook: Notebook, sources: dict[str, str]) -> list[str]:
        """What the canary found replaced (empty: nothing). A canary that runs out of time
        (counted in its sandbox's own CPU time, or the submission's deadline) or memory is a
        note, never tampering; one that answers with anything but an honest fingerprint of
        this challenge (a crash, an error, a reply that breaks the protocol, a fingerprint
        copied before the patching) is tampering."""
        try:
            answer = notebook.canary()
        except Exception as error:  # the time limit was reached first: say so, do not guess
            self.result["notes"].append(f"the canary could not run: {error}")
            return []
        if answer.failure:
            if answer.timeout:
                self.result["notes"].append(
                    f"{answer.failure}: tampering was not checked (a time-out, not tampering)"
                )
                return []
            if answer.memory:
                self.result["notes"].append(f"{answer.failure}: tampering was not checked")
                return []
            return [f"the canary did not answer: {answer.failure}"]
        expected = canary.fingerprint(include_torch=answer.torch, challenge=answer.challenge)
        expected = {k: v for k, v in expected.items() if not k.endswith(" sha256")}
        if self.kind != "bwrap":
            expected |= sources
        return canary.differences(expected, answer.fingerprint)

    def _run_case(
        self, notebook: Notebook, references: dict[str, Any], name: str, case: Case
    ) -> tuple[bool, str]:
        kernels = self._counted_kernel if case.efficiency else None
        globs = AnswerNamespace(references, notebook, kernels)
        try:
            return run_case(name, case.code, globs)
        except BaseException as error:  # a test must never take the grader down
            return False, f"the test stopped: {type(error).__name__}: {error}"

    def _counted_kernel(self, name: str) -> CountedKernel | None:
        """An efficiency case's ``name``: the submission's ``@triton.jit`` kernel of that name,
        counted from its checked source (or failing with why it cannot be); None for any other
        name (the notebook's own value)."""
        if self.counter is None or name not in kernel_names(self.cells):
            return None
        try:
            source: KernelSource | KernelSourceError = kernel_source(self.cells, name)
        except KernelSourceError as error:
            self.log(f"{name} is not counted: {error}")
            source = error
        return CountedKernel(name, source, self.counter)

    def feedback(self) -> str:
        """What the student may see: scores, public cases' messages (each line escaped), hidden
        cases' verdicts; for tampering, only that it was found (the canary's findings may hold
        what the notebook saw of hidden tests)."""
        result = self.result
        lines = [f"{self.lab} · {self.student}"]
        if result["status"] == "UNGRADED":
            reason = str(result["reason"])
            if reason.startswith("tampering detected"):
                reason = "tampering detected (your instructor has the details)"
            lines.append(f"Not graded: {printable(reason, 500)}")
        else:
            lines.append(f"Score: {result.get('total', 0):g} / {result.get('max_total', 0):g}")
        for note in result["notes"]:
            lines.append(f"Note: {printable(note, 1000)}")
        for question, entry in result["questions"].items():
            lines.append("")
            lines.append(f"{question}: {entry['score']:g} / {entry['max_score']:g}")
            for number, case in enumerate(entry["cases"], start=1):
                if case is None:
                    continue
                kind = "hidden test" if case["hidden"] else "public test"
                verdict = "passed" if case["passed"] else "failed"
                lines.append(f"  {kind} {number}: {verdict}")
                if not case["passed"] and not case["hidden"]:
                    lines += ["    " + printable(line, 500)
                              for line in case["output"].strip().splitlines()]  # fmt: skip
        return "\n".join(lines) + "\n"


def _readable_output(data: bytes) -> str:
    """What the notebook printed, as text a terminal shows as it is: invalid UTF-8 and every
    control character but newlines and tabs escaped."""
    text = data.decode("utf-8", "backslashreplace")
    return "\n".join(
        "\t".join(printable(part, len(part) or 1) for part in line.split("\t"))
        for line in text.split("\n")
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m gpuperf.classroom.tester")
    parser.add_argument("lab_dir", type=Path)
    parser.add_argument("submission", type=os.fsencode)
    parser.add_argument("student")
    parser.add_argument("--timeout", type=float, required=True)
    parser.add_argument("--cell-timeout", type=float, required=True)
    parser.add_argument("--memory", type=int, required=True)
    parser.add_argument("--disk", type=int, default=sandbox.Limits.disk_mb)
    parser.add_argument("--sandbox", choices=["bwrap", "fallback"], default=None)
    parser.add_argument("--box", default=None, help="the submission's cgroup (Box.spec())")
    parser.add_argument("--scratch", type=Path, default=None, help="the fallback's home")
    args = parser.parse_args(argv)
    # the report channel is the original stdout; anything else printed goes to stderr
    report = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    sys.stdout = open(1, "w", buffering=1, closefd=False)  # noqa: SIM115
    grader = Grader(
        args.lab_dir,
        Path(os.fsdecode(args.submission)),
        args.student,
        report,
        timeout_s=args.timeout,
        cell_timeout_s=args.cell_timeout,
        limits=sandbox.Limits(
            memory_mb=args.memory, cpu_s=int(args.timeout) + 10, disk_mb=args.disk
        ),
        kind=args.sandbox,
        box=None if args.box is None else Box.attach(args.box),
        scratch=args.scratch,
    )
    grader.grade()
    return 0


__all__ = [
    "AnswerNamespace",
    "Case",
    "Grader",
    "load_tests",
    "main",
    "reference_namespace",
    "run_case",
]


if __name__ == "__main__":
    sys.exit(main())
