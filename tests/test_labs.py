"""The graded labs: generated files in sync with the masters, and grading that scores right.

Each lab lives in ``labs/labN_<name>/``: the otter-grader master notebook ``labN_<name>.ipynb``
(solutions, public and ``# HIDDEN`` tests, committed executed so that nbval checks it), and what
``otter assign`` generates from it: ``student/`` (the notebook the book shows, with the public
tests) and ``autograder/`` (solutions, all tests and ``labN_<name>-autograder.zip`` for
``otter run``). This file proves that

* the committed ``student/`` and ``autograder/`` are exactly what ``otter assign`` makes from the
  master today (regenerate with ``python tests/test_labs.py --assign``);
* Gradescope's entry point: ``otter run -a <lab>-autograder.zip`` (otter's own command line,
  called in-process) grades the autograder's solution notebook at full marks and the untouched
  student notebook at zero, in the environment the zip's ``environment.yml`` describes as far as
  this machine allows (:func:`zip_environment` says what stands in for what);
* every student notebook is valid Python cell by cell, as handed out (after IPython's magics);
* the hidden checks live in each lab's ``hidden_tests.py`` (one ``qN(env)`` per question, each
  calling the integrity canary), the master's ``# HIDDEN`` cells only call ``run_hidden``, and
  a failed hidden case never echoes the hidden code into ``results.json``;
* every autograder zip ships ``hidden_tests.py`` and installs what the tests import (``gpuperf``
  with its kernels extra at the release ``gpuperf.release.pins()`` names, torch from the CPU
  index) for Gradescope;
* every cell of an untouched student notebook runs without a traceback (the course's own print
  lines say "Not answered yet"), and lab 1's q6 hint describes the mistake it detects;
* a deliberately wrong answer to a question loses exactly that question's points. Two notebooks
  per lab are graded: one with the odd-numbered questions answered wrongly, one with the even
  ones, so each wrong answer is tested once and every other question shows no collateral loss.
  Some wrong answers are bad submissions on purpose: a cell that raises, one that loops forever
  (stopped by :class:`gpuperf.grading.CellTimeLimit`), one that prints garbage.

The otter runs of all labs run at once in a small pool of worker processes (two per core),
each of which imports otter once; every run executes its notebook in a fresh kernel.
"""

from __future__ import annotations

import filecmp
import json
import multiprocessing
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from functools import cache
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # grades every lab under otter run

ROOT = Path(__file__).resolve().parents[1]
LABS = ROOT / "labs"
#: Short per-cell limit while the tests grade: the "loops forever" answers must not cost minutes.
CELL_LIMIT_S = "20"
RUN_TIMEOUT_S = 600


def lab_dirs() -> list[Path]:
    return sorted(p for p in LABS.glob("lab[0-9]*_*") if (p / f"{p.name}.ipynb").is_file())


