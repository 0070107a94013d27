"""The `tomtom-maps-mcp` console script speaks as itself: its own version, program names and commands."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import CANARY_KEY, REPO, data
from tomtom_mcp import cli

SCRIPT = Path(sys.executable).with_name("tomtom-maps-mcp")


def run(*args: str, home: Path | None = None) -> str:
    env = {"DOTENV_PATH": "/nonexistent", **({"HOME": str(home)} if home else {})}
    done = subprocess.run([SCRIPT, *args], capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_version_is_the_packages():
    """And which simplifier it runs: a checkout's install builds the compiled kernel."""
    assert run("--version").strip() == "tomtom-maps-mcp 0.1.0 (simplifier: compiled kernel)"


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


DJANGO_OPTIONS = ("--settings", "--pythonpath", "--verbosity", "--traceback", "--no-color", "--force-color")


@pytest.mark.parametrize("args", [["--help"], ["exec", "--help"]])
def test_help_offers_our_options_and_environment_not_djangos(args):
    usage = run(*args)
    assert "--apikey-file PATH" in usage and "--backend NAME" in usage
    assert not [option for option in DJANGO_OPTIONS if option in usage]
    assert "--apikey " not in usage and "--apikey\n" not in usage  # a key on the command line shows in `ps`
    for name, default, _ in cli.ENVIRONMENT:
        assert f"  {name} ({default}): " in usage


def test_each_variable_in_help_is_documented_with_the_same_default():
    table = {}
    for line in (REPO / "README.md").read_text().splitlines():
        if cells := re.fullmatch(r"\| `([A-Z_]+)` \| (.*?) \| .*", line):
            table[cells[1]] = cells[2]
    for name, default, _ in cli.ENVIRONMENT:
        assert name in table, f"{name} is not in README's configuration table"
        if default in ("none", "INFO", "20.0", "tomtom-orbis-maps"):
            assert table[name] in ("—" if default == "none" else f"`{default}`",), (name, table[name])


def test_a_key_file_gives_the_key(stub, tmp_path):
    stub.route("GET", r"/maps/orbis/traffic/.*", json_body=data("traffic.json"))
    key_file = tmp_path / "tomtom.key"
    key_file.write_text(f"{CANARY_KEY}\n")
    done = subprocess.run(
        [SCRIPT, "exec", "tomtom-traffic", '{"bbox": [4.8, 52.33, 4.95, 52.4]}', "--apikey-file", str(key_file)],
        capture_output=True,
        text=True,
        env={**os.environ, "DOTENV_PATH": "/nonexistent", "TOMTOM_API_BASE_URL": stub.base_url, "TOMTOM_API_KEY": ""},
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert stub.requests[-1].api_key == CANARY_KEY
    assert CANARY_KEY not in done.stderr


@pytest.mark.parametrize(
    ("content", "says"),
    [(None, "cannot be read (No such file or directory)"), ("", "is empty"), ("x" * 5000, "is over 4096 bytes")],
)
def test_a_key_file_that_cannot_serve_ends_the_command_with_status_2(tmp_path, content, says):
    key_file = tmp_path / "tomtom.key"
    if content is not None:
        key_file.write_text(content)
    done = subprocess.run(
        [SCRIPT, "exec", "tomtom-traffic", "{}", "--apikey-file", str(key_file)],
        capture_output=True,
        text=True,
        env={**os.environ, "DOTENV_PATH": "/nonexistent"},
        timeout=60,
    )
    assert done.returncode == 2
    assert f"--apikey-file: {key_file} {says}" in done.stderr


def test_a_command_error_is_one_line_and_its_status_not_a_traceback():
    done = subprocess.run(
        [SCRIPT, "exec", "tomtom-geocode", "{query: Dam}"],
        capture_output=True,
        text=True,
        env={**os.environ, "DOTENV_PATH": "/nonexistent"},
        timeout=60,
    )
    assert done.returncode == 2
    assert done.stderr.startswith("tomtom-maps-mcp exec: error: arguments are not JSON")
    assert "Traceback" not in done.stderr
