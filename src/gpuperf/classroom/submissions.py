"""Who is in the class, and what they handed in: one row per entry, notebooks read safely.

An instructor downloads a class's notebooks into one folder: one ``<student>.ipynb`` per
student, or one ``<student>/`` folder holding the notebook (as an LMS download often is).
:func:`find_submissions` turns *every* entry of that folder into one :class:`Submission`, so no
student is ever silently missing from ``grades.csv``: an entry that cannot be graded (a link, a
file that is not a notebook, a folder with no notebook or several) is still a row, with the
reason.

Links are never followed: a submission is a regular file the student handed in, and a link (to
a classmate's notebook, to the lab's solutions) is refused with its target named, and a
student's folder is searched by a walk that never enters one, to a bounded depth (an unpacked
archive may nest a thousand levels: :mod:`.trees`). A notebook is then read by
:func:`read_submission`, in a process of its own with a memory cap: opened without following a
link, only if it is a regular file of a sane size, and refused with what is wrong when it is
damaged (a cell whose source is not text, a code cell of megabytes) or would need more memory to
read than any notebook should (megabytes of ``{}`` in its metadata).

Each row gets a name that is unique, the same on every run, usable as a folder name and safe in
a spreadsheet (:func:`row_names`): the entry's own name when it is already all letters, digits
and ``._+@-`` (and starts with a letter, a digit or ``_``, so no spreadsheet reads it as a
formula), else a cleaned-up form plus ``~`` and 8 hex digits of a hash of the real name. ``~``
never appears in a name kept as it is, so the two kinds never collide: ``x y.ipynb``,
``x_y.ipynb`` and ``x_y-2.ipynb`` become ``x_y~…``, ``x_y`` and ``x_y-2``. Names the grader
itself uses beside the students' folders (``grades.csv.ipynb`` would give a folder
``grades.csv``) and device names Windows reserves (``con``, ``lpt1``) take the suffix too. Names
that are not UTF-8 (an old zip) work like any other.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from .._validate import file_path, name_string, sequence, show
from .trees import walk

#: A notebook file name ends with this, in any case (``Upper.IPYNB`` is one).
NOTEBOOK_SUFFIX = ".ipynb"
#: Characters a row name may keep; anything else becomes ``_``.
_UNSAFE = re.compile(r"[^A-Za-z0-9._+@-]+")
#: A row name starts with one of these (never ``=``, ``+``, ``-``, ``@`` or ``.``).
_SAFE_START = re.compile(r"[A-Za-z0-9_]")
MAX_NAME_CHARS = 80
#: Names a row may not have as they are (any case): what the grader writes beside the students'
#: folders, and names Windows reserves for devices (a results folder copied to a share).
RESERVED = frozenset(
    {"grades.csv", "con", "prn", "aux", "nul"}
    | {f"{port}{n}" for port in ("com", "lpt") for n in range(1, 10)}
)


def _reserved(name: str) -> bool:
    lower = name.lower()
    return lower in RESERVED or lower.split(".")[0] in RESERVED - {"grades.csv"}


@dataclass(frozen=True)
class Submission:
    """One row of the class: its name, the entry it comes from, the notebook to grade (or why
    there is none)."""

    student: str
    entry: str
    notebook: Path | None
    problem: str = ""

    def __post_init__(self) -> None:
        name_string("student", self.student)
        _text("entry", self.entry)
        if self.notebook is not None:
            file_path("notebook", self.notebook)
        _text("problem", self.problem)


def _text(name: str, value: object) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{name}={show(value)} must be a string")
    return value


def _is_notebook_name(name: str) -> bool:
    return name.lower().endswith(NOTEBOOK_SUFFIX) and len(name) > len(NOTEBOOK_SUFFIX)


def _stem(entry: os.DirEntry) -> str:
    """The student's name an entry gives: a notebook file's name without ``.ipynb``, else the
    whole name."""
    name = entry.name
    if _is_notebook_name(name) and not entry.is_dir(follow_symlinks=False):
        return name[: -len(NOTEBOOK_SUFFIX)]
    return name


def _clean(stem: str) -> str:
    clean = _UNSAFE.sub("_", stem)[:MAX_NAME_CHARS]
    if not clean or not _SAFE_START.match(clean):
        clean = "_" + clean
    return clean


def row_names(stems: list[str], entries: list[str]) -> list[str]:
    """A unique, stable, path- and spreadsheet-safe name per entry (see the module docstring).

    Names equal up to case (``Ada`` and ``ada``: one folder on a case-insensitive disk) or given
    twice (``ada.ipynb`` beside an ``ada/`` folder) all take the hash suffix too.
    """
    stems = list(sequence("stems", stems, _text, minimum=0))
    entries = list(sequence("entries", entries, _text, minimum=0))
    if len(entries) != len(stems):
        raise ValueError(
            f"entries={show(entries)} must hold one entry name per stem ({len(stems)} stems)"
        )
    clean = [_clean(stem) for stem in stems]
    # names kept as they are can only collide with each other: the others all take a ``~``
    counts = Counter(name.lower() for name, stem in zip(clean, stems, strict=True) if name == stem)
    names = []
    for stem, entry, name in zip(stems, entries, clean, strict=True):
        if name != stem or counts[name.lower()] > 1 or _reserved(name):
            digest = hashlib.sha256(entry.encode("utf-8", "surrogateescape")).hexdigest()[:8]
            name = f"{name}~{digest}"
        names.append(name)
    return names


def _link_target(path: Path) -> str:
    try:
        return os.readlink(path)[:200]
    except OSError:
        return "?"


#: How deep a student's folder is searched for the notebook, and how many entries at most: an
#: unpacked archive may nest a thousand levels (deeper than ``os.walk`` could go before 3.12).
MAX_FOLDER_DEPTH, MAX_FOLDER_ENTRIES = 32, 10_000


def _in_folder(folder: Path, lab: str) -> tuple[Path | None, str]:
    """The notebook a student's folder holds, or why there is none (links are not followed)."""
    notebooks, links, cut = [], [], False
    try:
        for entry in walk(folder, max_depth=MAX_FOLDER_DEPTH, max_entries=MAX_FOLDER_ENTRIES):
            if ".ipynb_checkpoints" in entry.path.parts:
                continue
            cut = cut or (entry.kind == "folder" and entry.depth == MAX_FOLDER_DEPTH)
            if entry.kind == "link":
                links.append(entry.path)
            elif entry.kind == "file" and _is_notebook_name(entry.path.name):
                notebooks.append(entry.path)
    except OSError as error:
        return None, f"folder unreadable: {error.strerror}"
    linked = [p for p in links if _is_notebook_name(p.name)]
    if linked:
        return None, (
            f"{str(linked[0])!r} is a symbolic link (to {_link_target(folder / linked[0])!r}), "
            "not a notebook: hand in the notebook itself"
        )
    preferred = [p for p in notebooks if p.name.lower() == f"{lab}{NOTEBOOK_SUFFIX}".lower()]
    if len(preferred) == 1 or len(notebooks) == 1:
        return folder / (preferred or notebooks)[0], ""
    if not notebooks:
        extra = " (symbolic links are not followed)" if links else ""
        if cut:
            extra += f" (only its first {MAX_FOLDER_DEPTH} levels were searched)"
        return None, f"no .ipynb in the folder{extra}"
    names = ", ".join(repr(str(p)) for p in notebooks[:5])
    return None, f"several notebooks: {names}"


