"""A hostile class (issue 39): no submission costs a classmate their grade, loses the class's
results or reaches the instructor's files.

Two runs of the real command (``python -m gpuperf.grading grade``), each once per session:

* **the hostile class** (``tests/submissions/hostile.py``): one submission per way of attack
  beside honest classmates: names (a file name that is not UTF-8, ``grades.csv.ipynb``, a
  folder holding a tree 1200 levels deep), strings (a lone surrogate, terminal control
  sequences, the grader's own words), report forging (a public test's message and the canary
  carrying what a hidden test showed), memory amplification (``range(40_000_000)``, 20 MB of
  ``{}`` in the metadata) and resource exhaustion of every kind (memory through forked children,
  tmpfs files, processes, CPU against the canaries of honest classmates), each inside the box
  the grader makes for it. The command runs inside a cgroup the test makes first (3 GiB,
  600 processes: the machine is shared) and is started the way a careless setup starts it:
  through a shim script and a virtual environment reached by a link to its folder.
* **the link trap as a non-root instructor** (fallback sandbox, which leaves a scratch tree on
  the grader's disk): a throwaway user id, a 48 MiB tmpfs for scratch and results, cgroups
  delegated to that user; a submission sets CVE-2023-6597's trap around a link to the
  instructor's file, another fills the disk and kills its own grading process.

Every honest row must be exact and the class's CSV complete, readable and free of control
characters. Both runs need root (cgroups, a tmpfs, another user id) and skip without it; the
attacks that would burn the machine without a box run only where the grader can make boxes.
"""

from __future__ import annotations

import contextlib
import csv
import json
import os
import pwd
import runpy
import shutil
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import nbformat
import pytest

from gpuperf.classroom import box, sandbox, wire
from gpuperf.classroom.box import Box, Share
from gpuperf.classroom.submissions import find_submissions, read_submission, row_names
from gpuperf.classroom.text import SEPARATOR, printable, quoted
from gpuperf.classroom.trees import TreeError, remove_tree, walk

pytestmark = pytest.mark.slow  # grades two classes in sandboxes

ROOT = Path(__file__).resolve().parents[1]
HOSTILE = runpy.run_path(str(ROOT / "tests" / "submissions" / "hostile.py"))
LAB = HOSTILE["LAB"]
QUESTIONS = ["q1", "q2", "q3"]
COMMAND_TIMEOUT_S = 900
#: Each cell and call (and each canary, in its sandbox's own CPU time): the lab's cells take
#: milliseconds; a canary that spins is stopped after this much of its box's CPU time.
CELL_TIMEOUT_S = "10"
#: The limits of every sandbox of the hostile class (small: the attacks must hit them).
SHARE = {"--memory": "640", "--disk": "128", "--processes": "64", "--cpus": "0.5"}
#: What the whole grading command may use (the test machine is shared).
HOST = Share(memory_mb=3072, processes=600, cpus=2.0)
DEPTH = 1200


def _root() -> bool:
    return os.geteuid() == 0


def _boxes() -> box.Hierarchy | None:
    where = box.hierarchy()
    return where if isinstance(where, box.Hierarchy) else None


@contextlib.contextmanager
def host_limits(share: Share, name: str):
    """A cgroup for a whole grading command (``None`` where none can be made)."""
    where = _boxes()
    if where is None:
        yield None
        return
    host = Box.create(where, name, share)
    try:
        yield host
    finally:
        host.remove()
        box.remove_class_groups(where)


def _left_below(host: Box) -> list[str]:
    """The cgroups the command left under ``host``, and any process still in one."""
    left = []
    for folder in host.paths():
        for procs in Path(folder).rglob("cgroup.procs"):
            if procs.parent != Path(folder):
                left.append(str(procs.parent))
            left += procs.read_text().split()
    return left


# ------------------------------------------------------------------------------ building


def write_lab(folder: Path) -> Path:
    lab = folder / LAB
    (lab / "student").mkdir(parents=True)
    (lab / "autograder" / "tests").mkdir(parents=True)
    for question, text in HOSTILE["TESTS"].items():
        (lab / "autograder" / "tests" / f"{question}.py").write_text(text)
    (lab / "student" / f"{LAB}.ipynb").write_text(notebook_text(HOSTILE["HANDOUT"]))
    return lab


