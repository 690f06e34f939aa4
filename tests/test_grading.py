"""Unit tests for gpuperf.grading: the checks the labs run, and the messages students read."""

from __future__ import annotations

import math
import sys
import time

import numpy as np
import pytest

import gpuperf
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
from gpuperf.grading import grader as lab_grading


def test_check_error_is_an_assertion_error():
    # otter reports an AssertionError as a failed test case, not as a crash of the grader
    assert issubclass(CheckError, AssertionError)


def test_answered_rejects_the_placeholder_and_none():
    with pytest.raises(CheckError, match=r"`x` is not answered yet"):
        answered("x", ...)
    with pytest.raises(CheckError, match="not answered yet"):
        answered("d", {"fp32": 0.25, "fp16": ...})
    with pytest.raises(CheckError, match="not answered yet"):
        answered("t", (1, ...))
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
    assert "expected about 0.083 FLOP/B" in message
    assert "0.0833" not in message  # the reference never to more than 2 significant figures
    assert "about 1.5× the reference" in message
    assert message.endswith("count z.")


@pytest.mark.parametrize("value", [1.0, 1.23456, 7.5e-7, 3.3333e9])
def test_check_close_never_prints_the_reference_beyond_two_figures(value):
    expected = 1.2345678 * value
    for answer in (value, 2 * expected, expected * 1.01, -expected):
        with pytest.raises(CheckError) as info:
            check_close("x", answer, expected)
        message = str(info.value)
        assert f"{expected:.3g}" not in message.replace(f"{answer:.4g}", "<answer>")
    with pytest.raises(CheckError, match="a little too large"):
        check_close("x", 1.01 * expected, expected)
    with pytest.raises(CheckError, match="opposite sign"):
        check_close("x", -expected, expected)


def test_messages_do_not_run_the_students_repr():
    class Sneaky:
        def __repr__(self):
            raise AssertionError("repr must not be called")

        __str__ = __repr__

        def __float__(self):
            return 1.0

    for check in (
        lambda: check_close("x", Sneaky(), 2.0),
        lambda: check_choice("x", Sneaky(), "a", ["a", "b"]),
        lambda: check_mapping("x", {"a": Sneaky()}, {"a": "b"}),
        lambda: call("f", lambda: (_ for _ in ()).throw(ValueError(Sneaky()))),
    ):
        with pytest.raises(CheckError) as info:
            check()
        assert "Sneaky object" in str(info.value) or "ValueError" in str(info.value)
    assert grading.safe_repr({"a": [1, 2.5, "x"]}) == "{'a': [1, 2.5, 'x']}"


@pytest.mark.parametrize("bad", ["12", True, [1, 2], float("nan"), ...])
def test_check_close_rejects_non_numbers(bad):
    with pytest.raises(CheckError):
        check_close("x", bad, 12.0)


def test_check_close_infinite_reference():
    with pytest.raises(CheckError, match="infinity"):
        check_close("b", 1e9, math.inf)


def test_check_choice_normalizes_case_and_lists_choices():
    check_choice("bound", " Memory ", "memory", ["memory", "compute"])
    # case-insensitive on every side: a correct chip name in any case passes
    check_choice("chip", "H100-SXM", "H100-SXM", ["T4", "H100-SXM"])
    check_choice("chip", "h100-sxm", "H100-SXM", ["T4", "H100-SXM"])
    with pytest.raises(CheckError, match="is not right"):
        check_choice("chip", "t4", "H100-SXM", ["T4", "H100-SXM"])
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


def test_call_turns_exit_into_a_failed_check():
    import sys

    with pytest.raises(CheckError, match=r"`f` called exit\(\)"):
        call("f", lambda: sys.exit(3))


@pytest.mark.parametrize("seconds", [0, -1, float("inf"), float("nan"), True, "5"])
def test_limits_must_be_positive_and_finite(seconds):
    with pytest.raises(ValueError, match="seconds"), time_limit(seconds):
        pass
    with pytest.raises(ValueError, match="seconds"):
        call("f", lambda: 1, seconds=seconds)


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