def find_submissions(folder: Path, lab: str) -> list[Submission]:
    """One :class:`Submission` per entry of ``folder``, in name order: a ``name.ipynb`` file
    (any case), a ``name/`` folder whose notebook is ``<lab>.ipynb`` or its only ``.ipynb``, or
    anything else with the reason it cannot be graded. Hidden entries (``.name``) count too."""
    if not isinstance(folder, str | os.PathLike):
        raise TypeError(f"folder={folder!r} must be a path to the submissions folder")
    if not isinstance(lab, str) or not lab:
        raise TypeError(f"lab={lab!r} must be the lab's name, e.g. 'lab1_rooflines'")
    with os.scandir(folder) as scan:
        entries = sorted(scan, key=lambda e: e.name)
    found = []
    for entry in entries:
        path = Path(folder) / entry.name
        notebook, problem = None, ""
        if entry.is_symlink():
            problem = (
                f"a symbolic link (to {_link_target(path)!r}), not a file: submissions are "
                "the students' own notebooks"
            )
        elif entry.is_dir(follow_symlinks=False):
            notebook, problem = _in_folder(path, lab)
        elif not entry.is_file(follow_symlinks=False):
            problem = "not a regular file or folder"
        elif _is_notebook_name(entry.name):
            notebook = path
        else:
            problem = "not a notebook: a submission is an .ipynb file or a folder holding one"
        found.append((entry, notebook, problem))
    names = row_names([_stem(e) for e, _, _ in found], [e.name for e, _, _ in found])
    return [
        Submission(name, entry.name, notebook, problem)
        for name, (entry, notebook, problem) in zip(names, found, strict=True)
    ]


