"""What the lab masters state in words agrees with the course's own numbers and formulas.

Review 2026-12 (R2) found three lab sentences that the graders never read: lab 4's extra-credit
note counted the lab out of 10 while its questions add up to 12; its takeaways gave
FlashAttention's HBM *traffic* as O(N·d), which is its memory (the traffic is Θ(N²d²/M), the
course's :func:`gpuperf.attention.io_complexity_flash`); and lab 5 carried the 1 MB threshold of
nvbandwidth's device-local copy over to the PCIe host link. Each test here would have failed.
"""

from __future__ import annotations

import importlib.util
import math
import re
from pathlib import Path

import nbformat
import pytest

from gpuperf import attention, measurements, memory

ROOT = Path(__file__).resolve().parent.parent
MASTERS = sorted(ROOT.glob("labs/lab*/lab*.ipynb"))
LAB4 = ROOT / "labs/lab4_flashattention/lab4_flashattention.ipynb"
LAB5 = ROOT / "labs/lab5_memory_hierarchy/lab5_memory_hierarchy.ipynb"


def _markdown(path: Path) -> str:
    nb = nbformat.read(path, as_version=4)
    return "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")


def _question_points(path: Path) -> dict[str, int]:
    """name → points of every ``# BEGIN QUESTION`` block of a master."""
    nb = nbformat.read(path, as_version=4)
    points = {}
    for cell in nb.cells:
        if cell.cell_type == "raw" and cell.source.startswith("# BEGIN QUESTION"):
            name = re.search(r"^name:\s*(\S+)", cell.source, re.M).group(1)
            points[name] = int(re.search(r"^points:\s*(\d+)", cell.source, re.M).group(1))
    return points


@pytest.mark.parametrize("path", MASTERS, ids=[p.parent.name for p in MASTERS])
def test_the_points_a_lab_states_are_the_points_its_questions_carry(path):
    text = _markdown(path)
    header = re.search(r"Points: (\d+)(?:, plus (\d+) points? of extra credit)?", text)
    assert header, f"{path.name}: no 'Points: N' in the header"
    graded, extra = int(header.group(1)), int(header.group(2) or 0)
    assert sum(_question_points(path).values()) == graded + extra
    # every other statement of the total says the same number
    for stated in re.findall(r"(?:the lab's|graded out of) (\d+)", text):
        assert int(stated) == graded, f"{path.name} says {stated} where the header says {graded}"


def test_lab4_extra_credit_is_question_3_on_top_of_12():
    text = _markdown(LAB4)
    points = _question_points(LAB4)
    assert points["q3"] == 3 and sum(points.values()) - points["q3"] == 12
    assert "on top of the lab's 12" in text


def test_lab4_gives_flash_attention_traffic_as_the_course_computes_it():
    text = _markdown(LAB4)
    assert not re.search(r"traffic is O\(N·d\)", text)
    assert "Θ(N²d²/M)" in text and "Θ(Nd + N²)" in text
    # the course's counts: quadratic in N at fixed d and M (not linear), linear in 1/M
    n, d, m = 4096, 64, 100 * 1024
    assert attention.io_complexity_flash(2 * n, d, m) == pytest.approx(
        4 * attention.io_complexity_flash(n, d, m)
    )
    assert attention.io_complexity_flash(n, d, 2 * m) == pytest.approx(
        attention.io_complexity_flash(n, d, m) / 2
    )
    one = attention.hbm_traffic_flash(n, d, 228 * 1024).bytes
    two = attention.hbm_traffic_flash(2 * n, d, 228 * 1024).bytes
    assert 3.5 < two / one < 4.1  # the counted traffic grows like N², as the text now says
    # what *is* linear in N is the memory: the logsumexp beside Q, K, V and O
    flash = attention.attention_memory(n, d, implementation="flash")
    assert flash.intermediate_bytes == n * 4


def test_lab4_recomputation_costs_one_matmul_per_block():
    text = _markdown(LAB4)
    assert "a few FLOPs" not in text
    assert "2N²d FLOPs" in text and "five matmuls" in text
    nb = nbformat.read(LAB4, as_version=4)
    solution = next(c.source for c in nb.cells if "def flash_attention_backward" in c.source)
    loop = solution.split("# BEGIN SOLUTION")[1].split("# END SOLUTION")[0]
    assert loop.count("@") == 5  # S = QKᵀ recomputed, then dV, dP, dQ, dK