# ------------------------------------------------------------------------------ wrong answers
# For each lab and question: the source that replaces the question's answer cell, or an
# (old, new) substitution applied to the solution's answer cell. Each is wrong in a way the
# question's public *and* hidden tests catch, so the question scores zero.
# A cell that never finishes until the cell limit stops it. It sleeps: a busy loop (``while
# True: pass``, stopped the same way, see tests/test_grading.py) burned a core for the whole
# limit, in a suite whose every second of CPU counts.
LOOP_FOREVER = "import time\nwhile True:\n    time.sleep(1)\n"
WRONG: dict[str, dict[str, str | tuple[str, str]]] = {
    "lab1_rooflines": {
        # forgot to count the output bytes everywhere
        "q1": "N = 2**20\nadd_intensity = N / (2 * 4 * N)\ndot_intensity = (2 * 4096 - 1) / "
        "(2 * 4096 * 2)\nmatmul_intensity = 2 * 4096**3 / (2 * 2 * 4096**2)\n",
        # a cell that raises before defining anything
        "q2": "raise RuntimeError('half-finished answer')\n",
        # a cell that never finishes
        "q3": LOOP_FOREVER,
        # garbage printed, wrong type returned
        "q4": "print('garbage ' * 500)\ndef roof(intensity, chip_name, precision):\n"
        "    return 'a lot'\n",
        # everything memory-bound
        "q5": "verdicts = {(o, c): 'memory' for o in OPS for c in CHIP_PRECISION}\n",
        # the boost clock taken for the tensor clock, bytes in flight not shared out per SM
        "q6": "from gpuperf import parallelism\nh100 = chip('H100-SXM')\n"
        "LATENCY_S = parallelism.dram_latency('H100-SXM').value\n"
        "tensor_clock_hz = h100.boost_clock_hz\n"
        "bytes_in_flight_per_sm = h100.hbm_bandwidth * LATENCY_S\n"
        "warps_needed = math.ceil(bytes_in_flight_per_sm / (32 * 16))\n"
        "min_loads_in_flight = 1\n",
    },
    "lab2_fusion": {
        # forgot the ReLU
        "q1": "@triton.jit\ndef _axpb_relu_kernel(x_ptr, b_ptr, y_ptr, a, n_elements, "
        "BLOCK_SIZE: tl.constexpr):\n    offs = tl.program_id(0) * BLOCK_SIZE + "
        "tl.arange(0, BLOCK_SIZE)\n    mask = offs < n_elements\n    x = tl.load(x_ptr + offs, "
        "mask=mask)\n    b = tl.load(b_ptr + offs, mask=mask)\n    tl.store(y_ptr + offs, "
        "a * x + b, mask=mask)\n\n\ndef axpb_relu(a, x, b, BLOCK_SIZE=256):\n"
        "    y = torch.zeros_like(x)\n    grid = (triton.cdiv(x.numel(), BLOCK_SIZE),)\n"
        "    _axpb_relu_kernel[grid](x, b, y, a, x.numel(), BLOCK_SIZE=BLOCK_SIZE)\n"
        "    return y\n",
        # forgot the writes
        "q2": "def unfused_bytes(n, elem_bytes):\n    return 4 * n * elem_bytes\n\n\n"
        "def fused_bytes(n, elem_bytes):\n    return 2 * n * elem_bytes\n\n\n"
        "predicted_speedup = 2.0\n",
        # precision ignored
        "q3": "fused_intensity = {'fp32': 0.25, 'fp16': 0.25}\n"
        "matmul_256_bound = {'fp32': 'compute', 'fp16': 'compute'}\n",
        # the attention scores counted once for all heads (a forgotten)
        "q4": ("return s * b * h * (34 + 5 * a * s / h)", "return s * b * h * (34 + 5 * s / h)"),
    },
    "lab3_tiled_matmul": {
        # the store mask drops the ragged edge tiles
        "q1": (
            "c_mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)",
            "c_mask = (offs_m[:, None] < M // BLOCK_M * BLOCK_M) & "
            "(offs_n[None, :] < N // BLOCK_N * BLOCK_N)",
        ),
        # forgot the pipeline stages
        "q2": (
            "return num_stages * (block_m * block_k + block_k * block_n) * elem_bytes",
            "return (block_m * block_k + block_k * block_n) * elem_bytes",
        ),
        # floor instead of ceiling
        "q3": ("waves = math.ceil(tiles / sms)", "waves = max(1, tiles // sms)"),
        # the all-ones exponent counted as a finite binade (no room left for inf and NaN)
        "q4": (
            "max_exponent = (2**exponent_bits - 2) - bias",
            "max_exponent = (2**exponent_bits - 1) - bias",
        ),
    },
    "lab4_flashattention": {
        # the running sum is not rescaled when the max grows
        "q1": ("ell = ell * np.exp(m - m_new) + ", "ell = ell + "),
        # the accumulator is not rescaled when the max grows
        "q2": ("acc = acc * alpha[:, None] + tl.dot", "acc = acc + tl.dot"),
        # dK without the softmax scale 1/sqrt(d)
        "q3": (
            "dk[..., j:j + BLOCK_N, :] += ds.transpose(-1, -2) @ qi * scale",
            "dk[..., j:j + BLOCK_N, :] += ds.transpose(-1, -2) @ qi",
        ),
        # the chunks' outputs averaged: no weight ℓ_s · exp(m_s − M)
        "q4": ("w = ell * np.exp(m - big_m)", "w = np.ones_like(ell)"),
    },
    "lab5_memory_hierarchy": {
        # the offset is ignored
        "q1": (
            "addresses = [(offset + lane * stride) * element_bytes",
            "addresses = [(lane * stride) * element_bytes",
        ),
        # garbage printed; sectors ignored; a string where a number belongs
        "q2": "print('garbage ' * 500)\ndef copy_bytes(n_out, stride, element_bytes):\n"
        "    return 2 * n_out * element_bytes\n\n\npredicted_slowdown = 'a lot'\n",
        # no loop: the fixed grid of programs copies its first round of blocks and stops
        "q3": (
            "for block in range(pid, tl.cdiv(n, BLOCK_SIZE), programs):",
            "for block in range(pid, pid + 1):",
        ),
        # the bandwidth is taken to be the slope, not its inverse
        "q4": ("float(1 / slope)", "float(slope)"),
        # t0 / W instead of t0 * W, and guesses for the rest
        "q5": "t0, W = REF_LATENCY.value, REF_BANDWIDTH.value\nhalf_bandwidth_bytes = t0 / W\n"
        "n_90 = 0.9 * t0 / W\nbatching_speedup = 1.0\nlocal_copy_max_latency_s = t0\n",
        # the bus bandwidth taken for the rate the message moves at
        "q6": (
            "return bus_bandwidth * ranks / (2 * (ranks - 1))",
            "return bus_bandwidth",
        ),
    },
}


