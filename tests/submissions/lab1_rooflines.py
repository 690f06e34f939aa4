# ruff: noqa: E501  (the strings are notebook cells, kept as a student would write them)
"""Regression submissions for lab 1: honest ones and every attack on the grader seen so far.

Each recipe says how to build a notebook from the lab's own files (``base``: the solutions in
the student layout, ``"solution"``, or the handed-out notebook, ``"student"``), which answer
cells to replace (``answers``: question → new source of the cell before its ``grader.check``),
which cells to insert right after a question's check cell (``after``: question → list of
sources; ``"start"`` inserts after the imports cell) and what grading must give (``expect``:
status, per-question scores or total, and text that must appear in the tampering report or
notes). ``tests/test_classroom.py`` builds the notebooks and grades them all in one class.
"""

# a cell that never ends; it sleeps, so that waiting for it to be stopped costs no CPU
LOOP = "import time\nwhile True:\n    time.sleep(1)\n"

# every checking function the tests rely on, replaced by one that always agrees
PATCH_EVERYTHING = """
import math, numpy as np, torch, gpuperf.grading as g
import otter.test_files.ok_test as ok_test
for _name in ["check_close", "check_choice", "check_mapping", "check_tensor", "check_true",
              "check_attention", "answered", "answer", "call", "run_hidden", "integrity_check"]:
    setattr(g, _name, lambda *a, **k: None)
math.isclose = lambda *a, **k: True
np.isclose = lambda *a, **k: True
np.allclose = lambda *a, **k: True
torch.testing.assert_close = lambda *a, **k: None
ok_test.run_doctest = lambda *a, **k: (True, "")
"""

# the tests on disk, other students' results, the course package: rewrite whatever is reachable
REWRITE_FILES = """
import glob, json, os
fake = "OK_FORMAT = True\\ntest = {'name': 'q1', 'points': 2, 'suites': [{'cases': [], 'scored': True, 'setup': '', 'teardown': '', 'type': 'doctest'}]}\\n"
reached = []
for pattern in ["tests/*.py", "../tests/*.py", "{labs}/*/autograder/tests/*.py", "{labs}/*/autograder/hidden_tests.py"]:
    for path in glob.glob(pattern):
        try:
            open(path, "w").write(fake); reached.append(path)
        except OSError:
            pass
try:
    import gpuperf.grading as g
    open(g.__file__, "a").write("\\ndef check_close(*a, **k):\\n    return None\\n"); reached.append(g.__file__)
except OSError:
    pass
full = {"tests": [{"name": f"q{i}", "score": 2, "max_score": 2} for i in range(1, 7)],
        "questions": {f"q{i}": {"score": 2.0, "max_score": 2.0, "cases": []} for i in range(1, 7)},
        "status": "GRADED", "reason": "", "complete": True, "total": 12, "max_total": 12}
for proc in glob.glob("/proc/[0-9]*/cwd"):
    for path in glob.glob(proc + "/**/results.json", recursive=True) + [proc + "/results.json"]:
        if os.path.realpath(path).startswith(os.getcwd()):
            continue  # this submission's own scratch folder
        try:
            open(path, "w").write(json.dumps(full)); reached.append(path)
        except OSError:
            pass
print("rewrote", reached)
"""

# answers whose repr/str/float read the hidden tests, and compare equal to anything
LEAK = """
import glob
class Leak(float):
    def _read(self):
        text = ""
        patterns = ["{labs}/*/autograder/hidden_tests.py", "{labs}/*/autograder/tests/*.py",
                    "../**/hidden_tests.py", "/tmp/**/hidden_tests.py", "/proc/1/cwd/**/*.py"]
        for path in [p for pattern in patterns for p in glob.glob(pattern, recursive=True)]:
            try:
                text += open(path).read()
            except OSError:
                pass
        return text or "nothing to leak"
    def __repr__(self):
        return self._read()
    __str__ = __repr__
    def __eq__(self, other):
        return True
    __hash__ = float.__hash__
add_intensity = dot_intensity = matmul_intensity = Leak(1.0)
t_math_s = t_comms_s = lower_s = Leak(1.0)
bound = type("Bound", (str,), {"__eq__": lambda s, o: True, "__hash__": str.__hash__, "__repr__": Leak._read})("memory")
"""

REDEFINE_REFERENCES = """
import types
np = types.SimpleNamespace(isclose=lambda *a, **k: True, allclose=lambda *a, **k: True, logspace=lambda *a, **k: [0.0])
OPS = {}
CHIPS = []
CHIP_PRECISION = {}
DEVICE = "meta"
verdicts = {}
critical_bf16 = {}
def attention_ref(*a, **k):
    return None
"""

