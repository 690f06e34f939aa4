"""What page 4.2 says Triton does with its kernel on a T4 agrees with the course's one record
of it (``bench.COLAB_GPUS``, from ERRATA and frontier-2026 §9, release by release).

Review 2026-12 (R4 #17) found the page dating the FMA fallback to the wrong release; the errata
then showed the review's own date wrong too (3.2 still emits ``mma`` on sm_75). This test fails
if the page and the record part ways again.
"""

from __future__ import annotations

from pathlib import Path

import nbformat

from gpuperf import bench

PAGE = Path(__file__).resolve().parent.parent / "chapters/04_flashattention_kernels.ipynb"


def _markdown_with(text: str) -> str:
    cells = nbformat.read(PAGE, as_version=4).cells
    (found,) = [c.source for c in cells if c.cell_type == "markdown" and text in c.source]
    return " ".join(found.split())


def test_the_t4_section_says_what_each_triton_release_does_as_the_record_does():
    record = bench.COLAB_GPUS["T4"]
    for release, behaviour in (
        ("3.2", "still emits mma"),
        ("3.3", "falls back to FMA"),
        ("3.4", "compile them to FMA"),
    ):
        assert release in record and behaviour in record, (release, behaviour)
    section = _markdown_with("What Triton does with this kernel on a T4")
    assert "Triton `3.2` still emits the tensor-core instruction `mma.m16n8k8`" in section
    assert "`3.3`, the first release with the fallback" in section
    assert "crashes lowering fp16" in section
    assert "from `3.4` on, fp16 dots compile to FMA" in section


def test_problem_3_prices_the_t4_without_tensor_cores_from_the_release_the_record_names():
    problem = _markdown_with("**3.** On a T4")
    assert "Triton `3.4` and later compile this kernel's fp16 dots to CUDA-core FMA" in problem
    assert "3.4 and later compile them to FMA" in bench.COLAB_GPUS["T4"]
