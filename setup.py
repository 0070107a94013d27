"""The one thing pyproject.toml cannot declare stably: the simplifier's compiled kernel.

Optional (docs/adr/0037-compiled-simplifier-kernel.md): where it cannot be built (no C compiler),
the package installs without it and the simplifier runs its numpy search, with the same results.
Contraction of floating-point expressions is off: the kernel's arithmetic is what it spells out.
The kernel is built on CPython's stable ABI of 3.12 (`Py_LIMITED_API`, set in _kernel.c): its
wheel is tagged `cp312-abi3` and serves 3.12 and every later CPython on its platform.
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "tools.geometry._kernel",
            sources=["tools/geometry/_kernel.c"],
            extra_compile_args=["-O3", "-ffp-contract=off", "-fno-math-errno", "-fno-trapping-math"],
            optional=True,
            py_limited_api=True,
        )
    ],
    options={"bdist_wheel": {"py_limited_api": "cp312"}},
)