@pytest.mark.parametrize("block", [0, -4, (2,), (32, 0), "32", 2.5])
def test_check_tensor_rejects_nonsense_blocks(block):
    with pytest.raises(ValueError, match="block"):
        check_tensor("c", np.ones((4, 4)), np.zeros((4, 4)), block=block)


def test_check_tensor_handles_scalars_and_empty_arrays():
    check_tensor("s", 1.0, 1.0)
    check_tensor("e", np.zeros((0, 3)), np.zeros((0, 3)), block=(2, 2))
    with pytest.raises(CheckError, match="NaN"):
        check_tensor("s", float("nan"), 1.0)
    with pytest.raises(CheckError, match="1 of 1 values"):
        check_tensor("s", 2.0, 1.0, block=4)


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

    monkeypatch.setattr(lab_grading.urllib.request, "urlopen", urlopen)
    monkeypatch.setattr(gpuperf, "__version__", "2026.12.1.dev0")  # the tip of main
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "q2.py").write_text("kept")
    lab_grading._fetch_tests("lab1_rooflines", ["q1", "q2"], tmp_path / "tests")
    assert fetched == [
        "https://github.com/gpuperf/gpuperf/raw/main/labs/lab1_rooflines/student/tests/q1.py"
    ]
    assert (tmp_path / "tests" / "q2.py").read_text() == "kept"
    # a release's grader fetches the tests of its own tag, whatever main holds now
    monkeypatch.setattr(gpuperf, "__version__", "2026.12.0")
    lab_grading._fetch_tests("lab1_rooflines", ["q1"], tmp_path / "release")
    assert fetched[-1] == (
        "https://github.com/gpuperf/gpuperf/raw/v2026.12.0/labs/lab1_rooflines/student/tests/q1.py"
    )


def test_fetch_tests_from_a_local_folder(tmp_path, monkeypatch):
    source = tmp_path / "labs" / "lab9_x" / "student" / "tests"
    source.mkdir(parents=True)
    (source / "q1.py").write_text("OK_FORMAT = True\n")
    monkeypatch.setenv(
        grading.TESTS_URL_ENV, str(tmp_path / "labs" / "{lab}" / "student" / "tests")
    )
    out = lab_grading._fetch_tests("lab9_x", ["q1"], tmp_path / "fetched")
    assert (out / "q1.py").read_text() == "OK_FORMAT = True\n"


def test_colab_installs_otter_without_touching_ipywidgets(monkeypatch):
    ran = []
    monkeypatch.setattr(lab_grading.subprocess, "run", lambda cmd, check: ran.append(cmd))
    commands = grading.install_otter_for_colab(sys.executable)
    assert ran == commands and len(commands) == 2
    with_deps, no_deps = commands
    assert "--no-deps" not in with_deps and "-c" in with_deps
    assert no_deps[-len(grading.COLAB_NO_DEPS_PACKAGES) :] == list(grading.COLAB_NO_DEPS_PACKAGES)
    assert "--no-deps" in no_deps
    assert any(p.startswith("otter-grader==") for p in grading.COLAB_NO_DEPS_PACKAGES)
    # every module otter imports beyond a Colab runtime is provided by a listed package
    assert set(grading.OTTER_IMPORTS) == {
        "otter",
        "fica",
        "frontmatter",
        "ipylab",
        "dill",
        "wrapt",
        "nbconvert",
    }


def test_lab_grader_names_the_really_missing_module(tmp_path, monkeypatch):
    import builtins

    real_import = builtins.__import__

    def fake_import(name, *args, **kwargs):
        if name == "otter":
            raise ModuleNotFoundError("No module named 'frontmatter'", name="frontmatter")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", fake_import)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ModuleNotFoundError, match="'frontmatter' is not installed"):
        grading.lab_grader("lab1_rooflines", ["q1"])


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