def notebook_text(cells: list[str], metadata_mb: int = 0) -> str:
    nb = nbformat.v4.new_notebook()
    nb.metadata["otter"] = {"assignment_name": LAB}
    nb.cells = [nbformat.v4.new_code_cell(source) for source in cells]
    for index, cell in enumerate(nb.cells):
        cell["id"] = f"cell-{index:03d}"
    text = nbformat.writes(nb)
    if metadata_mb:  # megabytes of {} in the metadata: millions of dicts once parsed
        junk = '"junk": [' + "{}," * (metadata_mb * 2**20 // 3) + "{}], "
        text = text.replace('"metadata": {\n  "otter"', '"metadata": {' + junk + '"otter"', 1)
        assert junk in text
    return text


def _deep_tree(top: Path, depth: int) -> None:
    """``depth`` nested folders under ``top`` (made through descriptors: no path grows)."""
    top.mkdir()
    fd = os.open(top, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for _ in range(depth):
            os.mkdir("d", dir_fd=fd)
            inner = os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = inner
        os.close(os.open("x.txt", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd))
    finally:
        os.close(fd)


def build_class(submissions: Path, *, with_box: bool, bwrap: bool) -> dict[str, str]:
    """The hostile class in ``submissions``: entry name → the CLASS key (or NAMED) it holds."""
    entries = {}
    honest = notebook_text(HOSTILE["notebook_cells"]())
    for name, spec in HOSTILE["CLASS"].items():
        if (spec.get("box") and not with_box) or (spec.get("bwrap") and not bwrap):
            continue  # it would take the machine's resources: only inside a box
        (submissions / f"{name}.ipynb").write_text(
            notebook_text(spec["cells"], spec.get("metadata_mb", 0))
        )
        entries[f"{name}.ipynb"] = name
    (submissions / "grades.csv.ipynb").write_text(honest)
    entries["grades.csv.ipynb"] = "grades.csv.ipynb"
    latin1 = os.path.join(os.fsencode(submissions), b"caf\xe9.ipynb")
    with open(latin1, "w") as handle:
        handle.write(honest)
    entries[os.fsdecode(b"caf\xe9.ipynb")] = "latin1"
    archive = submissions / "archive"
    archive.mkdir()
    with open(os.path.join(os.fsencode(archive), b"r\xe9ponse.ipynb"), "w") as handle:
        handle.write(honest)
    _deep_tree(archive / "unpacked", DEPTH)
    entries["archive"] = "archive"
    return entries


def _shim(folder: Path) -> Path:
    """A script that starts this Python through a link to its environment's folder (a
    pyenv-style shim in front of a symlinked virtual environment)."""
    prefix = Path(sys.prefix)
    link = folder / "venv-link"
    link.symlink_to(prefix, target_is_directory=True)
    executable = link / Path(sys.executable).relative_to(prefix)
    shim = folder / "python-shim"
    shim.write_text(f'#!/bin/sh\nexec "{executable}" "$@"\n')
    shim.chmod(0o755)
    return shim


def read_rows(csv_path: Path) -> list[dict[str, str]]:
    with open(csv_path, newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


# ------------------------------------------------------------------------------ the hostile class


@pytest.fixture(scope="module")
def hostile_class(tmp_path_factory):
    """Grade the hostile class once: (rows by submission, OUT/<lab>, entries, console,
    whether boxes were made)."""
    if not _root():
        pytest.skip("the hostile class runs inside a cgroup the test makes: needs root")
    if sys.prefix == sys.base_prefix:
        pytest.skip("needs a virtual environment to reach through a link")
    work = tmp_path_factory.mktemp("hostile")
    lab = write_lab(work)
    submissions = work / "submissions"
    submissions.mkdir()
    with_box = _boxes() is not None
    entries = build_class(submissions, with_box=with_box, bwrap=sandbox.mechanism() == "bwrap")
    out = work / "out"
    args = [str(lab), str(submissions), "--out", str(out), "--jobs", "3",
            "--timeout", "300", "--cell-timeout", CELL_TIMEOUT_S]  # fmt: skip
    for key, value in SHARE.items():
        args += [key, value]
    command = [str(_shim(work)), "-m", "gpuperf.grading", "grade", *args]
    try:
        with host_limits(HOST, "hostile-class") as host:
            done = subprocess.run(
                command, capture_output=True, timeout=COMMAND_TIMEOUT_S, cwd=work,
                preexec_fn=None if host is None else host.join,
            )  # fmt: skip
            left = [] if host is None else _left_below(host)
    finally:
        remove_tree(submissions / "archive")  # 1200 levels: too deep for shutil's rmtree
    console = done.stdout.decode("utf-8", "backslashreplace")
    assert done.returncode == 0, console + done.stderr.decode(errors="replace")[-3000:]
    assert not left, f"processes or cgroups outlived the command: {left}"
    rows = {row["submission"]: row for row in read_rows(out / LAB / "grades.csv")}
    return rows, out / LAB, entries, console, with_box


def _row(hostile_class, key: str) -> dict[str, str]:
    rows, _, entries, *_ = hostile_class
    (entry,) = [e for e, k in entries.items() if k == key]
    return rows[printable(entry)]


def _results(hostile_class, key: str) -> dict:
    _, out, *_ = hostile_class
    return json.loads((out / _row(hostile_class, key)["student"] / "results.json").read_text())


def _scores(results: dict) -> list[float]:
    return [results["questions"][q]["score"] for q in QUESTIONS]


def test_the_csv_is_complete_readable_and_clean(hostile_class) -> None:
    rows, out, entries, console, _ = hostile_class
    assert sorted(rows) == sorted(printable(e) for e in entries), sorted(rows)
    text = (out / "grades.csv").read_text(encoding="utf-8")
    assert all(c.isprintable() or c in "\r\n" for c in text), "a control character in the CSV"
    assert all(c.isprintable() or c == "\n" for c in console), "a control character on screen"
    # started through a shim and a linked environment, it sandboxes as this process would
    assert {row["sandbox"] for row in rows.values()} == {sandbox.mechanism()}, console
    for report in out.glob("*/*.*"):
        if report.suffix in (".txt", ".log"):
            body = report.read_text(encoding="utf-8")
            assert all(c.isprintable() or c in "\n\t" for c in body), report
    assert console.count("each sandbox's share:") + console.count("no cgroup:") == 1, console


@pytest.mark.parametrize("key", ["honest", "grades.csv.ipynb", "latin1", "archive", "partial"])
def test_every_honest_row_is_exact(hostile_class, key: str) -> None:
    """Classmates of every attack, and honest notebooks under names that broke the CSV."""
    row = _row(hostile_class, key)
    expected = HOSTILE["CLASS"]["partial"]["scores"] if key == "partial" else HOSTILE["FULL"]
    assert row["status"] == "GRADED", row
    assert [float(row[q]) for q in QUESTIONS] == expected, row
    assert row["total"] == f"{sum(expected):g}" and row["max_total"] == "6", row
    assert "canary" not in row["notes"], row  # never a time-out, never tampering


def test_odd_names_get_rows_that_name_them(hostile_class) -> None:
    _, out, *_ = hostile_class
    assert (out / "grades.csv").is_file()
    assert _row(hostile_class, "grades.csv.ipynb")["student"].startswith("grades.csv~")
    assert _row(hostile_class, "latin1")["submission"] == "caf\\xe9.ipynb"
    assert _results(hostile_class, "archive")["submission"].endswith("r\udce9ponse.ipynb")


@pytest.mark.parametrize("key", [k for k in HOSTILE["CLASS"] if k not in ("honest", "partial")])
def test_each_attack_scores_what_it_deserves(hostile_class, key: str) -> None:
    spec = HOSTILE["CLASS"][key]
    _, _, entries, *_ = hostile_class
    if f"{key}.ipynb" not in entries:
        pytest.skip("this attack runs only inside a box (no cgroup here)")
    row, results = _row(hostile_class, key), _results(hostile_class, key)
    assert row["status"] == spec.get("status", "GRADED"), row
    if spec["scores"] is not None:
        assert _scores(results) == spec["scores"], (row, results["notes"])
    assert not row["reason"].startswith("tampering") or key == "leak", row


def test_strings_are_escaped_and_student_words_stay_quoted(hostile_class) -> None:
    row, results = _row(hostile_class, "strings"), _results(hostile_class, "strings")
    notes = results["notes"]
    assert len(notes) == len(HOSTILE["STRINGS"]), notes  # one per cell: each raises
    assert row["notes"].split(SEPARATOR) == [printable(n) for n in notes], row["notes"]
    assert 'raised ValueError: "caf\\xe9"' in row["notes"], row["notes"]
    for note in notes:  # the grader's words outside quotes, the student's inside
        assert note.startswith("cell ") and note.count('"') >= 2, note
        assert note.split('"')[0].count("grading stopped") == 0, note
    _, out, *_ = hostile_class
    feedback = (out / row["student"] / "feedback.txt").read_text()
    assert [line for line in feedback.splitlines() if line.startswith("Score")] == [
        "Score: 6 / 6"
    ], feedback


def test_no_public_message_shows_a_hidden_input(hostile_class) -> None:
    _, out, *_ = hostile_class
    row = _row(hostile_class, "leak")
    hidden = HOSTILE["HIDDEN_INPUT"]
    feedback = (out / row["student"] / "feedback.txt").read_text()
    assert hidden not in feedback, feedback
    assert "inputs seen so far: [2.0]" in feedback, feedback  # the public case ran first
    assert "tampering detected (your instructor has the details)" in feedback, feedback
    assert hidden in row["reason"], row  # the instructor sees what the canary said


def test_amplified_answers_cost_the_grader_nothing(hostile_class) -> None:
    honest = _results(hostile_class, "honest")["grader_max_rss_mb"]
    attacked = _results(hostile_class, "amplify")
    assert attacked["grader_max_rss_mb"] < honest + 100, (honest, attacked["grader_max_rss_mb"])
    public = attacked["questions"]["q3"]["cases"][0]
    assert "over the limit" in public["output"], public["output"][-500:]


def test_exhaustion_stays_in_its_box(hostile_class) -> None:
    _, out, _, _, with_box = hostile_class
    if not with_box:
        pytest.skip("no cgroup here: these attacks are not run")
    memory = _results(hostile_class, "memory_hog")
    assert memory["box"]["oom_kills"] >= 1, memory["box"]
    printed = (out / _row(hostile_class, "fork_bomb")["student"] / "output.log").read_text()
    count = int(printed.split("refused after ")[1].split()[0])
    assert count < int(SHARE["--processes"]), printed
    hog = _row(hostile_class, "a_cpu_hog")
    assert hog["status"] == "GRADED", hog  # a time-out is a time-out, never tampering
    assert "the canary ran for more than 10 s of its sandbox's own CPU time" in hog["notes"], hog
    assert "a time-out, not tampering" in hog["notes"], hog
    if sandbox.mechanism() == "bwrap":
        printed = (out / _row(hostile_class, "disk_fill")["student"] / "output.log").read_text()
        sizes = json.loads(printed.split("filled (MiB):")[1].split("\n")[0])
        disk = int(SHARE["--disk"])
        assert all(disk - 2 <= size <= disk for size in sizes.values()), sizes  # each tmpfs full
        peak = _results(hostile_class, "disk_fill")["box"]["memory_peak_mb"]
        assert peak is None or peak >= 2 * disk - 4, peak  # its files count in its memory


# ------------------------------------------------------------------------------ as a non-root user


def _free_uid() -> int:
    for uid in range(64999, 60000, -1):
        try:
            pwd.getpwuid(uid)
        except KeyError:
            return uid
    pytest.skip("no unused user id")


@contextlib.contextmanager
def delegated_groups(uid: int, share: Share):
    """cgroups handed to ``uid`` the way an administrator delegates them (v1 here: folders
    owned by the user; v2: the same, with the controllers enabled)."""
    where = _boxes()
    if where is None:
        yield None
        return
    host = Box.create(where, f"delegated-{uid}", share)
    for folder in host.paths():
        os.chown(folder, uid, uid)
        for name in ("cgroup.procs", "tasks", "cgroup.subtree_control", "cgroup.threads"):
            with contextlib.suppress(FileNotFoundError):
                os.chown(Path(folder) / name, uid, uid)
    try:
        yield host
    finally:
        host.remove()
        box.remove_class_groups(where)


#: Root without any capability: permission checks on its own files as for any owner (what a
#: non-root instructor's cleanup meets), where a throwaway user cannot run this Python.
NO_CAPABILITIES = ["setpriv", "--securebits=+noroot,+noroot_locked", "--bounding-set=-all",
                   "--inh-caps=-all", "--"]  # fmt: skip


def _instructor() -> tuple[int, dict, list[str], str]:
    """(user id, subprocess arguments, command prefix, description) of a non-root instructor:
    a throwaway user id if it can run this Python, else root without capabilities."""
    uid = _free_uid()
    try:
        ran = subprocess.run([sys.executable, "-c", "import gpuperf"], user=uid, group=uid,
                             extra_groups=[], capture_output=True, timeout=120)  # fmt: skip
        if ran.returncode == 0:
            return uid, {"user": uid, "group": uid, "extra_groups": []}, [], f"user id {uid}"
    except OSError:
        pass
    if shutil.which("setpriv") is None:
        pytest.skip("no user can run this Python but root, and setpriv is missing")
    return 0, {}, NO_CAPABILITIES, "root without capabilities (no other user can run Python)"


@pytest.fixture(scope="module")
def non_root_class():
    """The fallback run as a non-root instructor: (rows, OUT/<lab>, instructor file's (mode,
    text) before and after, console, what is left on the small disk, whether cgroups were
    delegated)."""
    if not _root() or shutil.which("mount") is None:
        pytest.skip("a throwaway user id, a tmpfs and delegated cgroups need root")
    uid, identity, prefix, who = _instructor()
    work = Path(tempfile.mkdtemp(prefix="gpuperf-nonroot-"))
    disk = work / "disk"
    try:
        work.chmod(0o755)
        lab = write_lab(work)
        home = work / "home"
        home.mkdir()
        secret = home / "instructor.txt"
        secret.write_text("the instructor's notes")
        secret.chmod(0o600)
        subs = work / "submissions"
        subs.mkdir()
        cells = HOSTILE["notebook_cells"]
        trap = HOSTILE["LINK_TRAP"].replace("{instructor_file}", str(secret))
        notebooks = {
            "honest": cells(),
            "trap": cells(after=[trap]),
            "fill_and_kill": cells(after=[HOSTILE["FILL_AND_KILL"]]),
        }
        for name, notebook in notebooks.items():
            (subs / f"{name}.ipynb").write_text(notebook_text(notebook))
        disk.mkdir()
        mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size=48m,mode=0755,uid={uid}",
                                  "tmpfs", str(disk)], capture_output=True)  # fmt: skip
        if mounted.returncode != 0:
            pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.decode()[-200:]}")
        for path in (home, secret, subs, *subs.iterdir()):
            os.chown(path, uid, uid)
        before = (stat.S_IMODE(secret.stat().st_mode), secret.read_text())
        env = {"HOME": str(home), "TMPDIR": str(disk), "PATH": os.environ.get("PATH", ""),
               "GPUPERF_SANDBOX": "fallback", "LANG": "C.UTF-8"}  # fmt: skip
        command = [*prefix, sys.executable, "-m", "gpuperf.grading", "grade", str(lab),
                   str(subs), "--out", str(disk / "out"), "--jobs", "3", "--timeout", "180",
                   "--cell-timeout", "30", "--memory", "1024", "--processes", "64",
                   "--cpus", "0.5"]  # fmt: skip
        with delegated_groups(uid, Share(2048, 300, 1.0)) as host:
            done = subprocess.run(
                command, capture_output=True, timeout=COMMAND_TIMEOUT_S, cwd=str(home), env=env,
                preexec_fn=None if host is None else host.join, **identity,
            )  # fmt: skip
            left_behind = [] if host is None else _left_below(host)
        console = done.stdout.decode("utf-8", "backslashreplace")
        assert done.returncode == 0, console + done.stderr.decode(errors="replace")[-3000:]
        after = (stat.S_IMODE(secret.stat().st_mode), secret.read_text())
        rows = {r["student"]: r for r in read_rows(disk / "out" / LAB / "grades.csv")}
        left = sorted(p.name for p in disk.iterdir()) + left_behind
        print(f"the non-root instructor: {who}")
        yield rows, disk / "out" / LAB, before, after, console, left, host is not None
    finally:
        subprocess.run(["umount", "-l", str(disk)], capture_output=True)
        with contextlib.suppress(OSError):
            remove_tree(work)


