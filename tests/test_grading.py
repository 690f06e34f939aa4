"""Unit tests for gpuperf.grading: the checks the labs run, and the messages students read."""

from __future__ import annotations

import math
import time

import numpy as np
import pytest

from gpuperf import grading
from gpuperf.grading import (
    CellTimeLimit,
    CheckError,
    answered,
    call,
    check_choice,
    check_close,
    check_mapping,
    check_tensor,
    check_true,
    time_limit,
)


def test_check_error_is_an_assertion_error():
    # otter reports an AssertionError as a failed test case, not as a crash of the grader
    assert issubclass(CheckError, AssertionError)


def test_answered_rejects_the_placeholder_and_none():
    with pytest.raises(CheckError, match=r"`x` is still `\.\.\.`"):
        answered("x", ...)
    with pytest.raises(CheckError, match="forget to `return`"):
        answered("x", None)
    assert answered("x", 0) == 0


def test_check_close_passes_within_tolerance_and_returns_nothing():
    assert check_close("t", 1.0005, 1.0) is None
    check_close("t", 0.0, 0.0)
    check_close("b", math.inf, math.inf)


def test_check_close_names_the_quantity_the_ratio_and_the_hint():
    with pytest.raises(CheckError) as info:
        check_close("add_intensity", 0.125, 1 / 12, unit="FLOP/B", hints={1.5: "count z"})
    message = str(info.value)
    assert "`add_intensity` = 0.125 FLOP/B" in message
    assert "expected 0.08333 FLOP/B" in message
    assert "1.5× the reference" in message
    assert message.endswith("count z.")


@pytest.mark.parametrize("bad", ["12", True, [1, 2], float("nan"), ...])
def test_check_close_rejects_non_numbers(bad):
    with pytest.raises(CheckError):
        check_close("x", bad, 12.0)


def test_check_close_infinite_reference():
    with pytest.raises(CheckError, match="infinity"):
        check_close("b", 1e9, math.inf)


def test_check_choice_normalizes_case_and_lists_choices():
    check_choice("bound", " Memory ", "memory", ["memory", "compute"])
    with pytest.raises(CheckError, match="not one of"):
        check_choice("bound", "fast", "memory", ["memory", "compute"])
    with pytest.raises(CheckError, match="is not right"):
        check_choice("bound", "compute", "memory", ["memory", "compute"])


def test_check_mapping_reports_the_first_wrong_key():
    expected = {("relu", "T4"): "memory", "a": 2.0}
    check_mapping("v", {("relu", "T4"): "memory", "a": 2.0001}, expected)
    with pytest.raises(CheckError, match="is empty"):
        check_mapping("v", {}, expected)
    with pytest.raises(CheckError, match="no entry for"):
        check_mapping("v", {"a": 2.0}, expected)
    with pytest.raises(CheckError, match=r"v\[\('relu', 'T4'\)\]"):
        check_mapping("v", {("relu", "T4"): "compute", "a": 2.0}, expected)
    with pytest.raises(CheckError, match="should be a dict"):
        check_mapping("v", [1], expected)


def test_check_true():
    check_true(1, "never shown")
    with pytest.raises(CheckError, match="shown"):
        check_true(0, "shown")


def test_call_turns_errors_into_readable_failures():
    assert call("f", lambda x: x + 1, 1) == 2
    with pytest.raises(CheckError, match=r"`f` raised ZeroDivisionError"):
        call("f", lambda: 1 / 0)
    with pytest.raises(CheckError, match="not written yet"):
        call("f", _not_implemented)
    with pytest.raises(CheckError, match="should be a function"):
        call("f", 3)
    with pytest.raises(CheckError, match=r"still returns `\.\.\.`"):
        call("f", lambda: ...)


def _not_implemented():
    raise NotImplementedError


def test_call_stops_an_endless_loop():
    def forever():
        while True:
            pass

    start = time.perf_counter()
    with pytest.raises(CheckError, match=r"more than 0\.2 s"):
        call("forever", forever, seconds=0.2)
    assert time.perf_counter() - start < 5


def test_time_limit_restores_an_enclosing_timer():
    import signal

    with time_limit(30, "outer"):
        with time_limit(5, "inner"):
            pass
        remaining, _ = signal.getitimer(signal.ITIMER_REAL)
        assert 5 < remaining <= 30  # the cell's limit keeps running after a check's limit
    assert signal.getitimer(signal.ITIMER_REAL)[0] == 0


def test_check_tensor_points_at_the_mask_in_1d():
    want = np.arange(1000, dtype=float) + 1
    got = want.copy()
    got[768:] = 0  # the last, partial block of 256 never written
    with pytest.raises(CheckError) as info:
        check_tensor("y", got, want, block=256)
    message = str(info.value)
    assert "232 of 1000 values" in message
    assert "everything before index 768 is right" in message
    assert "mask" in message


def test_check_tensor_points_at_the_mask_in_2d():
    want = np.ones((64, 80))
    got = want.copy()
    got[:, 64:] = 0
    with pytest.raises(CheckError, match=r"wrote nothing past column 64.*mask"):
        check_tensor("c", got, want, block=(32, 32))


def test_check_tensor_shape_nan_and_success():
    check_tensor("y", [1.0, 2.0], np.array([1.0, 2.0]))
    with pytest.raises(CheckError, match="shape"):
        check_tensor("y", np.zeros(3), np.zeros(4))
    with pytest.raises(CheckError, match="NaN"):
        check_tensor("y", [np.nan, 1.0], [1.0, 1.0])
    with pytest.raises(CheckError, match=r"still `\.\.\.`"):
        check_tensor("y", ..., [1.0])


