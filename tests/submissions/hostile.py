# ruff: noqa: E501  (the strings are notebook cells, kept as a student would write them)
"""A hostile class (issue 39): one submission per way a class loses grades, beside honest ones.

The lab is small and needs no torch (``lab8_hostile``: three questions, each with a public and
a hidden case), so the class costs little CPU beyond what the attacks burn inside their limits.
Each submission here is a list of code cells (``cells``) built on the handout, with what grading
must give (``status``, per-question ``scores``); ``tests/test_classroom_hostile.py`` names some
of them oddly (a file name that is not UTF-8, ``grades.csv.ipynb``, a folder 1200 levels deep),
grades them all in one command inside limits of its own, and checks each row.
"""

LAB = "lab8_hostile"

# ------------------------------------------------------------------------------ the lab

#: A hidden case's input no public message may ever show (see ``LEAK``).
HIDDEN_INPUT = "1234.5"


def _ok_test(name: str, cases: list[tuple[str, bool]], points: int = 2) -> str:
    """An otter OK-format test file: ``cases`` are (doctest code, hidden), sharing ``points``."""
    spec = {
        "name": name,
        "points": points,
        "suites": [
            {
                "cases": [
                    {"code": code, "hidden": hidden, "locked": False} for code, hidden in cases
                ],
                "scored": True,
                "setup": "",
                "teardown": "",
                "type": "doctest",
            }
        ],
    }
    return f"OK_FORMAT = True\ntest = {spec!r}\n"


TESTS = {
    "q1": _ok_test(
        "q1",
        [
            (
                ">>> from gpuperf.grading import check_close\n>>> check_close('value', value, 2.5)\n",
                False,
            ),
            (
                ">>> from gpuperf.grading import check_close\n>>> check_close('value', value * 4, 10.0)\n",
                True,
            ),
        ],
    ),
    "q2": _ok_test(
        "q2",
        [
            (
                ">>> from gpuperf.grading import call, check_close\n>>> check_close('scale(2)', call('scale', scale, 2.0), 6.0)\n",
                False,
            ),
            (
                f">>> from gpuperf.grading import call, check_close\n>>> check_close('scale', call('scale', scale, {HIDDEN_INPUT}), {float(HIDDEN_INPUT) * 3})\n",
                True,
            ),
        ],
    ),
    # an answer's size is bounded before anything is converted
    "q3": _ok_test(
        "q3",
        [
            (
                ">>> import numpy as np\n>>> from gpuperf.grading import call, check_tensor\n>>> check_tensor('make(3)', call('make', make, 3), np.full(3, 7.0))\n",
                False,
            ),
            (
                ">>> import numpy as np\n>>> from gpuperf.grading import call, check_tensor\n>>> check_tensor('make(5)', call('make', make, 5), np.full(5, 7.0))\n",
                True,
            ),
        ],
    ),
}
#: The handed-out notebook: answer cells with ``...`` and the check cells after them.
HANDOUT = [
    "import numpy as np\n",
    "value = ...\n",
    'grader.check("q1")',
    "def scale(x):\n    ...\n",
    'grader.check("q2")',
    "def make(n):\n    ...\n",
    'grader.check("q3")',
]
SOLUTIONS = {
    "q1": "value = 2.5\n",
    "q2": "def scale(x):\n    return 3 * x\n",
    "q3": "def make(n):\n    return np.full(n, 7.0)\n",
}
FULL = [2, 2, 2]


def notebook_cells(answers: dict[str, str] | None = None, after: list[str] = ()) -> list[str]:
    """The handout with ``answers`` (question → cell; default: the solutions), then ``after``."""
    cells = list(HANDOUT)
    for question, source in (SOLUTIONS | (answers or {})).items():
        cells[HANDOUT.index(f'grader.check("{question}")') - 1] = source
    return cells + list(after)


# ------------------------------------------------------------------------------ the attacks

# strings: a lone surrogate, terminal control sequences that redraw a classmate's row as the
# attacker's full marks, the grader's own words and separator, an exception class whose name
# holds them, and the same printed to the output
STRINGS = [
    'raise ValueError("caf\\udce9")\n',
    'raise ValueError("\\x1b[1A\\x1b[2K\\rhonest,honest.ipynb,GRADED,,0,0,0,0,6\\n\\x1b[2KScore: 6 / 6\\x1b]0;owned\\x07")\n',
    'raise RuntimeError("the notebook\'s process ended (exit code -9) during cell 9 | grading stopped at the time limit")\n',
    'raise type("Forged | grading stopped at the time limit\\x1b[2K", (Exception,), {})("x")\n',
    # the first line prints (its escapes reach output.log), the second cannot be encoded
    'print("\\x1b[2J\\x1b[H\\u202eScore: 6 / 6")\nprint("caf\\udce9")\n',
]

# report forging: remember every input, then show them all in the next failure's message, and
# hand them to the canary too. A public test must never run after a hidden one has been seen.
LEAK = [
    "_seen = []\n\n\ndef scale(x):\n    _seen.append(x)\n    raise ValueError(f'inputs seen so far: {_seen}')\n",
    "import gc\n\n"
    "_runner = next(o for o in gc.get_objects() if type(o).__name__ == 'Runner')\n\n\n"
    "def _op_canary(self, request):\n    raise RuntimeError(f'inputs seen: {_seen}')\n\n\n"
    "type(_runner).op_canary = _op_canary\n",
]