def test_the_link_trap_never_reaches_the_instructors_file(non_root_class) -> None:
    rows, out, before, after, *_ = non_root_class
    assert after == before, f"the instructor's file changed: {before} → {after}"
    assert rows["trap"]["status"] == "GRADED" and rows["trap"]["total"] == "6", rows["trap"]
    assert "trap set" in (out / "trap" / "output.log").read_text()


def test_a_killed_grader_leaves_no_scratch_and_costs_no_classmate(non_root_class) -> None:
    rows, _, _, _, console, left, delegated = non_root_class
    assert left == ["out"], f"scratch, cgroups or processes left behind: {left}"
    assert rows["honest"]["status"] == "GRADED" and rows["honest"]["total"] == "6", rows
    killed = rows["fill_and_kill"]
    assert killed["status"] == "UNGRADED" and "no results" in killed["reason"], killed
    assert ("each sandbox's share: cgroup" in console) == delegated, console


# ------------------------------------------------------------------------------ units


def test_text_is_escaped_and_quotes_cannot_be_closed() -> None:
    assert printable("caf\udce9 \x1b[2K\n\u202e\ud800") == "caf\\xe9 \\x1b[2K\\n\\u202e\\ud800"
    assert printable("ok é ✓") == "ok é ✓"
    assert printable("x" * 30, 10) == "x" * 10 + "… (20 more characters)"
    assert quoted('a"b|c\\d\x1b') == '"a\\"b\\|c\\\\d\\x1b"'
    forged = quoted('" | grading stopped at the time limit | "')
    assert SEPARATOR not in forged and forged.count('"') - forged.count('\\"') == 2
    for bad in (1, None, b"x"):
        with pytest.raises(TypeError, match="text="):
            printable(bad)
    with pytest.raises(ValueError, match="limit="):
        quoted("x", 0)


