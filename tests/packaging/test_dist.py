"""What a release uploads from Linux (`make dist`): an sdist and a manylinux wheel PyPI accepts,
checked as PyPI checks them; the wheel, on the stable ABI, installs and serves stdio on every
CPython the project supports, with its compiled kernel (docs/adr/0048-release-artifacts.md)."""

from __future__ import annotations

import glob
import os
import platform
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.conftest import REPO

pytestmark = pytest.mark.packaging

UV = Path(sys.executable).with_name("uv")
PYTHONS = ("3.12", "3.13")
"""Every CPython the project supports (pyproject.toml's classifiers say the same)."""


def interpreter(version: str) -> str:
    """A CPython `version` on this machine that runs: one pyenv installed (by its full path, since
    pyenv's shims fail unless a version is selected), else one on PATH."""
    root = os.environ.get("PYENV_ROOT", str(Path.home() / ".pyenv"))
    candidates = sorted(glob.glob(f"{root}/versions/{version}.*/bin/python{version}"), reverse=True)
    candidates += [found] if (found := shutil.which(f"python{version}")) else []
    for candidate in candidates:
        if subprocess.run([candidate, "-c", "import venv"], capture_output=True, timeout=60).returncode == 0:
            return candidate
    pytest.skip(f"no Python {version} on this machine")


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    out = tmp_path_factory.mktemp("dist")
    done = subprocess.run(
        ["make", "-s", "-o", ".venv/.installed", "dist", f"DIST={out}"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return out, done.stdout


def test_dist_makes_an_sdist_and_a_manylinux_abi3_wheel_that_pass_twines_strict_check(dist):
    out, printed = dist
    names = sorted(path.name for path in out.iterdir())
    machine = platform.machine()
    assert names == [
        f"tomtom_maps_mcp-0.1.0-cp312-abi3-manylinux2014_{machine}.manylinux_2_17_{machine}.whl",
        "tomtom_maps_mcp-0.1.0.tar.gz",
    ]
    assert printed.count("PASSED") == 2 and "FAILED" not in printed and "WARNING" not in printed
    (wheel,) = out.glob("*.whl")
    built = [name for name in zipfile.ZipFile(wheel).namelist() if name.endswith((".so", ".pyd"))]
    assert built == ["tools/geometry/_kernel.abi3.so"]  # the stable-ABI kernel, and no other build


@pytest.mark.parametrize("version", PYTHONS)
def test_the_wheel_serves_stdio_with_its_kernel_on_each_supported_python(dist, tmp_path, version):
    (wheel,) = dist[0].glob("*.whl")
    venv = tmp_path / "venv"
    subprocess.run([UV, "venv", "--quiet", "--python", interpreter(version), venv], check=True, timeout=120)
    python = venv / "bin" / "python"
    subprocess.run(
        [UV, "pip", "install", "--quiet", "--python", python, "-c", REPO / "constraints.txt", wheel],
        check=True,
        timeout=900,
    )
    done = subprocess.run(
        [python, REPO / "scripts" / "smoke_wheel.py"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
    )
    assert done.returncode == 0, done.stdout + done.stderr
    first = done.stdout.splitlines()[0]
    assert first == "tomtom-maps-mcp 0.1.0 (simplifier: compiled kernel)"
    assert "tools listed over stdio" in done.stdout
    assert subprocess.run(
        [python, "-c", "import sys; print(sys.version_info[:2])"], capture_output=True, text=True
    ).stdout.strip() == str(tuple(map(int, version.split("."))))
