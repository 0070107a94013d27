"""The tool-surface checks, each id with a passing and a failing case, as whole messages.

Code and fixture (tools.E001-E017, W002, W003) need no database; the database group
(tools.E101-E117, W102, W103, W001, E100) judges the tables.
"""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import date

import pytest
from django.core import checks as django_checks
from django.core.management import call_command
from django.core.management.base import SystemCheckError

from governance import checks, fixtures, selectors
from governance.checks import check_fixture, check_tables, fixture_issues, surface_issues
from governance.models import DeprecatedTool, RetiredTool, ToolAlias, ToolName
from governance.surface import Alias, ChangeKind, Deprecation, InputChange, LedgerEntry, Retirement, Surface
from tests.conftest import REPO
from tests.governance.conftest import fake_tool
from tools.registry import default_tools

DAY = date(2026, 1, 1)
TAGS = {"type": "array", "items": {"type": "string"}}
FOUR = {"type": "array", "items": {"type": "number"}, "minItems": 4, "maxItems": 4}
PAIRS = {"type": "array", "items": {"type": "array", "items": {"type": "number"}}, "minItems": 2, "maxItems": 2}


def history(ledger=(), retired=(), changes=()) -> Surface:
    return Surface(
        ledger=tuple(LedgerEntry(name, DAY) for name in ledger),
        retired=tuple(Retirement(name, tuple(by), DAY) for name, by in retired),
        changes=tuple(
            change
            if isinstance(change, InputChange)
            else InputChange(change[0], change[1], ChangeKind(change[2]), DAY, "Send x.")
            for change in changes
        ),
    )


def change(input_name, kind, **fields) -> InputChange:
    return InputChange("demo-live", input_name, ChangeKind(kind), DAY, "Send x.", **fields)


def registry(*tools):
    return {tool.name: tool for tool in tools}


LIVE = registry(fake_tool("demo-live"))


def error(code: str, obj: str, *, tables: bool = False, **values: str) -> django_checks.CheckMessage:
    where = checks.IN_TABLES if tables else checks.IN_FIXTURE
    message = getattr(checks, code).format(where=where, **values)
    number = int(code[1:]) + (checks.TABLES_OFFSET if tables else 0)
    level = django_checks.Warning if code.startswith("W") else django_checks.Error
    return level(message, hint=getattr(checks, f"{code}_HINT"), obj=obj, id=f"tools.{code[0]}{number:03d}")


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
    problem = "query is still an input of demo-live"
    assert surface_issues(still_there, LIVE) == [error("E006", "demo-live.query", problem=problem)]


STRING = {"type": "string"}


@pytest.mark.parametrize(
    ("recorded", "problem"),
    [
        (
            change("query", "type_changed", was=STRING, now=TAGS),
            "query in demo-live's input schema is not a list of strings",
        ),
        (
            change("tags", "type_changed", was={"type": "array"}, now=TAGS),
            "demo-live's input schema still takes a list for tags",
        ),
        (change("absent", "type_changed", was=STRING, now=TAGS), "absent is not an input of demo-live"),
        (
            change("tags", "type_changed", was=STRING, now={"type": "list"}),
            "`now` is not a JSON Schema: 'list' is not valid under any of the given schemas",
        ),
    ],
    ids=["not the new shape", "old shape still passes", "not an input", "not a schema"],
)
def test_e007_a_type_change_matches_the_schema(recorded, problem):
    tool = registry(fake_tool("demo-live", query={"type": "string"}, tags=TAGS, box=FOUR))
    ok = [change("tags", "type_changed", was=STRING, now=TAGS), change("box", "type_changed", was=PAIRS, now=FOUR)]
    assert surface_issues(history(ledger=["demo-live"], changes=ok), tool) == []
    wrong = history(ledger=["demo-live"], changes=[recorded])
    assert surface_issues(wrong, tool) == [error("E007", f"demo-live.{recorded.input}", problem=problem)]


def test_e008_a_retired_tool_has_no_contract_changes():
    retired = [("demo-old", ["demo-live"])]
    assert surface_issues(history(ledger=["demo-live", "demo-old"], retired=retired), LIVE) == []
    leftover = history(
        ledger=["demo-live", "demo-old"],
        retired=retired,
        changes=[("demo-old", "b", "removed"), ("demo-old", "a", "removed")],
    )
    assert surface_issues(leftover, LIVE) == [error("E008", "demo-old", state="Retired", inputs="a, b")]