def test_reserved_and_non_utf8_names_get_their_own_rows() -> None:
    stems = ["grades.csv", "GRADES.CSV", "con", "lpt1.txt", "ada", "caf\udce9"]
    names = row_names(stems, [f"{s}.ipynb" for s in stems])
    assert names[4] == "ada"
    for name in names[:4] + names[5:]:
        assert "~" in name, names
    assert len(set(names)) == len(names)


def test_walk_and_remove_never_follow_links(tmp_path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("keep")
    top = tmp_path / "top"
    (top / "a" / "b").mkdir(parents=True)
    (top / "a" / "b" / "nb.ipynb").write_text("{}")
    (top / "link").symlink_to(outside, target_is_directory=True)
    (top / "a" / "file-link").symlink_to(outside / "keep.txt")
    kinds = {str(e.path): e.kind for e in walk(top)}
    assert kinds == {"a": "folder", "link": "link", "a/b": "folder", "a/file-link": "link",
                     "a/b/nb.ipynb": "file"}  # fmt: skip
    assert [str(e.path) for e in walk(top, max_depth=1)] == ["a", "link"]
    with pytest.raises(TreeError):
        remove_tree(top / "link")
    remove_tree(top)
    assert not top.exists() and (outside / "keep.txt").read_text() == "keep"
    remove_tree(top)  # already gone: nothing to do


def test_a_notebook_that_would_not_fit_in_memory_is_refused(tmp_path, monkeypatch) -> None:
    path = tmp_path / "bloated.ipynb"
    path.write_text(notebook_text(HOSTILE["notebook_cells"](), metadata_mb=8))
    read = read_submission(path)  # within the cap: read, only what grading needs
    assert read.assignment == LAB and len(read.code_cells) == len(HOSTILE["HANDOUT"])
    monkeypatch.setattr("gpuperf.classroom.submissions.READ_MEMORY_MB", 128)
    from gpuperf.classroom.submissions import SubmissionError

    with pytest.raises(SubmissionError, match="too complex to read"):
        read_submission(path)


def test_lazy_answers_are_bounded_on_the_wire() -> None:
    assert list(wire.decode(wire.encode(range(3, 9)))) == [3, 4, 5, 6, 7, 8]
    with pytest.raises(wire.WireError, match="over the limit"):
        wire.decode(wire.encode(range(40_000_000)))
    many = wire.encode([range(2**20)] * 3)  # each within the limit, not together
    with pytest.raises(wire.WireError, match="over the limit"):
        wire.decode(many)
    with pytest.raises(ValueError, match="depth="):
        wire.encode(1.0, depth="1")
    from gpuperf.classroom.tester import AnswerNamespace

    with pytest.raises(TypeError, match="references="):
        AnswerNamespace(["H100"], None)


def test_no_cgroup_is_said_once_and_why(monkeypatch) -> None:
    monkeypatch.setenv("GPUPERF_CGROUP", "off")
    box.hierarchy.cache_clear()
    try:
        assert box.hierarchy() == "cgroups are switched off (GPUPERF_CGROUP=off)"
    finally:
        box.hierarchy.cache_clear()


def test_a_box_limits_kills_and_vanishes() -> None:
    if _boxes() is None:
        pytest.skip(f"no cgroup here: {box.hierarchy()}")
    with host_limits(Share(memory_mb=64, processes=8, cpus=0.2), "unit") as unit:
        started = subprocess.Popen(
            [sys.executable, "-c", "import os, time\nfor _ in range(20):\n    try:\n"
             "        os.fork() or time.sleep(30)\n    except OSError:\n        break\n"
             "time.sleep(30)"], preexec_fn=unit.join,
        )  # fmt: skip
        try:
            for _ in range(100):
                if len(unit.pids()) >= 8:
                    break
                subprocess.run(["sleep", "0.05"])
            assert len(unit.pids()) <= 8, unit.pids()
            assert unit.kill() and unit.pids() == []
        finally:
            started.kill()
            started.wait()
        folders = unit.paths()
    assert not any(Path(f).exists() for f in folders)


#: Started through the shim: start a sandbox the way the grader does and print its first line.
SANDBOX_START = """
from gpuperf.classroom import sandbox
process = sandbox.runner_process(None, sandbox.Limits(), "bwrap")
print(process.stdout.readline().decode().strip() or process.stderr.read().decode()[-300:])
sandbox.kill(process)
"""


def test_the_sandbox_starts_however_python_was_reached(tmp_path) -> None:
    """Issue 39, setup: a grader started through a shim and a link to its environment's
    folder starts its sandboxes (bwrap mounts real folders: it must run Python from one)."""
    if sandbox.mechanism() != "bwrap":
        pytest.skip("bubblewrap is not installed here (CI installs it: .ci/run)")
    if sys.prefix == sys.base_prefix:
        pytest.skip("needs a virtual environment to reach through a link")
    done = subprocess.run([str(_shim(tmp_path)), "-c", SANDBOX_START], capture_output=True,
                          text=True, timeout=120, cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0 and '"ready":true' in done.stdout, done.stdout + done.stderr
    interpreter = sandbox.interpreter()
    assert interpreter.parent == Path(os.path.realpath(Path(sys.executable).parent))
    assert interpreter.name == Path(sys.executable).name


def test_find_submissions_survives_any_name_and_depth(tmp_path) -> None:
    folder = tmp_path / "subs"
    folder.mkdir()
    with open(os.path.join(os.fsencode(folder), b"caf\xe9.ipynb"), "w") as handle:
        handle.write("{}")
    (folder / "deep").mkdir()
    _deep_tree(folder / "deep" / "junk", 100)
    (folder / "deep" / "lab.ipynb").write_text("{}")
    (folder / "buried").mkdir()
    _deep_tree(folder / "buried" / "junk", 40)
    found = {s.entry: s for s in find_submissions(folder, "lab")}
    assert found["caf\udce9.ipynb"].notebook is not None
    assert found["deep"].notebook == folder / "deep" / "lab.ipynb"
    assert "first 32 levels" in found["buried"].problem, found["buried"]


def test_the_csv_takes_any_text(tmp_path) -> None:
    """A lone surrogate once truncated the CSV to its header; control characters redrew rows."""
    from gpuperf.classroom.grade import write_csv

    path = tmp_path / "grades.csv"
    rows = [{"student": "ada", "submission": "caf\udce9.ipynb", "status": "GRADED",
             "notes": 'cell 1 raised ValueError: "\x1b[1A\x1b[2K\rbob,GRADED\n"'},
            {"student": "bob", "reason": "=1+1", "status": "UNGRADED"}]  # fmt: skip
    write_csv(path, ["q1"], rows)
    text = path.read_text(encoding="utf-8")
    assert all(c.isprintable() or c in "\r\n" for c in text), text
    read = read_rows(path)
    assert [r["student"] for r in read] == ["ada", "bob"]
    assert read[0]["submission"] == "caf\\xe9.ipynb" and read[1]["reason"] == "'=1+1"
    assert not list(tmp_path.glob(".*.tmp"))