# ------------------------------------------------------------------------------ otter assign


def _normalize_notebook(path: Path) -> None:
    """Deterministic cell ids (otter makes random ones for the cells it adds)."""
    import nbformat

    nb = nbformat.read(path, as_version=4)
    for index, cell in enumerate(nb.cells):
        cell["id"] = f"cell-{index:03d}"
    nbformat.write(nb, path)


def _normalize_zip(zip_path: Path, target: Path) -> None:
    """Rewrite otter's timestamped zip with fixed dates and a stable name."""
    with (
        zipfile.ZipFile(zip_path) as source,
        zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as out,
    ):
        for name in sorted(source.namelist()):
            info = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))
            info.external_attr = source.getinfo(name).external_attr
            info.compress_type = zipfile.ZIP_DEFLATED
            out.writestr(info, source.read(name))
    zip_path.unlink()


def assign(lab_dir: Path, out_dir: Path) -> Path:
    """Run ``otter assign`` on a lab's master into ``out_dir``; normalize what it writes."""
    master = lab_dir / f"{lab_dir.name}.ipynb"
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        [sys.executable, "-m", "otter", "assign", "--no-run-tests", str(master), str(out_dir)],
        cwd=lab_dir,
        check=True,
        capture_output=True,
        text=True,
    )
    for notebook in out_dir.glob("*/*.ipynb"):
        _normalize_notebook(notebook)
    (zip_path,) = (out_dir / "autograder").glob("*-autograder_*.zip")
    _normalize_zip(zip_path, out_dir / "autograder" / f"{lab_dir.name}-autograder.zip")
    return out_dir


def regenerate(lab_dir: Path) -> None:
    """Replace a lab's committed ``student/`` and ``autograder/`` with fresh output."""
    with tempfile.TemporaryDirectory() as tmp:
        out = assign(lab_dir, Path(tmp) / "dist")
        for part in ("student", "autograder"):
            shutil.rmtree(lab_dir / part, ignore_errors=True)
            shutil.copytree(out / part, lab_dir / part)


def _files(directory: Path) -> set[str]:
    """The files under ``directory``, bytecode caches left out: Python writes ``__pycache__``
    beside any module it imports (the labs' hidden tests too) unless told not to, and git
    ignores it."""
    return {
        str(p.relative_to(directory))
        for p in directory.rglob("*")
        if p.is_file() and "__pycache__" not in p.relative_to(directory).parts
    }


@cache
def assigned() -> dict[str, Path]:
    """``otter assign`` every lab at once (independent processes); lab → its fresh output."""
    work = Path(tempfile.mkdtemp(prefix="gpuperf-assign-"))
    labs = lab_dirs()
    with ThreadPoolExecutor(max_workers=max(2, os.cpu_count() or 1)) as pool:
        outs = pool.map(lambda lab_dir: assign(lab_dir, work / lab_dir.name / "dist"), labs)
        return {lab_dir.name: out for lab_dir, out in zip(labs, outs, strict=True)}


def test_bytecode_caches_are_not_generated_files(tmp_path) -> None:
    """A reader's Python writes ``__pycache__`` into ``autograder/`` when it imports the hidden
    tests from there; that is not a file otter assign should have made."""
    (tmp_path / "tests" / "__pycache__").mkdir(parents=True)
    (tmp_path / "tests" / "q1.py").write_text("OK_FORMAT = True\n")
    (tmp_path / "tests" / "__pycache__" / "q1.cpython-311.pyc").write_bytes(b"\0")
    (tmp_path / "__pycache__").mkdir()
    (tmp_path / "__pycache__" / "hidden_tests.cpython-311.pyc").write_bytes(b"\0")
    assert _files(tmp_path) == {str(Path("tests") / "q1.py")}


@pytest.mark.parametrize("lab_dir", lab_dirs(), ids=lambda p: p.name)
def test_generated_files_in_sync_with_master(lab_dir: Path) -> None:
    pytest.importorskip("otter", reason="otter-grader is not installed")
    out = assigned()[lab_dir.name]
    for part in ("student", "autograder"):
        fresh, committed = out / part, lab_dir / part
        assert _files(fresh) == _files(committed), (
            f"{committed.relative_to(ROOT)} has other files than otter assign makes: "
            "run `python tests/test_labs.py --assign`"
        )
        for name in sorted(_files(fresh)):
            if name.endswith(".zip"):
                with zipfile.ZipFile(fresh / name) as a, zipfile.ZipFile(committed / name) as b:
                    same = sorted(a.namelist()) == sorted(b.namelist()) and all(
                        a.read(n) == b.read(n) for n in a.namelist()
                    )
            else:
                same = filecmp.cmp(fresh / name, committed / name, shallow=False)
            assert same, (
                f"{(committed / name).relative_to(ROOT)} is out of date with the master "
                f"notebook: run `python tests/test_labs.py --assign`"
            )