# ------------------------------------------------------------------------------ reading one


#: Largest notebook file read (outputs included: figures make notebooks large).
MAX_NOTEBOOK_BYTES = 100 * 2**20
#: Largest code cell run: a lab's cells are a few kB, so this is a damaged or padded file.
MAX_CELL_BYTES = 2**20
#: Most source all code cells may hold together.
MAX_CODE_BYTES = 4 * 2**20
#: Memory (MiB of address space) the reader of one notebook may use: an honest 100 MB notebook
#: (figures) needs about 400; a notebook whose JSON expands more is refused, not read.
READ_MEMORY_MB = 1024
#: Wall-clock seconds the reader may take (it has 60 s of CPU time).
READ_TIMEOUT_S = 300.0
_READER = Path(__file__).with_name("_read_notebook.py")


class SubmissionError(ValueError):
    """The submitted file cannot be graded; the message says what is wrong with it."""


@dataclass(frozen=True)
class SubmittedNotebook:
    """What grading reads of a notebook: the otter assignment it names (``None`` if none) and
    its code cells' sources, in order."""

    assignment: str | None
    code_cells: tuple[str, ...]

    def __post_init__(self) -> None:
        if self.assignment is not None:
            _text("assignment", self.assignment)
        object.__setattr__(self, "code_cells", sequence("code_cells", self.code_cells, _text,
                                                        minimum=0))  # fmt: skip


def read_submission(path: Path) -> SubmittedNotebook:
    """The notebook at ``path``, read by a separate process capped at :data:`READ_MEMORY_MB`
    MiB and 60 s of CPU, opened without following a link and only if it is a regular file of
    at most :data:`MAX_NOTEBOOK_BYTES`; else :class:`SubmissionError` with the reason. So the
    grader's memory never depends on what a notebook holds (outputs, metadata)."""
    path = file_path("path", path)
    if not os.path.lexists(path):  # the caller's mistake: a submission found is never missing
        raise SubmissionError(f"notebook unreadable: no file at path={show(str(path))}")
    command = [sys.executable, "-I", "-S", str(_READER), os.fsdecode(path),
               str(MAX_NOTEBOOK_BYTES), str(MAX_CELL_BYTES), str(MAX_CODE_BYTES),
               str(READ_MEMORY_MB)]  # fmt: skip
    try:
        done = subprocess.run(command, capture_output=True, timeout=READ_TIMEOUT_S, env={})
    except subprocess.TimeoutExpired:
        raise SubmissionError(
            f"notebook unreadable: reading it took more than {READ_TIMEOUT_S:.0f} s"
        ) from None
    try:
        answer = json.loads(done.stdout) if done.returncode == 0 else None
    except ValueError:
        answer = None
    if not isinstance(answer, dict):
        size = _size_mb(path)
        raise SubmissionError(
            f"notebook too complex to read: a {size} file whose contents need more than "
            f"{READ_MEMORY_MB} MiB of memory or 60 s to read (huge outputs or metadata?)"
        )
    if not answer.get("ok"):
        raise SubmissionError(str(answer.get("reason"))[:500])
    return SubmittedNotebook(answer.get("assignment"), tuple(answer.get("code", ())))


def _size_mb(path: Path) -> str:
    try:
        return f"{os.lstat(path).st_size / 1e6:.1f} MB"
    except OSError:
        return "vanished"


def code_digest(cells: list[str]) -> str:
    """sha256 of a notebook's code cells (what ``grades.csv`` compares to flag identical
    submissions: the same code under two names, whatever the outputs or metadata)."""
    cells = list(sequence("cells", cells, _text, minimum=0))
    return hashlib.sha256(json.dumps(cells).encode("utf-8", "surrogatepass")).hexdigest()


__all__ = [
    "MAX_CELL_BYTES",
    "MAX_CODE_BYTES",
    "MAX_NOTEBOOK_BYTES",
    "Submission",
    "SubmissionError",
    "SubmittedNotebook",
    "code_digest",
    "find_submissions",
    "read_submission",
    "row_names",
]
