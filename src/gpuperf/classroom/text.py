"""What a student's text becomes in a report: readable, escaped, and never mistaken for ours.

Everything the class grader writes (``grades.csv``, ``feedback.txt``, ``grading.log``,
``output.log``, the console) holds text a submission chose: file and folder names (which need
not be UTF-8: an old zip, a Windows share), exception messages and answers (which may hold lone
surrogates such as ``"caf\\udce9"``, or terminal control sequences that erase the line above
and redraw it). Two rules keep every report honest:

* :func:`printable`: every character that is not printable is written as a Python escape
  (``\\x1b``, ``\\n``, ``\\u202e``), and a lone surrogate, which no encoding can write, as
  ``\\udce9`` or, when it stands for a byte of a file name that is not UTF-8, as ``\\xe9``. So a
  report can always be written, and ``cat`` shows exactly the characters, never moves the
  cursor, never starts a new line a student chose.
* :func:`quoted`: a student's text inside a note the grader writes is put in double quotes, with
  ``"``, ``\\`` and the notes' separator ``|`` escaped as well, so it can neither close its quotes
  nor start a note of its own: ``cell 3 raised ValueError: "grading stopped at the time
  limit"`` cannot be read as the grader's words.
"""

from __future__ import annotations

from .._validate import positive_int, show

#: What separates the notes of one row (``grades.csv``'s ``notes`` column).
SEPARATOR = " | "
#: The longest text kept by default (a report is read by a person).
MAX_CHARS = 2000


def _escape(char: str) -> str:
    code = ord(char)
    if 0xDC80 <= code <= 0xDCFF:  # a byte that was not UTF-8, kept by surrogateescape
        return f"\\x{code - 0xDC00:02x}"
    if code < 0x100:
        return {"\n": "\\n", "\r": "\\r", "\t": "\\t"}.get(char, f"\\x{code:02x}")
    if code < 0x10000:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def _check(text: object, limit: object) -> tuple[str, int]:
    if not isinstance(text, str):
        raise TypeError(f"text={show(text)} must be a string")
    return text, positive_int("limit", limit, minimum=1, maximum=2**31)


def printable(text: str, limit: int = MAX_CHARS) -> str:
    """``text`` with every non-printable character (controls, line breaks, bidirectional
    overrides, lone surrogates) escaped, cut to at most ``limit`` characters of the original
    (1 … 2³¹) with a count of what was left out."""
    text, limit = _check(text, limit)
    kept = "".join(c if c.isprintable() else _escape(c) for c in text[:limit])
    return kept if len(text) <= limit else f"{kept}… ({len(text) - limit} more characters)"


def quoted(text: str, limit: int = MAX_CHARS) -> str:
    """``text`` as a student's words inside a grader's note: :func:`printable`, with ``\\``,
    ``"`` and ``|`` escaped too, between double quotes."""
    text, limit = _check(text, limit)
    inner = text[:limit].replace("\\", "\\\\").replace('"', '\\"').replace("|", "\\|")
    more = "" if len(text) <= limit else f"… ({len(text) - limit} more characters)"
    return f'"{printable(inner, len(inner) or 1)}{more}"'


__all__ = ["MAX_CHARS", "SEPARATOR", "printable", "quoted"]
