"""Folders a student controls, walked and removed without ever following a link.

A submission's folder (an unpacked archive) and, in the fallback sandbox, its scratch folder are
trees a student made: they may hold links to the instructor's files, folders without read or
write permission, names that are not UTF-8, and nesting a thousand levels deep. Path-based tools
trip on each: ``os.walk`` recursed out on deep trees before Python 3.12, and
``TemporaryDirectory``'s cleanup, meeting a folder it could not empty, ran ``chmod`` on a path
that was a link and changed the instructor's file it pointed to (CVE-2023-6597, fixed in
3.11.8 and 3.12.2; the class grader must be safe on any supported Python).

Here every step is relative to an open folder (``dir_fd``), with ``O_NOFOLLOW``: a link is
removed or reported, never entered, and permissions are only ever changed through a descriptor
of the folder itself (opened with ``O_PATH | O_NOFOLLOW | O_DIRECTORY``, so it cannot be a
link). The walks are loops, not recursion, and hold one folder open at a time, so depth costs
neither stack nor file descriptors.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from .._validate import choice, file_path, positive_int

_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_PATH = getattr(os, "O_PATH", 0) | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


class TreeError(OSError):
    """A tree changed under the walk (a folder moved) or could not be removed."""


def _open_child(parent: int, name: str) -> int:
    """An open descriptor of folder ``name`` in ``parent``, never through a link; a folder with
    no read or search permission is given it first (through its own descriptor)."""
    try:
        return os.open(name, _DIR, dir_fd=parent)
    except PermissionError:
        handle = os.open(name, _PATH, dir_fd=parent)
        try:  # chmod of the folder itself: /proc/self/fd/N is the open folder, not a path
            os.chmod(f"/proc/self/fd/{handle}", 0o700)
        finally:
            os.close(handle)
        return os.open(name, _DIR, dir_fd=parent)


def _make_writable(folder: int) -> None:
    os.chmod(f"/proc/self/fd/{folder}", 0o700)


def _identity(fd: int) -> tuple[int, int]:
    info = os.fstat(fd)
    return info.st_dev, info.st_ino


def remove_tree(path: Path) -> None:
    """Remove the folder ``path`` and everything in it, following no link (a link is removed,
    not its target) and changing no permission outside the tree; a missing ``path`` is fine.
    ``path`` itself must be a folder, not a link to one (else :class:`TreeError`)."""
    path = file_path("path", path)
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return
    if not stat.S_ISDIR(info.st_mode):
        raise TreeError(f"path={str(path)!r} is not a folder (a link or a file): not removed")
    top = os.open(path, _DIR)
    stack: list[tuple[str, tuple[int, int]]] = []  # (name in parent, parent's identity)
    fd = top
    try:
        while True:
            child = _first_entry(fd)
            if child is not None:
                name, is_dir = child
                if not is_dir:
                    _unlink(fd, name)
                    continue
                inner = _open_child(fd, name)
                stack.append((name, _identity(fd)))
                os.close(fd)
                fd = inner
                continue
            if not stack:
                break
            name, expected = stack.pop()
            parent = os.open("..", _DIR, dir_fd=fd)
            os.close(fd)
            fd = parent
            if _identity(fd) != expected:
                raise TreeError(f"a folder under {str(path)!r} was moved while it was removed")
            _rmdir(fd, name)
    finally:
        os.close(fd)
    os.rmdir(path)


def _first_entry(fd: int) -> tuple[str, bool] | None:
    """One entry of the open folder (files first, so a wide folder is one pass), else None."""
    folder = None
    with os.scandir(fd) as entries:
        for entry in entries:
            if not entry.is_dir(follow_symlinks=False):
                return entry.name, False
            folder = folder or entry.name
    return None if folder is None else (folder, True)


def _unlink(fd: int, name: str) -> None:
    try:
        os.unlink(name, dir_fd=fd)
    except PermissionError:  # a folder without write permission: give it, then retry
        _make_writable(fd)
        os.unlink(name, dir_fd=fd)


def _rmdir(fd: int, name: str) -> None:
    try:
        os.rmdir(name, dir_fd=fd)
    except PermissionError:
        _make_writable(fd)
        os.rmdir(name, dir_fd=fd)


@dataclass(frozen=True)
class Entry:
    """One entry met by :func:`walk`: its path below the top, its kind, its depth (1 = top)."""

    path: Path
    kind: str  # "file", "folder", "link" or "other"
    depth: int

    def __post_init__(self) -> None:
        object.__setattr__(self, "path", file_path("path", self.path))
        choice("kind", self.kind, KINDS)
        object.__setattr__(self, "depth", positive_int("depth", self.depth, maximum=4096))


#: What an :class:`Entry` can be.
KINDS = ("file", "folder", "link", "other")


def walk(folder: Path, *, max_depth: int = 32, max_entries: int = 10_000) -> Iterator[Entry]:
    """Every entry under ``folder`` (top first, names sorted), never entering a link, at most
    ``max_depth`` folders deep (1 … 4096) and ``max_entries`` entries in all (1 … 10⁶): a deeper
    or larger tree is cut there, silently (the caller says what it did not find)."""
    folder = file_path("folder", folder)
    max_depth = positive_int("max_depth", max_depth, maximum=4096)
    max_entries = positive_int("max_entries", max_entries, maximum=10**6)
    top = os.open(folder, _DIR)  # now: a missing folder or a link is the caller's error
    return _walk(top, max_depth, max_entries)


def _walk(top: int, max_depth: int, max_entries: int) -> Iterator[Entry]:
    pending = [(Path(), 1)]  # folders to list, relative to the top
    seen = 0
    try:
        while pending:
            relative, depth = pending.pop()
            fd = _open_relative(top, relative)
            if fd is None:
                continue
            try:
                with os.scandir(fd) as scan:
                    entries = sorted(scan, key=lambda e: e.name)
            finally:
                if fd != top:
                    os.close(fd)
            children = []
            for entry in entries:
                seen += 1
                if seen > max_entries:
                    return
                kind = _kind(entry)
                yield Entry(relative / entry.name, kind, depth)
                if kind == "folder" and depth < max_depth:
                    children.append((relative / entry.name, depth + 1))
            pending += reversed(children)
    finally:
        os.close(top)


def _open_relative(top: int, relative: Path) -> int | None:
    """The folder ``relative`` below ``top``, each step opened with ``O_NOFOLLOW`` (None if it
    is gone or unreadable); one descriptor at a time, so depth costs none."""
    fd = top
    try:
        for part in relative.parts:
            inner = os.open(part, _DIR, dir_fd=fd)
            if fd != top:
                os.close(fd)
            fd = inner
    except OSError:
        if fd != top:
            os.close(fd)
        return None
    return fd


def _kind(entry: os.DirEntry) -> str:
    if entry.is_symlink():
        return "link"
    if entry.is_dir(follow_symlinks=False):
        return "folder"
    if entry.is_file(follow_symlinks=False):
        return "file"
    return "other"


__all__ = ["Entry", "TreeError", "remove_tree", "walk"]