# memory amplification: 53 bytes on the wire that a check would expand to 40 million numbers
RANGE_ANSWER = "def make(n):\n    return range(40_000_000)\n"

# memory: three children that each hold 400 MB (one sandbox, 1.2 GB: the box is 640 MiB)
MEMORY_HOG = """
import os, time
for _ in range(3):
    if os.fork() == 0:
        try:
            _block = bytearray(400 * 2**20)
            for _i in range(0, len(_block), 4096):
                _block[_i] = 1
            time.sleep(60)
        finally:
            os._exit(0)
time.sleep(2)
print("forked three children of 400 MB")
"""

# disk: fill home and /tmp until the file system refuses (tmpfs, charged to the box's memory)
DISK_FILL = """
import json, os
_sizes = {}
for _folder in (os.path.expanduser("~"), "/tmp"):
    _written = 0
    try:
        with open(os.path.join(_folder, "fill"), "wb") as _f:
            while _written < 4 * 2**30:
                _f.write(b"x" * 2**20)
                _written += 2**20
    except OSError as _error:
        pass
    _sizes[_folder] = _written // 2**20
print("filled (MiB):", json.dumps(_sizes))
"""

# processes: start sleeping children until refused (at most 2000: a bound of its own)
FORK_BOMB = """
import os, time
_count = 0
try:
    while _count < 2000:
        _pid = os.fork()
        if _pid == 0:
            time.sleep(30)
            os._exit(0)
        _count += 1
except OSError as _error:
    print("refused after", _count, "processes:", type(_error).__name__)
"""

# CPU: 40 spinning processes in the background, each for at most 20 s, and a canary that spins
# until it is stopped: a time-out (in the box's own CPU time), not tampering
CPU_HOG = """
import os, time
for _ in range(40):
    try:
        _pid = os.fork()
    except OSError:
        break
    if _pid == 0:
        _end = time.monotonic() + 20
        while time.monotonic() < _end:
            pass
        os._exit(0)
print("40 spinners started")
"""
SPINNING_CANARY = """
import gc

_runner = next(o for o in gc.get_objects() if type(o).__name__ == "Runner")


def _op_canary(self, request):
    while True:
        pass


type(_runner).op_canary = _op_canary
"""

#: Submissions graded in the main hostile run, by their row's stem: cells and expected scores
#: (``None``: any score, the row is checked otherwise). Names that need a special entry (a
#: folder, a file name that is not UTF-8) are made by the test.
CLASS = {
    "honest": {"cells": notebook_cells(), "scores": FULL},
    "partial": {
        "cells": notebook_cells({"q2": "def scale(x):\n    return 2 * x\n"}),
        "scores": [2, 0, 2],
    },
    "strings": {"cells": notebook_cells(after=STRINGS), "scores": FULL},
    "leak": {"cells": notebook_cells(after=LEAK), "scores": [2, 0, 2], "status": "UNGRADED"},
    "amplify": {
        "cells": notebook_cells({"q3": RANGE_ANSWER}),
        "scores": [2, 2, 0],
        "metadata_mb": 20,
    },
    "a_cpu_hog": {
        "cells": notebook_cells(after=[CPU_HOG, SPINNING_CANARY]),
        "scores": None,
        "box": True,
    },
    "memory_hog": {"cells": notebook_cells(after=[MEMORY_HOG]), "scores": FULL, "box": True},
    "fork_bomb": {"cells": notebook_cells(after=[FORK_BOMB]), "scores": FULL, "box": True},
    "disk_fill": {"cells": notebook_cells(after=[DISK_FILL]), "scores": FULL, "bwrap": True},
}
#: Honest notebooks under names that broke the class's CSV: each must score full marks.
NAMED = {
    "grades.csv.ipynb": "a results folder named like the class's CSV",
    b"caf\xe9.ipynb": "a file name that is not UTF-8 (Latin-1)",
    "archive": "a folder holding a Latin-1 named notebook and a tree 1200 levels deep",
}

# ------------------------------------------------------------------------------ the fallback run

# the link trap (CVE-2023-6597): a folder the cleanup cannot empty, holding a link to the
# instructor's file; a cleanup that chmods what it cannot remove changes the file's mode
LINK_TRAP = """
import os
_trap = os.path.join(os.path.expanduser("~"), "trap")
os.makedirs(_trap + "/inner")
os.symlink("{instructor_file}", _trap + "/link")
os.symlink("{instructor_file}", _trap + "/inner/link")
os.chmod(_trap + "/inner", 0o500)
os.chmod(_trap, 0o500)
print("trap set")
"""

# fill the disk that holds the scratch folders and the results, then kill its own grading
# process (the fallback sandbox can: same user): its scratch must still be removed
FILL_AND_KILL = """
import os, signal, time
_written = 0
try:
    with open(os.path.join(os.path.expanduser("~"), "fill"), "wb") as _f:
        while _written < 2**30:
            _f.write(b"x" * 2**20)
            _written += 2**20
except OSError:
    pass
print("filled", _written // 2**20, "MiB", flush=True)
time.sleep(3)
os.kill(os.getppid(), signal.SIGKILL)
"""
