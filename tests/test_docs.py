"""Documentation contracts: what an operator or integrator can meet must be written down."""

import re
import subprocess
import sys
from pathlib import Path

from core.errors import ErrorCode
from tests.conftest import PACKAGES, REPO
from tomtom_mcp.env import ENV_VARS
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
    for package in PACKAGES:
        for path in REPO.glob(f"{package}/**/*.py"):
            mentioned.update(re.findall(r"docs/adr/[\w.-]+\.md", path.read_text()))
    assert [m for m in sorted(mentioned) if not (REPO / m).is_file()] == []


ADRS = REPO / "docs" / "adr"
ADR_INDEX = (ADRS / "README.md").read_text()


def _adr_header(text: str) -> tuple[str, str]:
    """An ADR's title (without its number) and the status its header states, on one line."""
    title = re.match(r"# \d+\. (.+)\n", text)
    status = re.search(r"^(?:- )?Status: (.+?)\n(?=- |\n)", text, flags=re.M | re.S)
    assert title and status, "an ADR starts with `# N. Title`, then a `- Status:` line"
    return title[1], " ".join(status[1].split())


def _adr_index() -> dict[str, tuple[str, str, str]]:
    """File name -> (section, title, status) of each row of docs/adr/README.md."""
    rows, section = {}, ""
    for line in ADR_INDEX.splitlines():
        if line.startswith("## "):
            section = line[3:]
        row = re.match(r"\| \d+ \| \[(.+?)\]\((\d{4}-[\w.-]+\.md)\) \| ([^|]+) \|", line)
        if row:
            assert row[2] not in rows, f"{row[2]} is listed twice"
            rows[row[2]] = (section, row[1], row[3].strip())
    return rows


def test_every_adr_is_indexed_with_the_status_its_header_states():
    rows = _adr_index()
    files = sorted(path.name for path in ADRS.glob("[0-9][0-9][0-9][0-9]-*.md"))
    assert sorted(rows) == files, "docs/adr/README.md lists every ADR file, and no other"
    for name in files:
        title, status = _adr_header((ADRS / name).read_text())
        section, indexed_title, indexed_status = rows[name]
        assert indexed_title == title, f"{name}: the index's title is not the file's"
        by = re.findall(r"(?:superseded|amended) by \[?ADR (\d+)", status)
        if status.startswith("superseded"):
            assert (section, indexed_status.split("]")[0]) == ("Superseded", f"superseded by [ADR {by[0]}"), name
        else:
            assert status.startswith("accepted"), f"{name}: a status is accepted or superseded by an ADR"
            assert (section, indexed_status.split(";")[0]) == ("Current", "accepted"), name
        missing = [n for n in by if not re.search(rf"\bADR {n}\b", indexed_status)]
        assert missing == [], f"{name}: the index's status does not name ADR {missing}, which its header does"


def test_dependencies_point_one_way():
    """The import-linter contracts in pyproject.toml (wiring -> protocol -> the apps -> tools -> core)."""
    lint_imports = Path(sys.executable).with_name("lint-imports")
    done = subprocess.run([lint_imports], cwd=REPO, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


DEPLOY = (REPO / "docs" / "deploy.md").read_text()


def _make_targets() -> set[str]:
    rules = re.findall(r"^([^\s:#=][^:=]*):(?!=)", (REPO / "Makefile").read_text(), flags=re.M)
    return {target.replace("$(VENV)", ".venv") for rule in rules for target in rule.split()}


def test_every_file_the_deployment_guide_names_under_deploy_exists():
    named = set(re.findall(r"\bdeploy/([\w.@/-]+[\w@])", DEPLOY))

    assert {"nginx.conf", "tomtom-mcp.env", "tomtom-mcp@.service", "mcpb/manifest.json"} <= named
    assert [name for name in sorted(named) if not (REPO / "deploy" / name).is_file()] == []


def test_every_command_the_deployment_guide_runs_exists():
    from django.core.management import get_commands

    # `manage NAME` is the guide's shell function around `manage.py NAME`.
    commands = set(re.findall(r"(?:^|\|\s|`)manage(?:\.py)? ([a-z_]+)", DEPLOY, flags=re.M))
    targets = set(re.findall(r"(?:^|`|sudo -u tomtom-mcp )make ([\w./-]+)", DEPLOY, flags=re.M))

    steps = {"migrate", "apply_tool_surface", "collectstatic", "check", "createsuperuser", "ingest_app_status"}
    assert steps <= commands
    assert [name for name in sorted(commands) if name not in get_commands()] == []
    assert {".venv/.installed", "test-deploy"} <= targets
    assert [target for target in sorted(targets) if target not in _make_targets()] == []


GOVERNANCE = (REPO / "docs" / "governance.md").read_text()


def test_every_tool_surface_check_is_documented():
    from governance import checks

    codes = [name for name in vars(checks) if re.fullmatch(r"[EW]\d{3}", name)]
    ids = {f"tools.{code}" for code in codes}
    ids |= {
        f"tools.{code[0]}{int(code[1:]) + checks.TABLES_OFFSET:03d}"
        for code in codes
        if code not in ("E011", "E019", "E100", "E120", "W001")  # no twin in the other group
    }
    assert [check for check in sorted(ids) if f"`{check}`" not in GOVERNANCE] == []


def test_every_tenants_check_is_documented():
    ids = set(re.findall(r'id="(tenants\.[EW]\d{3})"', (REPO / "tenants" / "checks.py").read_text()))
    oauth = (REPO / "docs" / "oauth.md").read_text()
    assert ids and [check for check in sorted(ids) if check not in oauth] == []


def test_every_governance_command_is_documented():
    commands = (REPO / "governance" / "management" / "commands").glob("*.py")
    names = [path.stem for path in commands if not path.stem.startswith("_") and not path.stem.startswith("mcp_")]
    assert [name for name in sorted(names) if name != "migrate" and f"manage.py {name}" not in GOVERNANCE] == []