def test_check_attention_rejects_nonsense_arguments():
    from gpuperf.grading import check_attention

    o = np.ones((1, 4, 16))
    with pytest.raises(ValueError, match="block_m"):
        check_attention("o", o, o, block_m=0)
    for bad in (np.ones(4), np.ones((0, 16)), np.ones((1, 0, 16))):
        with pytest.raises(ValueError, match="non-empty"):
            check_attention("o", bad, bad)
    with pytest.raises(CheckError, match="has shape"):
        check_attention("o", np.ones(4), o)


def test_check_attention_names_a_known_slip():
    from gpuperf.grading import check_attention

    o, _, _ = _attention_case()
    slip = o * 0.5
    with pytest.raises(CheckError, match="keys past the end are not masked"):
        check_attention("o", slip, o, slips={"keys past the end are not masked": slip})


def test_check_attention_spots_a_constant_factor():
    from gpuperf.grading import check_attention

    o, _, _ = _attention_case()
    with pytest.raises(CheckError, match=r"everything is 4× the reference.*1/√d = 0\.25"):
        check_attention("dk", o * 4, o, rows="key")


# --- guarded kernel inputs, integrity canary, hidden tests -----------------------------------


def test_padded_keeps_stray_writes_in_the_padding():
    torch = pytest.importorskip("torch")
    x = grading.padded(torch.arange(5.0), 4)
    assert x.tolist() == [0, 1, 2, 3, 4] and x.is_contiguous()
    grading.check_padding("x", x)
    buffer = x._gpuperf_padding[0]
    buffer[4 + 5] = 7.0  # one element past the end, as an unmasked store would write
    with pytest.raises(CheckError, match=r"past the end of `x`.*mask on your store"):
        grading.check_padding("x", x)
    with pytest.raises(ValueError, match="pad"):
        grading.padded(torch.ones(3), -1)
    with pytest.raises(ValueError, match="not made by padded"):
        grading.check_padding("y", torch.ones(3))


@pytest.mark.parametrize(
    "target",
    [
        "math.isclose",
        "numpy.isclose",
        "numpy.allclose",
        "torch.testing.assert_close",
        "grading.check_close",
        "grading.check_tensor",
        "grading.check_close.__code__",
        "grading.check_close.__kwdefaults__",
    ],
)
def test_integrity_check_catches_a_patched_comparison(target, monkeypatch):
    import math

    torch = pytest.importorskip("torch")
    grading.integrity_check()  # the originals pass
    if target == "math.isclose":
        monkeypatch.setattr(math, "isclose", lambda *a, **k: True)
    elif target == "numpy.isclose":
        monkeypatch.setattr(np, "isclose", lambda a, b, **k: np.ones(np.shape(a), bool))
    elif target == "numpy.allclose":
        monkeypatch.setattr(np, "allclose", lambda *a, **k: True)
    elif target == "torch.testing.assert_close":
        monkeypatch.setattr(torch.testing, "assert_close", lambda *a, **k: None)
    elif target == "grading.check_close.__code__":
        monkeypatch.setattr(grading.check_close, "__code__", (lambda *a, **k: None).__code__)
    elif target == "grading.check_close.__kwdefaults__":
        defaults = dict(grading.check_close.__kwdefaults__, rtol=1e9)
        monkeypatch.setattr(grading.check_close, "__kwdefaults__", defaults)
    else:
        monkeypatch.setattr(grading, target.split(".")[1], lambda *a, **k: None)
    with pytest.raises(grading.IntegrityError, match="needs a human look"):
        grading.integrity_check()


def test_run_hidden_reports_one_safe_sentence(tmp_path, monkeypatch):
    (tmp_path / "hidden_tests.py").write_text(
        "from gpuperf.grading import check_close\n"
        "SECRET = 'secret hidden test code'\n"
        "def q1(env):\n"
        "    check_close('x', env['x'], 2.0)\n"
        "def q2(env):\n"
        "    assert env['y'] == 3, SECRET\n"
        "def q3(env):\n"
        "    env['f']()\n"
    )
    monkeypatch.chdir(tmp_path)
    grading.run_hidden("q1", {"x": 2.0})
    with pytest.raises(CheckError) as info:
        grading.run_hidden("q1", {"x": 1.0})
    assert str(info.value).startswith("hidden test of q1: `x` = 1")
    assert info.value.__cause__ is None and info.value.__suppress_context__
    with pytest.raises(CheckError, match="a hidden check could not run on your answer: KeyError"):
        grading.run_hidden("q2", {})
    with pytest.raises(CheckError, match="called exit"):
        grading.run_hidden("q3", {"f": lambda: exit(0)})


