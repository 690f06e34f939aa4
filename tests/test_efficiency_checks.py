"""``check_traffic`` and ``check_sector_efficiency``: a correct kernel that wastes bytes fails,
with the excess and the line that did it; a launch with no kernel in it never passes."""

from __future__ import annotations

import pytest
import torch

from gpuperf.grading import check_sector_efficiency, check_traffic
from gpuperf.grading.feedback import CheckError
from gpuperf.kernels import copy_coalesced, copy_strided, vector_add
from gpuperf.runtime import DEVICE, interpreting

pytestmark = pytest.mark.skipif(not interpreting(), reason="counting needs the CPU interpreter")


def randn(n: int) -> torch.Tensor:
    return torch.randn(n, generator=torch.Generator().manual_seed(n)).to(DEVICE)


def test_a_coalesced_copy_passes_and_returns_the_launchs_result():
    x = randn(4096)
    out = check_sector_efficiency("copy_coalesced", lambda: copy_coalesced(x, BLOCK_SIZE=512))
    assert torch.equal(out, x)


def test_a_strided_copy_fails_naming_its_load_line_and_the_sectors_it_wasted():
    x = randn(8 * 1024)
    with pytest.raises(CheckError) as caught:
        check_sector_efficiency("copy_strided", lambda: copy_strided(x, 8, BLOCK_SIZE=256))
    message = str(caught.value)
    # 1,024 fp32 loaded, one 32-byte sector each: 4/32 = 12 % of the fetched bytes used
    assert "4,096 bytes loaded in 1,024 sectors of 32 bytes (32,768 bytes), 12% used" in message
    assert "of copy.py" in message and "tl.load" in message
    assert "stored" not in message  # the dense store uses its sectors fully
    # only the stores are asked about: they are dense, so it passes
    out = check_sector_efficiency("copy_strided", lambda: copy_strided(x, 8), kind="store")
    assert torch.equal(out, x[::8])


def test_a_launch_without_a_triton_kernel_is_never_graded_as_efficient():
    x, y = randn(256), randn(256)
    for check, args in ((check_traffic, (1e9,)), (check_sector_efficiency, ())):
        with pytest.raises(CheckError, match="without launching a Triton kernel"):
            check("add", lambda: x + y, *args)


def test_check_traffic_names_the_excess_and_passes_the_lean_launch():
    x, y = randn(1000), randn(1000)
    out = check_traffic("vector_add", lambda: vector_add(x, y), {"x_ptr": 4000, "y_ptr": 4000})
    assert torch.equal(out, x + y)
    with pytest.raises(CheckError) as caught:
        check_traffic("vector_add", lambda: vector_add(x, y), {"x_ptr": 4000, "y_ptr": 2000})
    message = str(caught.value)
    assert "requested 8,000 bytes read" in message and "6,000 suffice" in message
    assert "Most of the excess is `y_ptr`: 4,000 bytes, where 2,000 suffice" in message


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [({"minimum": 0.0}, ValueError), ({"minimum": 1.5}, ValueError),
     ({"kind": "read"}, ValueError),
     ({"what": 3}, TypeError)],
)  # fmt: skip
def test_bad_arguments_name_the_value(kwargs, error):
    with pytest.raises(error):
        check_sector_efficiency("k", lambda: None, **kwargs)
