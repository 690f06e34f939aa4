"""Is the answer there? Placeholders, missing names and unanswered questions.

otter hands students ``...`` where an answer goes. A check on an untouched question must say
"not answered yet", not crash on the ``...``; a hidden test must take the student's answers, and
only those, from the notebook's namespace (:func:`answer`); and the handout's own print lines
and figures must not raise a traceback from code the student did not write while the answers
are still missing (:func:`all_answered`).
"""

from __future__ import annotations

import ast
import inspect
import textwrap
from collections.abc import Mapping
from typing import Any

from .._validate import show
from .feedback import CheckError, _name

__all__ = ["all_answered", "answer", "answered"]


def _has_placeholder(value: Any) -> bool:
    if value is Ellipsis:
        return True
    if type(value) in (tuple, list):
        return any(item is Ellipsis for item in value)
    if type(value) is dict:
        return any(item is Ellipsis for item in value.values())
    return False


def answered(name: str, value: Any) -> Any:
    """Fail with "not answered yet" if ``value`` is still otter's ``...`` placeholder (or a
    tuple, list or dict with a ``...`` in it) or ``None``; else return it. ``name`` is what
    the student calls the answer (a non-empty string)."""
    _name("name", name)
    if _has_placeholder(value):
        raise CheckError(
            f"`{name}` is not answered yet (it is still `...`): replace the `...` with your "
            "answer."
        )
    if value is None:
        raise CheckError(f"`{name}` is None: did your function forget to `return` its result?")
    return value


def _is_stub(function: Any) -> bool:
    """Is ``function`` still the handed-out skeleton, with a bare ``...`` (or ``x = ...``)
    statement in its body? Read from its source; a function without readable source is not."""
    target = getattr(function, "fn", function)  # a @triton.jit kernel wraps the function
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(target)))
    except (OSError, TypeError, SyntaxError, ValueError):
        return False
    for node in ast.walk(tree):
        placeholder = (
            isinstance(node, ast.Expr | ast.Assign | ast.AnnAssign)
            and isinstance(node.value, ast.Constant)
            and node.value.value is Ellipsis
        )
        if placeholder:
            return True
    return False


def all_answered(*answers: Any) -> bool:
    """True when none of ``answers`` is still a placeholder; else print that the question is not
    answered yet and return False.

    The labs' own print lines and figures use it, so that running an untouched notebook shows
    "not answered yet" instead of a traceback from code the student did not write. A value
    counts as unanswered when it is ``...``, ``None`` or a tuple, list or dict holding a
    ``...``; a function when its body still has a bare ``...`` statement.
    """
    for value in answers:
        if callable(value) and not isinstance(value, type):
            if _is_stub(value):
                break
        elif value is None or _has_placeholder(value):
            break
    else:
        return True
    print("Not answered yet: fill in the `...` of this question, then run this cell again.")
    return False


def answer(env: Mapping[str, Any], name: str) -> Any:
    """The student's answer ``name`` from the notebook's namespace ``env`` (hidden tests take
    answers, and only answers, this way); fails if it is undefined or not answered yet."""
    if not isinstance(env, Mapping):
        raise TypeError(f"env={show(env)} must be the notebook's namespace (a dict: globals())")
    _name("name", name)
    if name not in env:
        raise CheckError(f"`{name}` is not defined: run the cell that defines it (keep its name).")
    return answered(name, env[name])