# ------------------------------------------------------------------------------ otter run


def _answer_cells(nb) -> dict[str, int]:
    """Question name → index of its answer cell (the code cell just before its check cell)."""
    cells = {}
    for index, cell in enumerate(nb.cells):
        source = cell.source.strip()
        if cell.cell_type == "code" and source.startswith('grader.check("'):
            question = source.split('"')[1]
            answer = index - 1
            while nb.cells[answer].cell_type != "code":
                answer -= 1
            cells[question] = answer
    return cells


def wrong_notebook(lab_dir: Path, parity: int, target: Path) -> set[str]:
    """The solutions with the wrong answers of questions whose number has ``parity``; returns
    the questions made wrong."""
    import nbformat

    nb = nbformat.read(lab_dir / "autograder" / f"{lab_dir.name}.ipynb", as_version=4)
    wrong = set()
    for question, index in _answer_cells(nb).items():
        if int(question.lstrip("q")) % 2 == parity:
            change = WRONG[lab_dir.name][question]
            if isinstance(change, tuple):
                old, new = change
                assert old in nb.cells[index].source, f"{question}: {old!r} not in the solution"
                nb.cells[index].source = nb.cells[index].source.replace(old, new)
            else:
                nb.cells[index].source = change
            wrong.add(question)
    nbformat.write(nb, target)
    return wrong


def _start_grader(cell_limit_s: str) -> None:
    """Process-pool initializer: import otter once per worker (about 5 s each time)."""
    os.environ["GPUPERF_CELL_TIME_LIMIT_S"] = cell_limit_s
    import otter.cli  # noqa: F401  (and with it otter.run)


def otter_run(
    zip_path: Path, notebook: Path, out_dir: Path
) -> tuple[dict[str, tuple[float, float]], dict[str, str]]:
    """Grade one notebook with ``otter run --no-logo -a zip -o out notebook`` — otter's own
    command line (the ``otter`` script's ``cli``), called in this process (a worker of
    :func:`graded`, which imported otter once) instead of a new interpreter per notebook; return
    question → (score, possible) and question → the feedback ``output``."""
    import contextlib
    import io

    from otter.cli import cli

    out_dir.mkdir(parents=True, exist_ok=True)
    log = io.StringIO()
    cwd = os.getcwd()
    os.chdir(notebook.parent)
    args = ["run", "--no-logo", "-a", str(zip_path), "-o", str(out_dir), str(notebook)]
    try:
        with contextlib.redirect_stdout(log), contextlib.redirect_stderr(log):
            cli.main(args=args, prog_name="otter", standalone_mode=False)
    except Exception as error:  # reported by the test that reads the results
        log.write(f"\notter run raised {type(error).__name__}: {error}")
    finally:
        os.chdir(cwd)
    results_file = out_dir / "results.json"
    assert results_file.is_file(), f"otter run wrote no results:\n{log.getvalue()[-5000:]}"
    results = json.loads(results_file.read_text())
    # Gradescope's format: one entry per question plus a "Public Tests" summary
    graded_tests = [test for test in results["tests"] if test.get("max_score") is not None]
    scores = {t["name"]: (float(t["score"]), float(t["max_score"])) for t in graded_tests}
    return scores, {t["name"]: t.get("output", "") for t in graded_tests}