def _lab5_hidden():
    spec = importlib.util.spec_from_file_location(
        "lab5_hidden_tests", LAB5.parent / "hidden_tests.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_lab5_keeps_the_1_mb_threshold_on_the_link_it_was_measured_on():
    text = _markdown(LAB5)
    assert "device_local_copy" in text
    assert "pays far more than the 1.4 µs" not in text
    host_w = measurements.find("CPU → GPU copy", "H100-SXM").value
    host_t0 = measurements.find("CPU ↔ GPU round-trip latency", "H100-SXM").value
    local_w = measurements.find("HBM copy, per direction", "H100-SXM").value
    env = {
        "n_90": 9 * memory.half_bandwidth_size(host_w, host_t0),
        "batching_speedup": 1000
        * memory.transfer_time(4096, host_w, host_t0)
        / memory.transfer_time(4_096_000, host_w, host_t0),
        "local_copy_max_latency_s": measurements.LATENCY_BOUND_BELOW_BYTES / local_w,
    }
    hidden = _lab5_hidden()
    hidden.q5(env)  # the right answer passes
    assert math.isclose(env["local_copy_max_latency_s"], 658e-9, rel_tol=0.01)
    # the old answer, 1 MB over the host link's bandwidth (70 µs), is refused with a hint
    env["local_copy_max_latency_s"] = measurements.LATENCY_BOUND_BELOW_BYTES / host_w
    with pytest.raises(AssertionError, match="device-local copy's bandwidth"):
        hidden.q5(env)


def test_lab5_says_the_one_node_busbw_is_nvls_not_a_ring():
    text = _markdown(LAB5)
    assert "NVLink SHARP (NVLS)" in text
    nvls = measurements.find("all-reduce bus bandwidth in one node", "H100-SXM")
    assert "NVLink SHARP" in nvls.method and nvls.value > 450e9  # above any ring over NVLink 4


# --- review 2026-12 (R3): ridge points are not ordered by a chip's age ------------------------

LAB1 = ROOT / "labs/lab1_rooflines/lab1_rooflines.ipynb"
CHAPTER2 = ROOT / "chapters/02_roofline.ipynb"


def _lab1_q5_ops() -> dict:
    """Lab 1's question-5 operations and chips, read from the master's solution cell."""
    nb = nbformat.read(LAB1, as_version=4)
    source = next(
        c.source for c in nb.cells if c.source.startswith("from gpuperf import cost\n\nOPS")
    )
    namespace: dict = {}
    exec(source.split("verdicts = {}")[0], namespace)  # the definitions, not the answer
    return namespace


def test_lab1_q5_has_an_operation_that_changes_sides_between_chips():
    """R3 #3: the takeaway 'the same operation can change sides' must be shown by question 5."""
    from gpuperf import roofline

    ns = _lab1_q5_ops()
    changes = [
        name
        for name, op in ns["OPS"].items()
        if len({roofline.time_bounds(op, c, p).bound for c, p in ns["CHIP_PRECISION"].items()})
        == 2
    ]
    assert changes == ["matmul B=256"]
    hidden = importlib.util.spec_from_file_location("lab1_hidden", LAB1.parent / "hidden_tests.py")
    module = importlib.util.module_from_spec(hidden)
    hidden.loader.exec_module(module)
    # the autograder's reference grades the same operations the question asks about
    verdicts = {
        (o, c): roofline.time_bounds(op, c, p).bound
        for o, op in ns["OPS"].items()
        for c, p in ns["CHIP_PRECISION"].items()
    }
    module.q5({"verdicts": verdicts})
    # one chip's verdicts copied to the others are refused
    copied = {(o, c): verdicts[(o, "H100-SXM")] for o, c in verdicts}
    with pytest.raises(AssertionError):
        module.q5({"verdicts": copied})


def test_no_page_says_newer_chips_have_higher_ridge_points():
    """R3 #1 and #2: the table's own rows contradict 'newer chips move the ridge right'."""
    from gpuperf import chip

    ridge = {n: chip(n).ridge_point("bf16") for n in ("A100-80GB", "H100-SXM", "H200", "B200")}
    assert ridge["A100-80GB"] < ridge["H100-SXM"]
    assert ridge["H200"] < ridge["H100-SXM"] and ridge["B200"] < ridge["H100-SXM"]
    assert chip("T4").ridge_point("fp16") > ridge["A100-80GB"]  # 2018's above 2020's
    for path in (LAB1, CHAPTER2):
        text = " ".join(_markdown(path).split())
        assert "ridge points move right" not in text, path.name
        assert "newer chips need larger batches" not in text, path.name
        assert not re.search(r"newer chips raise FLOP/s faster", text), path.name
