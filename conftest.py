"""Root pytest configuration: every notebook under chapters/ and labs/ is checked by nbval.

Strict mode (``--nbval``): stored outputs must match a fresh run, after the substitutions in
``tests/nbval_sanitize.cfg``. Generated student notebooks are not run: their answers are blank.
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).parent
SANITIZE = ROOT / "tests" / "nbval_sanitize.cfg"

collect_ignore_glob = ["_build/*", "labs/*/student/*", "labs/*/autograder/*", ".venv*/*"]


def pytest_configure(config):
    # Decide compile-or-interpret before any test module can import triton: Triton fixes the
    # choice for its own helpers at import time (see gpuperf.kernels).
    from gpuperf.runtime import configure_triton

    configure_triton()
    option = config.option
    if not hasattr(option, "nbval") or option.nbval_lax:
        return  # nbval disabled with -p no:nbval, or the user asked for lax mode
    option.nbval = True
    option.nbval_current_env = True
    if option.nbval_sanitize_with is None and not option.sanitize_with:
        option.nbval_sanitize_with = str(SANITIZE)