@cache
def graded() -> dict[
    tuple[str, str], tuple[dict[str, tuple[float, float]], set[str], dict[str, str]]
]:
    """Grade every lab's solutions, untouched student notebook and two wrong notebooks, all at
    once; (lab, kind) → (scores, questions answered wrongly).

    The runs share a small pool of worker processes that each import otter once; every run
    still executes its notebook in a fresh kernel, exactly as ``otter run`` does.
    """
    work = Path(tempfile.mkdtemp(prefix="gpuperf-labs-"))
    jobs = {}
    for lab_dir in lab_dirs():
        lab = lab_dir.name
        zip_path = lab_dir / "autograder" / f"{lab}-autograder.zip"
        base = work / lab
        base.mkdir()
        # each notebook is graded from a folder of its own (otter writes logs next to it)
        for kind in ("solution", "student", "wrong-odd", "wrong-even"):
            (base / kind).mkdir()
        shutil.copy(lab_dir / "autograder" / f"{lab}.ipynb", base / "solution" / f"{lab}.ipynb")
        shutil.copy(lab_dir / "student" / f"{lab}.ipynb", base / "student" / f"{lab}.ipynb")
        wrong_odd = wrong_notebook(lab_dir, 1, base / "wrong-odd" / f"{lab}.ipynb")
        wrong_even = wrong_notebook(lab_dir, 0, base / "wrong-even" / f"{lab}.ipynb")
        for kind, wrong in [
            ("solution", set()),
            ("student", None),
            ("wrong-odd", wrong_odd),
            ("wrong-even", wrong_even),
        ]:
            jobs[(lab, kind)] = (
                zip_path,
                base / kind / f"{lab}.ipynb",
                base / kind / "out",
                wrong,
            )
    # the kernels do the work: one worker (and so one kernel) per core. Two per core left the
    # cores no idler and cost more CPU (2026-11-27, 2 cores: 111 vs 103 CPU-seconds for this
    # file), and the whole suite keeps every core busy anyway
    workers = min(max(2, os.cpu_count() or 1), len(jobs) or 1)
    with ProcessPoolExecutor(
        max_workers=workers,
        mp_context=multiprocessing.get_context("spawn"),
        initializer=_start_grader,
        initargs=(CELL_LIMIT_S,),
    ) as pool:
        futures = {key: pool.submit(otter_run, *job[:3]) for key, job in jobs.items()}
        results = {}
        for key, future in futures.items():
            scores, outputs = future.result(timeout=RUN_TIMEOUT_S)
            results[key] = (scores, jobs[key][3], outputs)
        return results


def _hidden_code_lines(lab_dir: Path) -> list[str]:
    """Distinctive lines of a lab's hidden checks (to look for in feedback): long code lines that
    are neither imports nor also in the public tests."""
    public = "\n".join(
        path.read_text(encoding="utf-8") for path in (lab_dir / "student" / "tests").glob("*.py")
    )
    public += "\n".join(source for _, source in _code_cells(lab_dir / f"{lab_dir.name}.ipynb"))
    lines = (lab_dir / "hidden_tests.py").read_text(encoding="utf-8").splitlines()
    return [
        line.strip()
        for line in lines
        if len(line.strip()) > 30
        and "#" not in line
        and not line.strip().startswith(("import ", "from ", '"', 'f"'))
        and line.strip() not in public
    ]


needs_otter = pytest.mark.skipif(
    shutil.which("otter") is None and not Path(sys.executable).with_name("otter").exists(),
    reason="otter-grader is not installed",
)


@needs_otter
@pytest.mark.parametrize("lab_dir", lab_dirs(), ids=lambda p: p.name)
def test_solutions_score_full_marks(lab_dir: Path) -> None:
    scores, _, _ = graded()[(lab_dir.name, "solution")]
    assert scores, "no questions were graded"
    lost = {q: s for q, s in scores.items() if s[0] != s[1]}
    assert not lost, f"the solutions lose points: {lost}"


@needs_otter
@pytest.mark.parametrize("lab_dir", lab_dirs(), ids=lambda p: p.name)
def test_untouched_student_notebook_scores_zero(lab_dir: Path) -> None:
    scores, _, outputs = graded()[(lab_dir.name, "student")]
    solution, _, _ = graded()[(lab_dir.name, "solution")]
    assert set(scores) == set(solution)
    earned = {q: s for q, s in scores.items() if s[0] != 0}
    assert not earned, f"an untouched student notebook earns points: {earned}"
    # a graded variable left as `...` is reported as "not answered yet"
    placeholders = [
        source
        for _, source in _code_cells(lab_dir / "student" / f"{lab_dir.name}.ipynb")
        if any(
            line.split("=")[-1].strip() == "..." and not line.startswith((" ", "#"))
            for line in source.splitlines()
        )
    ]
    if placeholders:
        unanswered = [q for q, text in outputs.items() if "not answered yet" in text]
        assert unanswered, f"no check says 'not answered yet' for an untouched notebook: {outputs}"


