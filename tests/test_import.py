"""`import gpuperf` needs numpy alone and is quick."""

from __future__ import annotations

import json
import subprocess
import sys

HEAVY = ["torch", "triton", "matplotlib", "ipywidgets", "IPython", "scipy"]

# CPU time of this process, not wall time: another process busy on the machine does not count.
SCRIPT = f"""
import sys, time, json
for name in {HEAVY!r}:
    sys.modules[name] = None  # any import of these now raises ImportError
start = time.process_time()
import numpy
numpy_s = time.process_time() - start
before = set(sys.modules)
import gpuperf
total_s = time.process_time() - start
added = sorted(set(sys.modules) - before)
gpuperf.roofline.critical_batch_size("h100")
gpuperf.cost.matmul(8, 8, 8)
print(json.dumps({{"total_s": total_s, "numpy_s": numpy_s, "added": added,
                   "loaded": sorted(m for m in {HEAVY!r} if sys.modules.get(m) is not None)}}))
"""


def test_import_gpuperf_works_with_numpy_alone_and_fast():
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, check=True
    ).stdout
    result = json.loads(out)
    assert result["loaded"] == []
    # Beyond numpy, gpuperf loads only its own calculators and the standard library.
    third_party = [
        m
        for m in result["added"]
        if m.split(".")[0] not in sys.stdlib_module_names and m.split(".")[0] != "gpuperf"
    ]
    assert third_party == []
    # Measured ≈ 0.05 s of CPU on the 2-core CI machine (numpy ≈ 0.04 s); 0.2 s is the budget.
    assert result["total_s"] - result["numpy_s"] < 0.2
    assert result["total_s"] < 0.5


def test_heavy_modules_fail_with_an_install_hint():
    script = "import sys; sys.modules['matplotlib'] = None\n" + (
        "from gpuperf.runtime import require\n"
        "try:\n    require('matplotlib', 'pip install matplotlib')\n"
        "except ImportError as e:\n    print(e)\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True).stdout
    assert "needs 'matplotlib': pip install matplotlib" in out


def test_require_rejects_a_missing_module_name():
    import pytest

    from gpuperf.runtime import require

    for bad in (None, "", 3):
        with pytest.raises(TypeError, match="module="):
            require(bad)


def test_device_is_the_kernels_device():
    """``DEVICE`` is where kernels accept their inputs: the interpreter's CPU without a GPU."""
    import pytest

    pytest.importorskip("torch")
    from gpuperf import runtime
    from gpuperf.kernels._common import expected_device

    assert runtime.DEVICE == runtime.default_device() == expected_device()
    if runtime.has_cuda_gpu() and not runtime.interpreting():
        assert runtime.DEVICE == "cuda"
    else:
        assert runtime.DEVICE == "cpu"
    with pytest.raises(AttributeError):
        runtime.NOT_A_NAME  # noqa: B018
