"""How the tests start Jupyter kernels of their own (the Colab replica, the labs' untouched runs).

A kernel on TCP can die at start: its manager picks free ports and closes them, and another
process (the suite runs many, and Chromium opens thousands of local connections) can take one
before the kernel binds it ("ZMQError: Address already in use", seen in CI). On Unix sockets at
a path of its own, nothing else can. ``.ci/gpu_check_tasks.py`` starts its kernels with these
settings too.
"""

from __future__ import annotations

import tempfile
import uuid
from pathlib import Path


def on_unix_sockets() -> dict[str, str]:
    """``KernelManager`` settings for one kernel: Unix sockets at a new absolute path (a relative
    one is read from each process's own folder, and the kernel runs in the notebook's)."""
    sockets = Path(tempfile.gettempdir()) / f"gpuperf-kernel-{uuid.uuid4().hex[:16]}"
    return {"transport": "ipc", "ip": str(sockets)}
