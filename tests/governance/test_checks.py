"""tools.E001-E008 and tools.W001: each with a passing and a failing case, as whole messages."""

from __future__ import annotations

from datetime import date

import pytest
from django.core import checks as django_checks
from django.core.management import call_command
from django.core.management.base import SystemCheckError

from tests.governance.conftest import fake_tool
from tools import checks
from tools.checks import check_tool_surface, fixture_issues, surface_issues
from tools.governance import fixtures, selectors
from tools.governance.surface import ChangeKind, InputChange, LedgerEntry, Retirement, Surface
from tools.models import RetiredTool, ToolName
from tools.registry import default_tools

DAY = date(2026, 1, 1)
TAGS = list[str]


def history(ledger=(), retired=(), changes=()) -> Surface:
    return Surface(
        ledger=tuple(LedgerEntry(name, DAY) for name in ledger),
        retired=tuple(Retirement(name, tuple(by), DAY) for name, by in retired),
        changes=tuple(InputChange(tool, name, ChangeKind(kind), DAY, "Send x.") for tool, name, kind in changes),
    )


def registry(*tools):
    return {tool.name: tool for tool in tools}


LIVE = registry(fake_tool("demo-live"))


def error(code: str, obj: str, **values: str) -> django_checks.Error:
    message = getattr(checks, code).format(**values)
    return django_checks.Error(message, hint=getattr(checks, f"{code}_HINT"), obj=obj, id=f"tools.{code}")


def test_e001_every_registered_tool_is_in_the_ledger():
    assert surface_issues(history(ledger=["demo-live"]), LIVE) == []
    assert surface_issues(history(), LIVE) == [error("E001", "demo-live")]


def test_e002_every_ledger_name_is_registered_or_retired():
    retired = history(ledger=["demo-live", "demo-old"], retired=[("demo-old", ["demo-live"])])
    assert surface_issues(retired, LIVE) == []
    assert surface_issues(history(ledger=["demo-live", "demo-old"]), LIVE) == [error("E002", "demo-old")]


def test_e003_no_retired_name_is_registered():
    both = registry(fake_tool("demo-live"), fake_tool("demo-old"))
    retired = history(ledger=["demo-live", "demo-old"], retired=[("demo-old", ["demo-live"])])
    assert surface_issues(retired, LIVE) == []
    assert surface_issues(retired, both) == [error("E003", "demo-old")]


@pytest.mark.parametrize(
    ("replaced_by", "culprit"),
    [(["demo-gone"], "demo-gone"), (["demo-live", "demo-older"], "demo-older")],
    ids=["not registered", "retired itself"],
)
def test_e004_every_replacement_is_a_live_tool(replaced_by, culprit):
    ledger = ["demo-live", "demo-old", "demo-older"]
    good = history(ledger=ledger, retired=[("demo-old", ["demo-live"]), ("demo-older", ["demo-live"])])
    bad = history(ledger=ledger, retired=[("demo-old", replaced_by), ("demo-older", ["demo-live"])])
    assert surface_issues(good, LIVE) == []
    assert surface_issues(bad, LIVE) == [error("E004", "demo-old", replacement=culprit)]


def test_e005_a_contract_change_names_a_registered_tool():
    ok = history(ledger=["demo-live"], changes=[("demo-live", "old", "removed")])
    assert surface_issues(ok, LIVE) == []
    unregistered = history(ledger=["demo-live"], changes=[("demo-elsewhere", "old", "removed")])
    assert surface_issues(unregistered, LIVE) == [error("E005", "demo-elsewhere")]


def test_e006_a_removed_input_is_not_in_the_schema():
    assert surface_issues(history(ledger=["demo-live"], changes=[("demo-live", "old", "removed")]), LIVE) == []
    still_there = history(ledger=["demo-live"], changes=[("demo-live", "query", "removed")])
    assert surface_issues(still_there, LIVE) == [error("E006", "demo-live.query")]


@pytest.mark.parametrize("input_name", ["query", "absent"], ids=["still a string", "not an input"])
def test_e007_a_string_now_list_input_is_an_array(input_name):
    tool = registry(fake_tool("demo-live", query=str, tags=TAGS))
    ok = history(ledger=["demo-live"], changes=[("demo-live", "tags", "string_now_list")])
    assert surface_issues(ok, tool) == []
    wrong = history(ledger=["demo-live"], changes=[("demo-live", input_name, "string_now_list")])
    assert surface_issues(wrong, tool) == [error("E007", f"demo-live.{input_name}")]