@needs_otter
@pytest.mark.parametrize("parity", ["wrong-odd", "wrong-even"])
@pytest.mark.parametrize("lab_dir", lab_dirs(), ids=lambda p: p.name)
def test_wrong_answer_loses_exactly_its_points(lab_dir: Path, parity: str) -> None:
    assert set(WRONG.get(lab_dir.name, {})) == set(graded()[(lab_dir.name, "solution")][0]), (
        f"WRONG has no wrong answer for some questions of {lab_dir.name}"
    )
    scores, wrong, outputs = graded()[(lab_dir.name, parity)]
    assert wrong, "no question was made wrong"
    hidden_code = _hidden_code_lines(lab_dir)
    for question, text in outputs.items():
        echoed = [line for line in hidden_code if line in text]
        assert not echoed, f"{question}: the feedback echoes hidden test code: {echoed[:3]}"
    for question, (score, possible) in scores.items():
        if question in wrong:
            assert score == 0, f"{question}: the wrong answer still earns {score}/{possible}"
        else:
            assert score == possible, (
                f"{question} lost points ({score}/{possible}) although only {sorted(wrong)} "
                "were answered wrongly"
            )


# ------------------------------------------------------------------------- untouched notebooks


@cache
def untouched_errors() -> dict[str, list[str]]:
    """Run every cell of every untouched student notebook in a Jupyter kernel, as a student who
    presses "Run all" does (grader checks included; two kernels at a time): lab → the errors
    its cells raised, and everything they printed."""
    import nbformat
    from jupyter_kernels import on_unix_sockets
    from nbclient import NotebookClient
    from traitlets.config import Config

    work = Path(tempfile.mkdtemp(prefix="gpuperf-untouched-"))

    def run(lab_dir: Path) -> tuple[list[str], str]:
        # a copy of the student folder: grader.check writes otter's log next to the notebook
        folder = shutil.copytree(lab_dir / "student", work / lab_dir.name)
        path = folder / f"{lab_dir.name}.ipynb"
        nb = nbformat.read(path, as_version=4)
        client = NotebookClient(
            nb, timeout=RUN_TIMEOUT_S, allow_errors=True, record_timing=False,
            resources={"metadata": {"path": str(path.parent)}},
            config=Config({"KernelManager": on_unix_sockets()}),
        )  # fmt: skip
        client.execute()
        errors, printed = [], []
        for index, cell in enumerate(nb.cells):
            for output in cell.get("outputs", []):
                if output.output_type == "error":
                    errors.append(f"cell {index}: {output.ename}: {output.evalue}")
                elif output.output_type == "stream":
                    printed.append(output.text)
        return errors, "".join(printed)

    with ThreadPoolExecutor(max_workers=2) as pool:
        return dict(zip([d.name for d in lab_dirs()], pool.map(run, lab_dirs()), strict=True))


@pytest.mark.parametrize("lab_dir", lab_dirs(), ids=lambda p: p.name)
def test_untouched_student_notebook_runs_without_a_traceback(lab_dir: Path) -> None:
    """A student who runs all cells of the handed-out notebook sees no traceback from the
    course's own code: print lines and figures that need an answer say "Not answered yet"
    (``gpuperf.grading.all_answered``) instead of failing on the ``...`` placeholders."""
    errors, printed = untouched_errors()[lab_dir.name]
    assert not errors, f"{lab_dir.name}: {errors}"
    assert "Not answered yet" in printed


def test_lab1_q6_hint_names_the_boost_clock() -> None:
    """Taking the boost clock for the clock the bf16 peak implies gets a hint about exactly that
    mistake; a right answer gets no hint."""
    from gpuperf import chip
    from gpuperf.classroom.tester import load_tests, run_case

    (public, _hidden) = load_tests(LABS / "lab1_rooflines" / "autograder" / "tests")["q6"]
    answers = {"bytes_in_flight_per_sm": 1.0, "warps_needed": 1, "min_loads_in_flight": 1}

    def message(tensor_clock_hz: float) -> str:
        passed, report = run_case(
            "q6", public.code, {**answers, "tensor_clock_hz": tensor_clock_hz}
        )
        assert not passed and "CheckError: " in report, report
        return report.rsplit("CheckError: ", 1)[1]  # what the student reads (not the test code)

    assert "boost clock" not in message(1.0)
    assert "that is the boost clock" in message(chip("H100-SXM").boost_clock_hz)