RECIPES = {
    # ---------------------------------------------------------------- honest submissions
    "master": {"base": "solution", "expect": {"status": "GRADED", "total": 12}},
    "untouched": {"base": "student", "expect": {"status": "GRADED", "total": 0}},
    "half_right": {
        "base": "solution",
        "answers": {
            # forgot the output bytes
            "q1": "N = 2**20\nadd_intensity = N / (2 * 4 * N)\ndot_intensity = (2 * 4096 - 1) / "
            "(2 * 4096 * 2)\nmatmul_intensity = 2 * 4096**3 / (2 * 2 * 4096**2)\n",
            # a cell that never ends (stopped from outside; the rest still graded)
            "q3": LOOP,
            # everything memory-bound
            "q5": "verdicts = {(o, c): 'memory' for o in OPS for c in CHIP_PRECISION}\n",
        },
        "expect": {
            "status": "GRADED",
            "scores": {"q1": 0, "q2": 2, "q3": 0, "q4": 2, "q5": 0, "q6": 2},
            "notes": ["was stopped"],
        },
    },
    # ---------------------------------------------------------------- attacks
    # infinity is within any relative tolerance of anything (inf <= inf): never accepted for a
    # finite reference, whatever its type
    "infinity_everywhere": {
        "base": "student",
        "answers": {
            "q1": "import torch\nadd_intensity = float('inf')\ndot_intensity = np.float64('inf')\n"
            "matmul_intensity = np.array([np.inf])\n",
            "q2": "t_math_s = t_comms_s = lower_s = torch.tensor(float('inf'))\nbound = 'memory'\n",
            "q3": "def critical_batch(chip_name, weight_bytes):\n    return float('inf')\n\n\n"
            "critical_bf16 = {name: float('inf') for name in CHIPS}\n"
            "critical_int8_h100 = float('inf')\n",
            "q4": "def roof(intensity, chip_name, precision):\n"
            "    return np.full(np.shape(intensity), np.inf)\n",
            "q6": "tensor_clock_hz = bytes_in_flight_per_sm = warps_needed = float('inf')\n"
            "min_loads_in_flight = float('inf')\n",
        },
        "expect": {"status": "GRADED", "total": 0},
    },
    "patch_checks": {
        "base": "student",
        "after": {"start": [PATCH_EVERYTHING]},
        "expect": {
            "status": "UNGRADED",
            "reason": "tampering detected",
            "total": 0,
            "tampering": [
                "math.isclose",
                "np.isclose",
                "np.allclose",
                "check_close",
                "torch.testing.assert_close",
                "otter run_doctest",
                "gpuperf.grading.run_hidden",
            ],
        },
    },
    "patch_inside_a_function": {
        "base": "student",
        "answers": {
            "q4": "import math\ndef roof(intensity, chip_name, precision):\n"
            "    math.isclose = lambda *a, **k: True\n    return 0.0\n",
        },
        "expect": {"status": "UNGRADED", "reason": "tampering detected", "total": 0},
    },
    "rewrite_files": {
        "base": "student",
        "after": {"start": [REWRITE_FILES]},
        "expect": {"status": "GRADED", "total": 0},
    },
    "redefine_references": {
        "base": "student",
        "after": {"q5": [REDEFINE_REFERENCES]},
        "expect": {"status": "GRADED", "total": 0},
    },
    "leak_hidden_tests": {
        "base": "student",
        "answers": {"q1": LEAK},
        "expect": {"status": "GRADED", "total": 0},
    },
    # the process exits, then is killed, then runs out of memory; the answers before survive
    "crashes": {
        "base": "solution",
        "after": {
            "q1": ["import os\nos._exit(0)\n"],
            "q3": ["import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n"],
        },
        "answers": {
            # a memory hog: MemoryError under the sandbox's limit; q2's answers never defined
            # (1 GiB blocks never written: the limit is reached at once, even on a busy machine)
            "q2": "import numpy as np\nhog = [np.empty(2**27) for _ in range(64)]\n",
        },
        "expect": {
            "status": "GRADED",
            "scores": {"q1": 2, "q2": 0, "q3": 2, "q4": 2, "q5": 2, "q6": 2},
            "notes": ["process ended", "MemoryError"],
        },
    },
    # cells that never end, each stopped from outside (one per submission: they run in parallel)
    "hang_in_c": {
        "base": "solution",
        "after": {"start": ["import signal\nsignal.signal(signal.SIGALRM, signal.SIG_IGN)\n"]},
        # a long call into C that no signal handler can end: every signal it may block is
        # blocked (SIGALRM is ignored besides), then it sleeps in C. Only killing the sandbox
        # stops it; it spends no CPU while the grader waits (sum(range(10**13)), the CPU-bound
        # way to hang in C, burned a core for the whole cell limit and ends the same way)
        "answers": {
            "q4": "import signal, time\n"
            "signal.pthread_sigmask(signal.SIG_BLOCK, signal.valid_signals())\n"
            "time.sleep(10**6)\n"
        },
        "expect": {
            "status": "GRADED",
            "scores": {"q1": 2, "q2": 2, "q3": 2, "q4": 0, "q5": 2, "q6": 2},
            "notes": ["was stopped"],
        },
    },
    "hang_retry": {
        "base": "solution",
        # a retry loop that swallows the interruption
        "answers": {
            "q5": "import time\nwhile True:\n    try:\n        time.sleep(0.01)\n"
            "    except BaseException:\n        pass\n",
        },
        "expect": {
            "status": "GRADED",
            "scores": {"q1": 2, "q2": 2, "q3": 2, "q4": 2, "q5": 0, "q6": 2},
            "notes": ["was stopped"],
        },
    },
}