def test_check_tensor_accepts_torch_tensors():
    torch = pytest.importorskip("torch")
    check_tensor("y", torch.ones(3, requires_grad=True), torch.ones(3))


def test_cell_time_limit_plugin_inserts_a_first_cell(monkeypatch):
    nbformat = pytest.importorskip("nbformat")
    monkeypatch.setenv("GPUPERF_CELL_TIME_LIMIT_S", "12.5")
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x = 1")])
    nb = CellTimeLimit("sub.ipynb", {}, {}).before_execution(nb)
    assert "setitimer(_gp_signal.ITIMER_REAL, 12.5)" in nb.cells[0].source
    assert nb.cells[1].source == "x = 1"
    assert CellTimeLimit().before_execution("print(1)") == "print(1)"


def test_cell_time_limit_source_arms_and_disarms(monkeypatch):
    monkeypatch.setenv("GPUPERF_CELL_TIME_LIMIT_S", "nonsense")
    assert CellTimeLimit.limit_s() == grading.DEFAULT_CELL_TIME_LIMIT_S
    namespace = {}

    class Events:
        def __init__(self):
            self.hooks = {}

        def register(self, name, fn):
            self.hooks[name] = fn

    class Shell:
        events = Events()

    namespace["get_ipython"] = lambda: Shell
    exec(CellTimeLimit.cell_source(0.2), namespace)
    Shell.events.hooks["pre_run_cell"]()
    with pytest.raises(TimeoutError, match=r"more than 0\.2 s"):
        while True:
            pass
    Shell.events.hooks["post_run_cell"]()


def test_fetch_tests_downloads_each_missing_file(tmp_path, monkeypatch):
    fetched = []

    class Response:
        def __init__(self, url):
            self.url = url

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

        def read(self):
            return f"# {self.url}".encode()

    def urlopen(url, timeout):
        fetched.append(url)
        return Response(url)

    monkeypatch.setattr(grading.urllib.request, "urlopen", urlopen)
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "q2.py").write_text("kept")
    grading.fetch_tests("lab1_rooflines", ["q1", "q2"], tmp_path / "tests")
    assert fetched == [
        "https://github.com/gpuperf/gpuperf/raw/main/labs/lab1_rooflines/student/tests/q1.py"
    ]
    assert (tmp_path / "tests" / "q2.py").read_text() == "kept"


def test_lab_grader_outside_colab(tmp_path, monkeypatch):
    pytest.importorskip("otter")
    monkeypatch.chdir(tmp_path)
    grader = grading.lab_grader("lab1_rooflines", ["q1"])
    assert type(grader).__name__ == "Notebook"


# --- check_attention --------------------------------------------------------------------------


def _attention_case(seq: int = 40, d: int = 16):
    import torch

    from gpuperf.kernels.flash_attention import attention_ref

    gen = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(1, 2, seq, d, generator=gen) for _ in range(3))
    s = q @ k.transpose(-1, -2) / d**0.5
    return attention_ref(q, k, v), torch.logsumexp(s, dim=-1), s.amax(dim=-1)


def test_check_attention_passes_the_reference():
    from gpuperf.grading import check_attention

    o, lse, m = _attention_case()
    assert check_attention("o", o, o, block_m=16, lse=lse, lse_expected=lse, max_scores=m) is None


def test_check_attention_names_rows_blocks_and_the_slip():
    from gpuperf.grading import check_attention

    o, _, _ = _attention_case()
    with pytest.raises(CheckError, match="has shape"):
        check_attention("o", o[..., :8], o)
    with pytest.raises(CheckError, match="all zeros"):
        check_attention("o", o * 0, o)
    bad = o.clone()
    bad[0, 1, 35:] += 1.0  # only the last, partial block of 16 rows
    with pytest.raises(CheckError) as info:
        check_attention("o", bad, o, block_m=16)
    message = str(info.value)
    assert "query rows 35..39 (row blocks 2 of 16)" in message
    assert "last, partial block" in message
    scaled = o.clone()
    scaled[0, 0, 3] *= 1.7  # a row times a constant: not normalized
    with pytest.raises(CheckError, match="times a constant"):
        check_attention("o", scaled, o, block_m=16)
    nan = o.clone()
    nan[0, 0, 5, 2] = float("nan")
    with pytest.raises(CheckError, match="NaN or infinite values in query rows 5"):
        check_attention("o", nan, o, block_m=16)


def test_check_attention_diagnoses_the_logsumexp():
    import torch

    from gpuperf.grading import check_attention

    o, lse, m = _attention_case()
    with pytest.raises(CheckError, match="L is missing"):
        check_attention("o", o, o, lse_expected=lse)
    with pytest.raises(CheckError, match="never written"):
        check_attention("o", o, o, lse=torch.full_like(lse, float("nan")), lse_expected=lse)
    with pytest.raises(CheckError, match="running max m; add log"):
        check_attention("o", o, o, lse=m, lse_expected=lse, max_scores=m)
    with pytest.raises(CheckError, match="L is log ℓ"):
        check_attention("o", o, o, lse=lse - m, lse_expected=lse, max_scores=m)
    with pytest.raises(CheckError, match="has shape"):
        check_attention("o", o, o, lse=lse[..., :3], lse_expected=lse)


def test_check_attention_spots_a_constant_factor():
    from gpuperf.grading import check_attention

    o, _, _ = _attention_case()
    with pytest.raises(CheckError, match=r"everything is 4× the reference.*1/√d = 0\.25"):
        check_attention("dk", o * 4, o, rows="key")
