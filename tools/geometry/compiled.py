"""The simplifier's compiled kernel, when this installation has it.

``kernel`` is the C extension ``tools.geometry._kernel`` (tools/geometry/_kernel.c), built with
the package where a C compiler is at hand (setup.py declares it optional), or None. Its two
functions do what numpy code here also does, with the same results to the bit, only faster:
`douglas_peucker.priority_dp` searches with ``kernel.search``, and `positions.check_positions`
reads lists of floats with ``kernel.read_positions``. Without it, both run in numpy.
"""

from __future__ import annotations

from types import ModuleType
from typing import Literal

kernel: ModuleType | None
try:
    from tools.geometry import _kernel

    kernel = _kernel
except ImportError:  # built without a C compiler: the numpy search and reading
    kernel = None


def simplifier() -> Literal["compiled kernel", "numpy fallback"]:
    """Which simplifier this installation runs, as the start line and `--version` say it."""
    return "compiled kernel" if kernel is not None else "numpy fallback"