def test_run_hidden_needs_the_autograder_file(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(grading.IntegrityError, match=r"hidden_tests\.py was not found"):
        grading.run_hidden("q1", {})


def test_answer_takes_a_defined_answered_value_from_the_namespace():
    assert grading.answer({"x": 1.5}, "x") == 1.5
    with pytest.raises(CheckError, match="`x` is not defined"):
        grading.answer({}, "x")
    with pytest.raises(CheckError, match="not answered yet"):
        grading.answer({"x": ...}, "x")


# --- infinity, huge answers, "not answered yet" in the labs' own print lines ----------------


def _infinities():
    """+inf in every form an answer can take: float, numpy scalar, 1-element array, 0-d tensor."""
    forms = [math.inf, np.float64("inf"), np.array([np.inf]), np.array(np.inf)]
    torch = pytest.importorskip("torch")
    return [*forms, torch.tensor(math.inf), -math.inf]


def test_infinity_is_never_close_to_a_finite_reference():
    # |inf - e| <= rtol * inf is inf <= inf: true, so infinity must be refused explicitly
    for value in _infinities():
        with pytest.raises(CheckError, match="infinite"):
            check_close("x", value, 12.0)
        with pytest.raises(CheckError, match="infinite"):
            check_close("x", value, 12.0, atol=1e9)
        with pytest.raises(CheckError, match="infinite"):
            check_mapping("d", {"a": value}, {"a": 12.0})
        with pytest.raises(CheckError, match="infinite"):
            check_mapping("d", {"a": value}, {"a": np.float32(12.0)})


def test_infinity_is_right_only_where_the_reference_is_infinite():
    check_close("b", math.inf, math.inf)
    check_close("b", np.float64("inf"), math.inf)
    check_close("b", -math.inf, -math.inf)
    with pytest.raises(CheckError, match="expected minus infinity"):
        check_close("b", math.inf, -math.inf)
    with pytest.raises(CheckError, match="expected infinity"):
        check_close("b", -math.inf, math.inf)
    with pytest.raises(
        ValueError, match=r"expected=nan must be a real number \(±inf allowed, NaN not\)"
    ):
        check_close("b", 1.0, math.nan)


def test_check_tensor_compares_shapes_before_converting():
    """``torch.zeros(1).expand(2**28)`` is one number in memory: converting it to float64 would
    allocate 2 GiB. The shape is compared first, so the check costs nothing (issue 22)."""
    import tracemalloc

    torch = pytest.importorskip("torch")
    huge = torch.zeros(1).expand(2**28)
    tracemalloc.start()
    try:
        with pytest.raises(CheckError, match=r"has shape \(268435456,\); expected \(3,\)"):
            check_tensor("y", huge, np.zeros(3))
        with pytest.raises(CheckError, match=r"has shape \(268435456,\)"):
            grading.check_attention("o", huge, np.zeros((1, 3, 2)))
        with pytest.raises(CheckError, match=r"has shape \(2, 1000\)"):
            check_tensor("y", np.broadcast_to(np.zeros(1), (2, 1000)), np.zeros(3))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 10 * 2**20, f"the check allocated {peak / 2**20:.0f} MiB"


def test_all_answered_tells_placeholders_from_answers(capsys):
    def stub(x):
        y = ...
        return y

    def bare(x):
        """Docstring."""
        ...

    def answered_function(x):
        return x[..., 0]  # an Ellipsis used as an index is an answer, not a placeholder

    assert grading.all_answered(1, 2.5, "memory", [1, 2], {"a": 1}, answered_function)
    assert capsys.readouterr().out == ""
    for unanswered in (..., None, (1, ...), {"a": ...}, stub, bare):
        assert not grading.all_answered(1, unanswered)
        assert "Not answered yet" in capsys.readouterr().out


# --- imports flow one way: the student-facing checks never import the class grader ---------


def test_grading_never_imports_the_class_grader():
    """``gpuperf.grading`` (what every lab imports) must not import ``gpuperf.classroom``, which
    imports the checks; only the ``python -m gpuperf.grading`` entry point hands over to it."""
    import ast
    import subprocess
    import sys
    from pathlib import Path

    package = Path(grading.__file__).parent
    for path in sorted(package.glob("*.py")):
        if path.name == "__main__.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                names = [("." * node.level) + (node.module or "")]
                names += [f"{names[0]}.{alias.name}" for alias in node.names]
            elif isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            else:
                continue
            assert not any("classroom" in name for name in names), (
                f"{path.name} imports the class grader: {names}"
            )
    probe = (
        "import sys, gpuperf.grading; "
        "print(sorted(m for m in sys.modules if m.startswith('gpuperf.classroom')))"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert done.returncode == 0 and done.stdout.strip() == "[]", done.stdout + done.stderr


# --- the instructor's arguments (issue 36): a clear error naming the argument and its range ----


@pytest.mark.parametrize(
    ("call_it", "error", "message"),
    [
        (lambda: check_close("x", 1.0, 10**400), ValueError, r"expected=1000.*beyond float"),
        (lambda: check_close("x", 1.0, True), TypeError, r"expected=True must be a real"),
        (lambda: check_close("x", 1.0, 1.0, rtol=-1e-3), ValueError, r"rtol=-0.001 .* ≤ 1"),
        (lambda: check_close("x", 1.0, 1.0, rtol=2.0), ValueError, r"rtol=2.0 .* ≤ 1"),
        (lambda: check_close("x", 1.0, 1.0, atol="1"), TypeError, r"atol='1' must be a finite"),
        (lambda: check_close("x", 1.0, 1.0, unit=3), TypeError, r"unit=3 must be a string"),
        (lambda: check_close("x", 1.0, 1.0, hints={0: "h"}), ValueError, r"hints\[0\].*> 0"),
        (lambda: check_close("x", 1.0, 1.0, hints=[2.0]), TypeError, r"hints=\[2.0\] must be"),
        (lambda: check_close(3, 1.0, 1.0), TypeError, r"name=3 must be a string"),
        (lambda: check_close("", 1.0, 1.0), ValueError, r"name='' must be a non-empty"),
        (lambda: check_tensor("x", [1.0], [1.0], atol="1"), TypeError, r"atol='1'"),
        (lambda: check_tensor("x", [1.0], {}), ValueError, r"expected=\{\} must be a numpy"),
        (lambda: check_tensor("x", [1.0], [1.0], block=2.5), ValueError, r"block=2.5"),
        (lambda: check_tensor("x", [1.0], [1.0], block=2**40), ValueError, r"block=.*2\*\*31"),
        (lambda: check_mapping("m", {}, []), TypeError, r"expected=\[\] must be a dict"),
        (lambda: check_mapping("m", {}, {}), ValueError, r"expected=\{\} must hold at least"),
        (lambda: check_mapping("m", {"a": 1}, {"a": math.nan}), ValueError, r"expected\['a'\]"),
        (lambda: check_choice("c", "a", "z", ["a", "b"]), ValueError, r"expected='z' is not one"),
        (lambda: check_choice("c", "a", "a", "ab"), TypeError, r"choices='ab' must be a list"),
        (lambda: check_choice("c", "a", "a", []), ValueError, r"choices=\[\] must list between"),
        (lambda: check_true(np.ones(3) > 0, "m"), TypeError, r"condition=.* single truth"),
        (lambda: check_true(False, ""), ValueError, r"message='' must be a non-empty"),
        (lambda: grading.safe_repr(1, limit=1.5), ValueError, r"limit=1.5 must be an integer"),
        (lambda: grading.safe_repr(1, limit=0), ValueError, r"limit=0 must be an integer ≥ 1"),
        (lambda: time_limit(0), ValueError, r"seconds=0 must be a finite number of seconds > 0"),
        (lambda: time_limit(1e9), ValueError, r"seconds=1000000000.0 .* ≤ 604800"),
        (lambda: time_limit(1, what=None), TypeError, r"what=None must be a string"),
        (lambda: call("f", abs, seconds="5"), ValueError, r"seconds='5' must be"),
        (lambda: grading.answer(["x"], "x"), TypeError, r"env=\['x'\] must be the notebook"),
        (lambda: grading.run_hidden(1, {}), ValueError, r"question=1 must be a question"),
        (lambda: grading.run_hidden("q1", None), TypeError, r"env=None must be the notebook"),
        (lambda: grading.lab_grader("../x", ["q1"]), ValueError, r"lab='../x' must be a lab"),
        (lambda: grading.lab_grader("lab1", "q1"), TypeError, r"questions='q1' must be a"),
        (lambda: grading.lab_grader("lab1", ["q 1"]), ValueError, r"questions\[0\]='q 1'"),
        (lambda: CellTimeLimit.cell_source(-1), ValueError, r"seconds=-1 must be"),
        (lambda: CellTimeLimit("s.ipynb", ["meta"]), TypeError, r"submission_metadata="),
        (lambda: grading.install_otter_for_colab(3), ValueError, r"python=3 must be the path"),
    ],
)
def test_a_bad_argument_is_refused_naming_it(call_it, error, message):
    with pytest.raises(error, match=message):
        call_it()


@pytest.mark.parametrize(
    ("call_it", "error", "message"),
    [
        (lambda t: grading.padded(t, 2**64), ValueError, r"pad=18446744073709551616 .* 16777216"),
        (lambda t: grading.padded(t, -1), ValueError, r"pad=-1 must be an integer ≥ 0"),
        (lambda t: grading.padded(t, 2, fill=1e308), ValueError, r"fill=1e\+308 does not fit"),
        (lambda t: grading.padded(t, 2, fill="0"), ValueError, r"fill='0' must be a real"),
        (lambda t: grading.padded(t.int(), 2), ValueError, r"tensor=.* floating-point"),
        (lambda t: grading.padded(t.to("meta"), 2), ValueError, r"tensor=.* holds values"),
        (lambda t: grading.check_padding("x", t), ValueError, r"tensor=.* not made by padded"),
        (lambda t: grading.check_attention("o", t, np.ones(3)), ValueError, r"expected has shape"),
        (lambda t: grading.check_attention("o", t, t, block_m=0), ValueError, r"block_m=0"),
        (lambda t: grading.check_attention("o", t, t, rows=""), ValueError, r"rows=''"),
        (
            lambda t: grading.check_attention("o", t, t, slips={"s": np.ones(2)}),
            ValueError,
            r"slips\['s'\] has shape",
        ),
        (
            lambda t: grading.check_attention("o", t, t, lse_expected=np.ones(5)),
            ValueError,
            r"lse_expected has shape",
        ),
    ],
)
def test_a_bad_tensor_argument_is_refused_naming_it(call_it, error, message):
    torch = pytest.importorskip("torch")
    with pytest.raises(error, match=message):
        call_it(torch.ones(2, 4, 8))


def test_a_check_patched_where_it_is_defined_is_caught(monkeypatch):
    """Labs import the checks from ``gpuperf.grading``; a check calls another from the module
    that defines it. Patching it there is caught too (the canary records both places)."""
    from gpuperf.grading import checks

    grading.integrity_check()  # untouched: passes
    monkeypatch.setattr(checks, "check_close", lambda *a, **k: None)
    with pytest.raises(grading.IntegrityError, match=r"gpuperf\.grading\.checks\.check_close"):
        grading.integrity_check()


def test_every_public_name_is_still_importable_from_gpuperf_grading():
    """The split kept the one namespace labs, hidden tests and the class grader import from."""
    for name in grading.__all__:
        assert getattr(grading, name) is not None, name
    assert set(grading._CHECKS) <= set(grading.__all__)
    assert grading.CellTimeLimit.IMPORTABLE_NAME == "gpuperf.grading.CellTimeLimit"
