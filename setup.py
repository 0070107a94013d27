"""The one thing pyproject.toml cannot declare stably: the simplifier's compiled kernel.

Optional (docs/adr/0037-compiled-simplifier-kernel.md): where it cannot be built (no C compiler),
the package installs without it and the simplifier runs its numpy search, with the same results.
Contraction of floating-point expressions is off: the kernel's arithmetic is what it spells out.
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "tools.geometry._kernel",
            sources=["tools/geometry/_kernel.c"],
            extra_compile_args=["-O3", "-ffp-contract=off", "-fno-math-errno", "-fno-trapping-math"],
            optional=True,
        )
    ]
)