def test_e008_a_retired_tool_has_no_contract_changes():
    retired = [("demo-old", ["demo-live"])]
    assert surface_issues(history(ledger=["demo-live", "demo-old"], retired=retired), LIVE) == []
    leftover = history(
        ledger=["demo-live", "demo-old"],
        retired=retired,
        changes=[("demo-old", "b", "removed"), ("demo-old", "a", "string_now_list")],
    )
    assert surface_issues(leftover, LIVE) == [error("E008", "demo-old", inputs="a, b")]


def test_w001_the_database_and_the_fixture_agree(tmp_path):
    path = tmp_path / "tool_surface.json"
    ours = history(ledger=["demo-live", "demo-old"], retired=[("demo-old", ["demo-live"])])
    fixtures.write_fixture(ours, path)
    assert fixture_issues(ours, path) == []
    edited = history(
        ledger=["demo-live", "demo-old"], retired=[("demo-old", [])], changes=[("demo-live", "x", "removed")]
    )
    warning = django_checks.Warning(
        checks.W001.format(sections="retired tools, contract changes"),
        hint=checks.W001_HINT,
        obj=checks.FIXTURE_NAME,
        id="tools.W001",
    )
    assert fixture_issues(edited, path) == [warning]


def test_w001_names_a_fixture_it_cannot_read(tmp_path):
    path = tmp_path / "tool_surface.json"
    path.write_text('{"ledger": []}')
    [warning] = fixture_issues(history(), path)
    assert warning.id == "tools.W001"
    assert "the fixture cannot be read (KeyError: 'retired')" in warning.msg


def release_for(surface: Surface, *extra):
    """A release registering every live name of `surface` (the real module where one exists,
    so contract changes meet real schemas; a stand-in otherwise), plus `extra`."""
    real = {tool.name: tool for tool in default_tools()}
    live = surface.ledger_names - set(surface.retired_by_name)
    return [*(real.get(name) or fake_tool(name) for name in sorted(live)), *extra]


def test_the_committed_history_passes_every_check_once_its_live_tools_exist():
    committed = fixtures.read_fixture()
    assert surface_issues(committed, registry(*release_for(committed))) == []


def test_checks_skip_when_no_database_is_asked_for():
    # No django_db mark: touching the database here would fail the test.
    assert check_tool_surface(app_configs=None, databases=None) == []
    assert [m.id for m in django_checks.run_checks() if m.id and m.id.startswith("tools.")] == []


@pytest.mark.django_db(transaction=True)
def test_checks_skip_before_migrations():
    call_command("migrate", "tools", "zero", verbosity=0)
    try:
        assert not selectors.tables_exist()
        assert check_tool_surface(databases=["default"]) == []
    finally:
        call_command("migrate", "tools", verbosity=0)


@pytest.fixture
def consistent_database(use_registry, monkeypatch, tmp_path):
    """The test database judged against a release registering its live names, with a fixture
    that matches it: no issues, until a test adds one."""
    surface = selectors.tool_surface()
    use_registry(*release_for(surface))
    path = tmp_path / "tool_surface.json"
    fixtures.write_fixture(surface, path)
    monkeypatch.setattr(fixtures, "FIXTURE_PATH", path)
    return surface


@pytest.mark.django_db
def test_the_registered_check_reads_the_database(consistent_database, use_registry):
    assert check_tool_surface(databases=["default"]) == []
    use_registry(*release_for(consistent_database, fake_tool("demo-new")))
    assert check_tool_surface(databases=["default"]) == [error("E001", "demo-new")]


@pytest.mark.django_db
def test_an_unexported_admin_edit_is_a_warning(consistent_database):
    live = sorted(consistent_database.ledger_names - set(consistent_database.retired_by_name))
    ToolName.objects.create(name="demo-old", first_seen=DAY)
    RetiredTool.objects.create(tool_id="demo-old", replaced_by=[live[0]], since=DAY)
    [warning] = check_tool_surface(databases=["default"])
    assert warning.id == "tools.W001"
    assert warning.msg == checks.W001.format(sections="ledger, retired tools")


@pytest.mark.django_db(transaction=True)
def test_check_deploy_fails_on_errors_but_migrate_repairs_the_ledger(consistent_database, use_registry):
    use_registry(*release_for(consistent_database, fake_tool("demo-new")))
    with pytest.raises(SystemCheckError, match=r"demo-new: \(tools\.E001\)"):
        call_command("check", deploy=True, databases=["default"], tags=["tool_surface"])
    call_command("migrate", skip_checks=False, verbosity=0)  # not stopped by tools.E001 ...
    assert ToolName.objects.filter(name="demo-new").exists()  # ... because it fixes it
    assert [m.id for m in check_tool_surface(databases=["default"])] == ["tools.W001"]