@pytest.mark.parametrize(
    ("recorded", "problem"),
    [
        (change("old", "renamed", new_input="absent"), "absent is not an input of demo-live"),
        (change("query", "renamed", new_input="tags"), "query is still an input of demo-live"),
        (change("old", "renamed"), "a rename names the new input, which differs from old"),
    ],
    ids=["new name missing", "old name still there", "no new name"],
)
def test_e009_a_rename_matches_the_schema(recorded, problem):
    tool = registry(fake_tool("demo-live", query={"type": "string"}, tags=TAGS))
    ok = history(ledger=["demo-live"], changes=[change("old", "renamed", new_input="tags")])
    assert surface_issues(ok, tool) == []
    wrong = history(ledger=["demo-live"], changes=[recorded])
    assert surface_issues(wrong, tool) == [error("E009", f"demo-live.{recorded.input}", problem=problem)]


@pytest.mark.parametrize(
    ("recorded", "problem"),
    [
        (
            change("chargePercent", "unit_changed", new_input="absent", was="percent", now="kWh"),
            "absent is not an input of demo-live",
        ),
        (
            change("charge", "unit_changed", new_input="charge", was="percent", now="kWh"),
            "a unit change names the new input, which differs from charge (a value alone cannot tell its unit)",
        ),
        (
            change("chargePercent", "unit_changed", new_input="charge"),
            "a unit change names the old and the new unit in `was` and `now`",
        ),
    ],
    ids=["new input missing", "same name", "no units"],
)
def test_e010_a_unit_change_matches_the_schema(recorded, problem):
    tool = registry(fake_tool("demo-live", charge={"type": "number"}))
    ok = history(
        ledger=["demo-live"],
        changes=[change("chargePercent", "unit_changed", new_input="charge", was="percent", now="kWh")],
    )
    assert surface_issues(ok, tool) == []
    wrong = history(ledger=["demo-live"], changes=[recorded])
    assert surface_issues(wrong, tool) == [error("E010", f"demo-live.{recorded.input}", problem=problem)]


def test_e011_the_fixture_can_be_read(tmp_path, monkeypatch, use_registry):
    use_registry(fake_tool("demo-live"))
    path = tmp_path / "tool_surface.json"
    fixtures.write_fixture(history(ledger=["demo-live"]), path)
    monkeypatch.setattr(fixtures, "FIXTURE_PATH", path)
    assert check_fixture() == []
    path.write_text('{"ledger": []}')
    [unreadable] = check_fixture()
    assert (unreadable.id, unreadable.level) == ("tools.E011", django_checks.ERROR)
    assert unreadable.msg == checks.E011.format(error="KeyError: 'retired'")


def test_the_fixture_checks_judge_the_registry_without_a_database(tmp_path, monkeypatch, use_registry):
    # No django_db mark: touching the database here would fail the test.
    use_registry(fake_tool("demo-live"), fake_tool("demo-new"))
    path = tmp_path / "tool_surface.json"
    fixtures.write_fixture(history(ledger=["demo-live"]), path)
    monkeypatch.setattr(fixtures, "FIXTURE_PATH", path)
    assert check_fixture() == [error("E001", "demo-new")]
    assert [m.id for m in django_checks.run_checks() if m.id and m.id.startswith("tools.")] == ["tools.E001"]


def test_a_tool_left_out_of_the_fixture_fails_plain_manage_py_check(tmp_path):
    """The real command, in another process, on a database nobody migrated."""
    script = (
        "import sys\n"
        "from tools.definition import define_tool\n"
        "from tools.inputs import ToolInput\n"
        "import tools.registry as registry\n"
        "real = registry.default_tools\n"
        "async def run(arguments, context): return {}\n"
        "extra = define_tool(name='tomtom-brand-new', title='New', description='New.', "
        "input=ToolInput, run=run)\n"
        "registry.default_tools = lambda: [*real(), extra]\n"
        "from django.core.management import execute_from_command_line\n"
        "execute_from_command_line(['manage.py', 'check'])\n"
    )
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "tomtom_mcp.settings",
        "DOTENV_PATH": "/nonexistent",
        "DATABASE_URL": f"sqlite:///{tmp_path / 'never-migrated.sqlite3'}",
    }
    setup = "import django\ndjango.setup()\n"
    done = subprocess.run([sys.executable, "-c", setup + script], cwd=REPO, env=env, capture_output=True, text=True)
    assert done.returncode == 1
    assert (
        "tomtom-brand-new: (tools.E001) Registered, but not in the tool name ledger (committed fixture)." in done.stderr
    )


# --- The lifecycle: deprecations and aliases ----------------------------------------------------

TODAY = date(2027, 1, 10)
LATER = date(2027, 1, 15)
PAIR = registry(fake_tool("demo-live", query=str), fake_tool("demo-next", query=str))


