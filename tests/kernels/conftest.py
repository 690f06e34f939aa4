"""Shared fixtures for the kernel tests (Triton interpreter on CPU, or a GPU if present)."""

from __future__ import annotations

import pytest

from gpuperf.runtime import configure_triton

configure_triton()  # before triton is first imported: TRITON_INTERPRET=1 when there is no GPU
torch = pytest.importorskip("torch")
pytest.importorskip("triton")

import gpuperf.kernels  # noqa: E402,F401
from gpuperf.kernels._common import expected_device  # noqa: E402
from gpuperf.tolerances import tolerance  # noqa: E402

DEVICE = expected_device()
#: bf16 is tested only through compilation (interpreter bf16 is wrong). Tolerances come from the
#: course's one table, gpuperf.tolerances, on the CPU interpreter and on a GPU alike.
DTYPES = [torch.float32, torch.float16]


@pytest.fixture(autouse=True)
def poison_outputs(monkeypatch):
    """Launchers allocate with torch.empty/empty_like: fill those with NaN so unwritten
    elements show up as NaN in the comparison instead of passing by luck."""
    empty, empty_like = torch.empty, torch.empty_like

    def _poison(t):
        if t.is_floating_point():
            t.fill_(float("nan"))
        return t

    monkeypatch.setattr(torch, "empty", lambda *a, **k: _poison(empty(*a, **k)))
    monkeypatch.setattr(torch, "empty_like", lambda *a, **k: _poison(empty_like(*a, **k)))


@pytest.fixture
def gen():
    """A fresh, seeded generator per test (fresh inputs, reproducible failures)."""
    g = torch.Generator().manual_seed(1234)
    return g


def randn(gen, *shape, dtype=torch.float32, scale=1.0):
    return (torch.randn(*shape, generator=gen) * scale).to(dtype).to(DEVICE)


def assert_close(actual, expected, dtype=None):
    """``actual`` ≈ ``expected`` within ``tolerance(dtype)`` (default: expected's dtype)."""
    rtol, atol = tolerance(dtype or expected.dtype)
    assert not torch.isnan(actual).any(), "NaN in output: an element was never written"
    torch.testing.assert_close(actual.float(), expected.float(), rtol=rtol, atol=atol)