def test_lab3_q2_model_is_an_upper_bound_of_what_triton_allocates() -> None:
    """Lab 3's question 2 counts ``num_stages`` full copies of both panels; Triton keeps fewer
    (R4: the question used to say that is what runs). The question must call its count an upper
    bound, and its printout must show the compiler's bytes beside it: for 128 × 128 × 64 at
    three stages the model rejects the T4, whose compiled kernel fits."""
    import nbformat

    from gpuperf import chip, tiling
    from gpuperf.widgets import tile_reports

    master = LABS / "lab3_tiled_matmul" / "lab3_tiled_matmul.ipynb"
    cells = {c.id: c for c in nbformat.read(master, as_version=4).cells}
    question = " ".join(cells["cell-017"].source.split())
    assert "upper-bound model" in question and "Triton allocates less" in question
    printed = "".join(o.get("text", "") for o in cells["cell-019"].outputs)
    model = tiling.shared_memory_bytes(128, 128, 64, "fp16", 3)
    for name, target in (("T4", "sm_75"), ("A100-80GB", "sm_80"), ("H100-SXM", "sm_90")):
        compiled = tile_reports.tile_report(target, 128, 128, 64).shared_memory_bytes
        assert compiled <= model  # the model is an upper bound
        fits = model <= chip(name).shared_memory_per_block_bytes
        assert (
            f"{name}, 128×128×64 fp16, 3 stages: model {model / 1024:g} KiB, fits: {fits}; "
            f"compiled: {compiled / 1024:g} KiB"
        ) in printed
    t4_compiled = tile_reports.tile_report("sm_75", 128, 128, 64).shared_memory_bytes
    assert t4_compiled <= chip("T4").shared_memory_per_block_bytes < model


# ------------------------------------------------------------------------------ static checks


def _code_cells(notebook: Path) -> list[tuple[int, str]]:
    import nbformat

    nb = nbformat.read(notebook, as_version=4)
    return [(i, c.source) for i, c in enumerate(nb.cells) if c.cell_type == "code"]


@pytest.mark.parametrize("lab_dir", lab_dirs(), ids=lambda p: p.name)
def test_student_notebook_compiles_cell_by_cell(lab_dir: Path) -> None:
    """The handed-out notebook must run: no cell may be a SyntaxError (otter assign can cut a
    multi-line solution so that what remains is badly indented)."""
    import ast

    from IPython.core.inputtransformer2 import TransformerManager

    for index, source in _code_cells(lab_dir / "student" / f"{lab_dir.name}.ipynb"):
        try:
            ast.parse(TransformerManager().transform_cell(source))
        except SyntaxError as error:
            pytest.fail(f"{lab_dir.name} student cell {index} does not compile: {error}\n{source}")


def test_compile_check_can_fail() -> None:
    import ast

    from IPython.core.inputtransformer2 import TransformerManager

    with pytest.raises(SyntaxError):
        ast.parse(TransformerManager().transform_cell("x = ...\n    ...\n"))


@pytest.mark.parametrize("lab_dir", lab_dirs(), ids=lambda p: p.name)
def test_hidden_tests_live_on_the_autograder_side(lab_dir: Path) -> None:
    import ast

    master = lab_dir / f"{lab_dir.name}.ipynb"
    questions = [
        source.split("name:")[1].split()[0]
        for _, source in _raw_cells(master)
        if source.startswith("# BEGIN QUESTION")
    ]
    hidden_cells = [s for _, s in _code_cells(master) if s.lstrip().startswith("# HIDDEN")]
    # one hidden cell per question, named after it, plus optional extra cases of a question
    # (``q1_traffic``: issue 35's efficiency case), each a cell of its own
    names = []
    for source in hidden_cells:
        body = [line for line in source.splitlines()[1:] if line.strip()]
        name = body[-1].split('"')[1] if len(body) == 2 and '"' in body[-1] else ""
        assert body == [
            "from gpuperf.grading import run_hidden",
            f'run_hidden("{name}", globals())',
        ], f"{master.name}: a hidden cell must only call run_hidden: {source}"
        names.append(name)
    assert [n for n in names if n in questions] == questions
    extra = [n for n in names if n not in questions]
    assert all(n.split("_")[0] in questions for n in extra), extra
    tree = ast.parse((lab_dir / "hidden_tests.py").read_text(encoding="utf-8"))
    functions = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    for question in names:
        assert question in functions, f"hidden_tests.py has no {question}(env)"
        first = functions[question].body[0]
        assert ast.unparse(first) == "integrity_check()", (
            f"hidden_tests.{question} must call integrity_check() first"
        )
        # answers come from env through answer(); nothing else is read from the notebook
        for node in ast.walk(functions[question]):
            if isinstance(node, ast.Subscript) and ast.unparse(node.value) == "env":
                pytest.fail(
                    f"hidden_tests.{question} reads env[...] directly: use answer(env, name)"
                )
    from test_device_rule import violations

    found = list(violations((lab_dir / "hidden_tests.py").read_text(encoding="utf-8")))
    assert not found, f"{lab_dir.name}/hidden_tests.py breaks the device rule: {found}"


def _raw_cells(notebook: Path) -> list[tuple[int, str]]:
    import nbformat

    nb = nbformat.read(notebook, as_version=4)
    return [(i, c.source) for i, c in enumerate(nb.cells) if c.cell_type == "raw"]


