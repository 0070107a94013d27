"""Documentation contracts: what an operator or integrator can meet must be written down."""

import re
import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO
from tomtom_mcp.env import ENV_VARS
from tools.errors import ErrorCode
from tools.registry import default_tools

README = (REPO / "README.md").read_text()


def test_every_setting_is_documented():
    undocumented = [name for name in ENV_VARS if f"`{name}`" not in README]
    assert undocumented == [], "add these to the Configuration table in README.md"


def test_every_error_code_is_documented():
    assert [code.value for code in ErrorCode if f"`{code.value}`" not in README] == []


def test_every_tool_is_documented():
    assert [tool.name for tool in default_tools() if f"`{tool.name}`" not in README] == []


def test_every_adr_linked_from_code_exists():
    mentioned = set()
    for path in [*REPO.glob("tools/**/*.py"), *REPO.glob("tomtom_mcp/*.py"), *REPO.glob("analytics/**/*.py")]:
        mentioned.update(re.findall(r"docs/adr/[\w.-]+\.md", path.read_text()))
    assert [m for m in sorted(mentioned) if not (REPO / m).is_file()] == []


def test_dependencies_point_one_way():
    """The import-linter contracts in pyproject.toml (adapters -> dispatcher -> tools -> client)."""
    lint_imports = Path(sys.executable).with_name("lint-imports")
    done = subprocess.run([lint_imports], cwd=REPO, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