def lifecycle(deprecated=(), aliases=(), retired=(), ledger=("demo-live", "demo-next", "demo-old")) -> Surface:
    return Surface(
        ledger=tuple(LedgerEntry(name, DAY) for name in ledger),
        deprecated=tuple(deprecated),
        aliases=tuple(aliases),
        retired=tuple(Retirement(name, tuple(by), DAY) for name, by in retired),
    )


def test_a_deprecated_tool_with_replacements_and_a_date_passes():
    ok = lifecycle(deprecated=[Deprecation("demo-live", ("demo-next",), DAY, LATER)], retired=[("demo-old", [])])
    assert surface_issues(ok, PAIR, day=TODAY) == []


def test_e012_an_alias_names_a_live_tool():
    ok = lifecycle(aliases=[Alias("demo-old", "demo-next", DAY, (), LATER)])
    assert surface_issues(ok, PAIR, day=TODAY) == []
    missing = lifecycle(aliases=[Alias("demo-old", "demo-gone", DAY, (), LATER)])
    assert surface_issues(missing, PAIR, day=TODAY) == [error("E012", "demo-old", target="demo-gone")]
    to_retired = lifecycle(aliases=[Alias("demo-old", "demo-live", DAY, (), LATER)], retired=[("demo-live", [])])
    assert error("E012", "demo-old", target="demo-live") in surface_issues(to_retired, PAIR, day=TODAY)


def test_e013_a_retire_on_date_that_came_on_a_live_tool_or_an_alias():
    for deprecated, aliases, state in [
        ([Deprecation("demo-live", ("demo-next",), DAY, TODAY)], [], "Deprecated"),
        ([], [Alias("demo-old", "demo-next", DAY, (), TODAY)], "An alias"),
    ]:
        past = lifecycle(deprecated=deprecated, aliases=aliases, retired=[] if aliases else [("demo-old", [])])
        name = "demo-old" if aliases else "demo-live"
        assert surface_issues(past, PAIR, day=TODAY) == [error("E013", name, state=state, retire_on="2027-01-10")]
        assert surface_issues(past, PAIR, day=date(2027, 1, 9)) == []


def test_e014_an_alias_is_not_registered():
    registered = lifecycle(aliases=[Alias("demo-live", "demo-next", DAY, (), LATER)], ledger=("demo-live", "demo-next"))
    assert surface_issues(registered, PAIR, day=TODAY) == [error("E014", "demo-live")]


@pytest.mark.parametrize(
    ("replaced_by", "problem"),
    [
        (("demo-gone",), "demo-gone is not a live tool"),
        (("demo-live",), "demo-live cannot replace itself"),
        (("demo-next", "demo-next"), "names a tool twice"),
    ],
    ids=["missing", "itself", "twice"],
)
def test_e015_a_deprecated_tools_replacements_are_live(replaced_by, problem):
    wrong = lifecycle(deprecated=[Deprecation("demo-live", replaced_by, DAY, LATER)], retired=[("demo-old", [])])
    assert surface_issues(wrong, PAIR, day=TODAY) == [error("E015", "demo-live", problem=problem)]


def test_e016_an_alias_renames_arguments_to_inputs_of_its_target():
    wrong = lifecycle(aliases=[Alias("demo-old", "demo-next", DAY, (("q", "qeury"), ("limit", None)), LATER)])
    assert surface_issues(wrong, PAIR, day=TODAY) == [
        error("E016", "demo-old", problem="qeury (for q) is not an input of demo-next")
    ]


def test_e017_one_state_at_a_time():
    both = lifecycle(
        deprecated=[Deprecation("demo-old", ("demo-next",), DAY, LATER)],
        aliases=[Alias("demo-old", "demo-next", DAY, (), LATER)],
    )
    assert error("E017", "demo-old", states="deprecated and an alias") in surface_issues(both, PAIR, day=TODAY)


def test_w002_w003_a_deprecated_tool_says_what_replaces_it_and_when_it_goes():
    vague = lifecycle(deprecated=[Deprecation("demo-live", (), DAY)], aliases=[Alias("demo-old", "demo-next", DAY)])
    issues = surface_issues(vague, PAIR, day=TODAY)
    assert issues == [
        error("W002", "demo-live"),
        error("W003", "demo-live", state="Deprecated"),
        error("W003", "demo-old", state="An alias"),
    ]
    assert {issue.level for issue in issues} == {django_checks.WARNING}