@pytest.mark.parametrize("lab_dir", lab_dirs(), ids=lambda p: p.name)
def test_autograder_zip_installs_what_the_tests_need(lab_dir: Path) -> None:
    from gpuperf.release import pins

    with zipfile.ZipFile(lab_dir / "autograder" / f"{lab_dir.name}-autograder.zip") as zf:
        names = set(zf.namelist())
    assert "files/hidden_tests.py" in names, "the zip must ship the hidden checks"
    pip = zip_environment(lab_dir)["pip"]
    assert any(p.startswith("otter-grader") for p in pip)
    assert pins().autograder_requirement in pip, pip
    assert "torch" in pip and "--extra-index-url https://download.pytorch.org/whl/cpu" in pip


def zip_environment(lab_dir: Path) -> dict[str, list[str]]:
    """What a lab's autograder zip asks Gradescope to install: ``conda`` (environment.yml's
    conda packages, Python among them) and ``pip`` (its pip list)."""
    import yaml

    with zipfile.ZipFile(lab_dir / "autograder" / f"{lab_dir.name}-autograder.zip") as zf:
        environment = yaml.safe_load(zf.read("environment.yml"))
        config = json.loads(zf.read("otter_config.json"))
    conda = [d for d in environment["dependencies"] if isinstance(d, str)]
    pip = next(d["pip"] for d in environment["dependencies"] if isinstance(d, dict))
    return {"conda": conda, "pip": pip, "plugins": config.get("plugins", [])}


def stand_ins(lab_dir: Path) -> dict[str, str]:
    """Each thing the zip's environment asks for → what the grading above ran with instead
    (``"same"`` when it is the same). Fails on a requirement it does not know how to stand in
    for, or one the machine contradicts (another otter, another gpuperf version, no torch)."""
    import importlib.metadata
    import importlib.util

    import gpuperf
    from gpuperf.release import pins

    environment, found = zip_environment(lab_dir), {}
    here = f"{sys.version_info.major}.{sys.version_info.minor}"
    for spec in environment["conda"]:
        if spec.startswith("python="):
            wanted = spec.split("=", 1)[1]
            found[spec] = "same" if wanted == here else f"Python {here} (this venv)"
        elif spec == "pip":
            found[spec] = "same"
        elif spec == "jupyter_server":  # conda-forge's; otter run needs only nbconvert's kernel
            present = importlib.util.find_spec("jupyter_server") is not None
            found[spec] = "same" if present else "not installed (otter run does not import it)"
        else:
            pytest.fail(f"{lab_dir.name}: no stand-in known for the conda package {spec!r}")
    for spec in environment["pip"]:
        if spec.startswith("otter-grader"):
            version = importlib.metadata.version("otter-grader")
            assert spec.endswith(f"=={version}"), f"the zip installs {spec}, this is {version}"
            found[spec] = "same"
        elif spec.startswith("--extra-index-url"):
            found[spec] = "same (torch's CPU build)"
        elif spec == "torch":
            found[spec] = f"same: torch {importlib.metadata.version('torch')}"
        elif spec == pins().autograder_requirement:
            assert pins().version == gpuperf.__version__
            found[spec] = f"this working tree's gpuperf {gpuperf.__version__} (with torch, triton)"
        else:
            pytest.fail(f"{lab_dir.name}: no stand-in known for the pip requirement {spec!r}")
    for plugin in environment["plugins"]:
        module, name = plugin.rsplit(".", 1)
        assert getattr(importlib.import_module(module), name), plugin
        found[f"plugin {plugin}"] = "same"
    return found


@pytest.mark.parametrize("lab_dir", lab_dirs(), ids=lambda p: p.name)
def test_gradescope_environment_is_stood_in_for(lab_dir: Path) -> None:
    """The zip's environment, requirement by requirement, against the one that grades it in
    :func:`graded` (printed with ``-s``): otter-grader is the zip's version exactly, gpuperf the
    working tree at the version the zip pins, torch the CPU build the zip asks for; Python and
    conda's jupyter_server stand in where this machine differs (Python 3.11 for 3.13 here)."""
    table = stand_ins(lab_dir)
    print(f"\n{lab_dir.name}-autograder.zip, as graded here:")
    for spec, what in table.items():
        print(f"  {spec:60} {what}")
    assert any(s.startswith("python=") for s in table), "environment.yml names no Python"


if __name__ == "__main__":
    if sys.argv[1:] != ["--assign"]:
        sys.exit(
            "usage: python tests/test_labs.py --assign   (regenerate student/ and autograder/)"
        )
    with ThreadPoolExecutor(max_workers=max(2, os.cpu_count() or 1)) as pool:
        for lab_dir in pool.map(lambda lab_dir: regenerate(lab_dir) or lab_dir, lab_dirs()):
            print(f"regenerated {lab_dir.relative_to(ROOT)}/student and /autograder")
