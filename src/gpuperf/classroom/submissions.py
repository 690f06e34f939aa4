"""Who is in the class, and what they handed in: one row per entry, notebooks read safely.

An instructor downloads a class's notebooks into one folder: one ``<student>.ipynb`` per
student, or one ``<student>/`` folder holding the notebook (as an LMS download often is).
:func:`find_submissions` turns *every* entry of that folder into one :class:`Submission`, so no
student is ever silently missing from ``grades.csv``: an entry that cannot be graded (a link, a
file that is not a notebook, a folder with no notebook or several) is still a row, with the
reason.

Links are never followed: a submission is a regular file the student handed in, and a link (to
a classmate's notebook, to the lab's solutions) is refused with its target named. A notebook is
then read by :func:`read_submission`: opened without following a link, only if it is a regular
file of a sane size, and refused with what is wrong when it is damaged (a cell whose source is
not text, a code cell of megabytes).

Each row gets a name that is unique, the same on every run, usable as a folder name and safe in
a spreadsheet (:func:`row_names`): the entry's own name when it is already all letters, digits
and ``._+@-`` (and starts with a letter, a digit or ``_``, so no spreadsheet reads it as a
formula), else a cleaned-up form plus ``~`` and 8 hex digits of a hash of the real name. ``~``
never appears in a name kept as it is, so the two kinds never collide: ``x y.ipynb``,
``x_y.ipynb`` and ``x_y-2.ipynb`` become ``x_y~…``, ``x_y`` and ``x_y-2``.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._validate import file_path, name_string, sequence, show

#: A notebook file name ends with this, in any case (``Upper.IPYNB`` is one).
NOTEBOOK_SUFFIX = ".ipynb"
#: Characters a row name may keep; anything else becomes ``_``.
_UNSAFE = re.compile(r"[^A-Za-z0-9._+@-]+")
#: A row name starts with one of these (never ``=``, ``+``, ``-``, ``@`` or ``.``).
_SAFE_START = re.compile(r"[A-Za-z0-9_]")
MAX_NAME_CHARS = 80


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
        if name != stem or counts[name.lower()] > 1:
            digest = hashlib.sha256(entry.encode("utf-8", "surrogateescape")).hexdigest()[:8]
            name = f"{name}~{digest}"
        names.append(name)
    return names


def _link_target(path: Path) -> str:
    try:
        return os.readlink(path)[:200]
    except OSError:
        return "?"


def _in_folder(folder: Path, lab: str) -> tuple[Path | None, str]:
    """The notebook a student's folder holds, or why there is none (links are not followed)."""
    notebooks, links = [], []
    try:
        for root, dirs, files in os.walk(folder, followlinks=False):
            dirs[:] = sorted(d for d in dirs if d != ".ipynb_checkpoints")
            for name in sorted(files + [d for d in dirs if os.path.islink(Path(root) / d)]):
                path = Path(root) / name
                if os.path.islink(path):
                    links.append(path)
                elif _is_notebook_name(name) and path.is_file():
                    notebooks.append(path)
    except OSError as error:
        return None, f"folder unreadable: {error.strerror}"
    linked = [p for p in links if _is_notebook_name(p.name)]
    if linked:
        where = linked[0].relative_to(folder)
        return None, (
            f"{where} is a symbolic link (to {_link_target(linked[0])!r}), not a notebook: "
            "hand in the notebook itself"
        )
    preferred = [p for p in notebooks if p.name.lower() == f"{lab}{NOTEBOOK_SUFFIX}".lower()]
    if len(preferred) == 1 or len(notebooks) == 1:
        return (preferred or notebooks)[0], ""
    if not notebooks:
        extra = " (symbolic links are not followed)" if links else ""
        return None, f"no .ipynb in the folder{extra}"
    names = ", ".join(repr(str(p.relative_to(folder))) for p in notebooks[:5])
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


class SubmissionError(ValueError):
    """The submitted file cannot be graded; the message says what is wrong with it."""


def read_submission(path: Path) -> Any:
    """The notebook at ``path`` (``nbformat`` v4), opened without following a link and only if it
    is a regular file of at most :data:`MAX_NOTEBOOK_BYTES`; else :class:`SubmissionError`."""
    import nbformat

    path = file_path("path", path)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:  # the caller's mistake: a submission found is never missing
        raise SubmissionError(f"notebook unreadable: no file at path={show(str(path))}") from None
    except OSError as error:
        why = "it is a symbolic link" if os.path.islink(path) else error.strerror
        raise SubmissionError(f"notebook unreadable: {why}") from None
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise SubmissionError("notebook unreadable: not a regular file")
        if info.st_size > MAX_NOTEBOOK_BYTES:
            raise SubmissionError(
                f"notebook too large: {info.st_size / 1e6:.1f} MB, over the "
                f"{MAX_NOTEBOOK_BYTES / 1e6:.0f} MB a notebook may have"
            )
        data = handle.read(MAX_NOTEBOOK_BYTES + 1)
    try:
        notebook = nbformat.reads(data.decode("utf-8"), as_version=4)
    except Exception as error:  # not UTF-8, not JSON, nested too deeply, not a notebook
        raise SubmissionError(
            f"notebook unreadable: {type(error).__name__}: {str(error)[:200]}"
        ) from None
    cells = notebook.get("cells") if isinstance(notebook, dict) else None
    if not isinstance(cells, list) or not isinstance(notebook.get("metadata"), dict):
        raise SubmissionError("notebook unreadable: it has no list of cells and metadata")
    for index, cell in enumerate(cells):
        if not isinstance(cell, dict) or not isinstance(cell.get("cell_type"), str):
            raise SubmissionError(f"notebook damaged: cell {index} is not a notebook cell")
        source = cell.get("source")
        if not isinstance(source, str):
            raise SubmissionError(
                f"notebook damaged: the source of cell {index} is {_type_name(source)}, not "
                "text (was the file edited by hand?)"
            )
        size = len(source.encode("utf-8", "surrogatepass"))
        if cell["cell_type"] == "code" and size > MAX_CELL_BYTES:
            raise SubmissionError(
                f"notebook damaged: code cell {index} holds {size / 1e6:.1f} MB of source, over "
                f"the {MAX_CELL_BYTES / 1e6:.0f} MB a cell may have (something pasted by "
                "mistake?)"
            )
    return notebook


def _type_name(value: Any) -> str:
    """``an int``, ``a list``, ``None``: what a value is, for a message."""
    if value is None:
        return "None"
    name = type(value).__name__
    return f"{'an' if name[0] in 'aeiou' else 'a'} {name}"


def code_digest(cells: list[str]) -> str:
    """sha256 of a notebook's code cells (what ``grades.csv`` compares to flag identical
    submissions: the same code under two names, whatever the outputs or metadata)."""
    cells = list(sequence("cells", cells, _text, minimum=0))
    return hashlib.sha256(json.dumps(cells).encode("utf-8", "surrogatepass")).hexdigest()


__all__ = [
    "MAX_CELL_BYTES",
    "MAX_NOTEBOOK_BYTES",
    "Submission",
    "SubmissionError",
    "code_digest",
    "find_submissions",
    "read_submission",
    "row_names",
]
