"""The `tomtom-mcp` console script speaks as itself: its own version and program names."""

import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(sys.executable).with_name("tomtom-mcp")


def run(*args: str) -> str:
    done = subprocess.run([SCRIPT, *args], capture_output=True, text=True, env={"DOTENV_PATH": "/nonexistent"})
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_version_is_the_packages():
    assert run("--version").strip() == "tomtom-maps-mcp 0.1.0"


@pytest.mark.parametrize(("args", "prog"), [(["--help"], "tomtom-mcp"), (["exec", "--help"], "tomtom-mcp exec")])
def test_help_names_the_program(args, prog):
    usage = run(*args)
    assert usage.startswith(f"usage: {prog} [-h]")
    assert "mcp_stdio" not in usage and "mcp_exec" not in usage