@pytest.mark.django_db
def test_e112_to_e117_w102_w103_judge_the_tables(consistent_database, use_registry, governance_clock):
    live = sorted(consistent_database.ledger_names - set(consistent_database.retired_by_name))
    DeprecatedTool.objects.create(tool_id=live[0], replaced_by=[], since=DAY)  # written around the services
    ToolName.objects.create(name="demo-old", first_seen=DAY)
    ToolAlias.objects.create(
        tool_id="demo-old", target_id=live[1], arguments={"x": "nope"}, since=DAY, retire_on=date(2027, 1, 1)
    )
    issues = check_tables(databases=["default"])
    assert issues[:5] == [
        error("E016", "demo-old", tables=True, problem=f"nope (for x) is not an input of {live[1]}"),
        error("W002", live[0], tables=True),
        error("E013", "demo-old", tables=True, state="An alias", retire_on="2027-01-01"),
        error("W003", live[0], tables=True, state="Deprecated"),
        django_checks.Warning(
            checks.W001.format(sections="ledger, deprecated tools, aliases"),
            hint=checks.W001_HINT,
            obj=checks.FIXTURE_NAME,
            id="tools.W001",
        ),
    ]


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


def release_for(surface: Surface, *extra):
    """A release registering every live name of `surface` (the real module where one exists,
    so contract changes meet real schemas; a stand-in otherwise), plus `extra`."""
    real = {tool.name: tool for tool in default_tools()}
    live = surface.ledger_names - set(surface.retired_by_name) - set(surface.aliases_by_name)
    return [*(real.get(name) or fake_tool(name) for name in sorted(live)), *extra]


def test_the_committed_history_passes_every_check_once_its_live_tools_exist():
    committed = fixtures.read_fixture()
    assert surface_issues(committed, registry(*release_for(committed))) == []


def test_the_database_checks_skip_when_no_database_is_asked_for():
    # No django_db mark: touching the database here would fail the test.
    assert check_tables(app_configs=None, databases=None) == []


@pytest.mark.django_db(transaction=True)
def test_checks_skip_before_migrations():
    call_command("migrate", "tools", "zero", verbosity=0)
    try:
        assert not selectors.tables_exist()
        assert check_tables(databases=["default"]) == []
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
    assert check_tables(databases=["default"]) == []
    use_registry(*release_for(consistent_database, fake_tool("demo-new")))
    # The fixture lacks it too, so its tools.E001 speaks for both; the tables' own E101 shows
    # only where the fixture is right and the database is not.
    assert check_tables(databases=["default"]) == []
    assert check_fixture() == [error("E001", "demo-new")]


@pytest.mark.django_db
def test_e101_to_e110_report_what_only_the_tables_get_wrong(consistent_database, use_registry):
    live = sorted(consistent_database.ledger_names - set(consistent_database.retired_by_name))
    assert check_tables(databases=["default"]) == []
    RetiredTool.objects.create(tool_id=live[0], replaced_by=[live[1]], since=DAY)  # the kill switch
    issues = check_tables(databases=["default"])
    assert error("E003", live[0], tables=True) in issues
    assert [issue.id for issue in issues][-1] == "tools.W001"


@pytest.mark.django_db
def test_an_unexported_admin_edit_is_a_warning(consistent_database):
    live = sorted(consistent_database.ledger_names - set(consistent_database.retired_by_name))
    ToolName.objects.create(name="demo-old", first_seen=DAY)
    RetiredTool.objects.create(tool_id="demo-old", replaced_by=[live[0]], since=DAY)
    [warning] = check_tables(databases=["default"])
    assert warning.id == "tools.W001"
    assert warning.msg == checks.W001.format(sections="ledger, retired tools")


@pytest.mark.django_db(transaction=True)
def test_check_deploy_fails_on_errors_but_migrate_repairs_the_ledger(consistent_database, use_registry):
    use_registry(*release_for(consistent_database, fake_tool("demo-new")))
    with pytest.raises(SystemCheckError, match=r"demo-new: \(tools\.E001\)"):
        call_command("check", deploy=True, databases=["default"], tags=["tool_surface"])
    call_command("migrate", skip_checks=False, verbosity=0)  # not stopped by tools.E001 ...
    assert ToolName.objects.filter(name="demo-new").exists()  # ... because it fixes it
    assert [m.id for m in check_tables(databases=["default"])] == ["tools.W001"]  # the ledger has demo-new


@pytest.mark.django_db
def test_e100_check_deploy_fails_on_drift(consistent_database):
    call_command("check", deploy=True, databases=["default"], tags=["tool_surface"])  # no drift: passes
    live = sorted(consistent_database.ledger_names - set(consistent_database.retired_by_name))
    ToolName.objects.create(name="demo-old", first_seen=DAY)
    RetiredTool.objects.create(tool_id="demo-old", replaced_by=[live[0]], since=DAY)
    with pytest.raises(
        SystemCheckError, match=r"\(tools\.E100\) The tool-surface tables and .* disagree: ledger, retired"
    ):
        call_command("check", deploy=True, databases=["default"], tags=["tool_surface"])
