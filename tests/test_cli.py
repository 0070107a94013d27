"""The `tomtom-maps-mcp` console script speaks as itself: its own version, program names and commands."""

import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(sys.executable).with_name("tomtom-maps-mcp")


def run(*args: str, home: Path | None = None) -> str:
    env = {"DOTENV_PATH": "/nonexistent", **({"HOME": str(home)} if home else {})}
    done = subprocess.run([SCRIPT, *args], capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_version_is_the_packages():
    assert run("--version").strip() == "tomtom-maps-mcp 0.1.0"


@pytest.mark.parametrize(
    ("args", "prog"),
    [
        (["--help"], "tomtom-maps-mcp"),
        (["stdio", "--help"], "tomtom-maps-mcp"),
        (["exec", "--help"], "tomtom-maps-mcp exec"),
        (["serve", "--help"], "tomtom-maps-mcp serve"),
    ],
)
def test_help_names_the_program(args, prog):
    usage = run(*args)
    assert usage.startswith(f"usage: {prog} [-h]")
    assert "mcp_stdio" not in usage and "mcp_exec" not in usage


def test_help_lists_every_command():
    usage = run("--help")
    for command in ("serve", "exec", "manage"):
        assert f"tomtom-maps-mcp {command} " in usage


def test_manage_passes_through_to_django(tmp_path):
    """`manage` runs any management command, on the embedded database in the data directory."""
    listed = run("manage", "showmigrations", "tools", "--plan", home=tmp_path)
    assert "[ ]  tools.0001_tool_surface" in listed
    assert (tmp_path / ".local" / "share" / "tomtom-maps-mcp").is_dir()
