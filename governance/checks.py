"""System checks of the tool surface, in two groups. Every id is documented in
docs/governance.md ("System checks"); ids are never reused.

- **Code and fixture** (`check_fixture`, tag `tool_surface`): the registered tools judged
  against the committed fixture, `governance/fixtures/tool_surface.json`. No database: they run on
  every plain `manage.py check` (and so `make lint` and CI). tools.E001-E018, W002, W003; and
  tools.E019, the governance clock (`check_clock`).
- **Database** (`check_tables`, tags `database` and `tool_surface`): the tables judged against
  the registered tools (tools.E101-E118, W102, W103: the same rules as E001-E018, W002, W003,
  each reported only where the fixture does not already report it) and against the fixture
  (tools.W001; under `--deploy`, tools.E100), and tools.E120, a row that does not validate
  (left out of the rules, never a crash). They run with `manage.py check --database
  default`, and skip before `migrate` has created the tables.

The rules about dates judge the history on today's UTC day by the governance clock
(governance.clock).

Both groups pause while `migrate` runs its own pre-flight checks (`surface_checks_paused`):
`migrate` is what creates and seeds the tables. `surface_issues` and `fixture_issues` are
pure, so tests judge any registry and history.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from contextvars import ContextVar
from datetime import date
from pathlib import Path
from typing import Any

from django.core import checks
from django.core.checks import CheckMessage, Error, Tags
from django.db import DEFAULT_DB_ALIAS

from governance import clock, fixtures, rules, selectors
from governance.clock import today
from governance.surface import ChangeKind, Surface
from tools.definition import Tool

FIXTURE_NAME = "governance/fixtures/tool_surface.json"
TABLES_OFFSET = 100
"""A database check's id is its code-and-fixture twin's plus 100 (tools.E001 -> tools.E101)."""

E001 = "Registered, but not in the tool name ledger ({where})."
E001_HINT = (
    f"Add the name to the ledger in {FIXTURE_NAME} (or run `manage.py migrate`, which ledgers it in the "
    "database, then `manage.py export_tool_surface`), review and commit."
)
E002 = "In the tool name ledger ({where}), but neither registered, retired nor an alias."
E002_HINT = (
    "A name that leaves the registry must become a retired tool or an alias: retire it in the admin (then export), "
    f"or add it to `retired` in {FIXTURE_NAME}, naming what replaces it."
)
E003 = "Retired ({where}), but still registered."
E003_HINT = "Remove it from tools.registry.default_tools(), or delete the retirement if the tool should be live."
E004 = "Retired ({where}) in favour of {replacement}, which is not a live tool."
E004_HINT = "Name only registered, unretired tools in `replaced_by`."
E005 = "A contract change ({where}) names this tool, which is not registered."
E005_HINT = "Delete the contract change: a tool that leaves the catalog is retired, not changed."
E006 = "Recorded ({where}) as a removed input, but {problem}."
E006_HINT = "Delete the contract change, or remove the input from the tool module."
E007 = "Recorded ({where}) as a type change, but {problem}."
E007_HINT = (
    "`was` and `now` are JSON Schemas of the old and the new shape; `now` must match the input's current "
    "schema, which must no longer take `was`. Correct or delete the contract change."
)
E008 = "{state} ({where}), but still has contract changes ({inputs})."
E008_HINT = (
    "Retiring a tool or making it an alias deletes its contract changes (the retired-tool answer, or the "
    "alias's target, covers every call): delete them."
)
E009 = "Recorded ({where}) as a renamed input, but {problem}."
E009_HINT = "A rename names the new input in `new_input`; the old name must be gone from the schema, the new one there."
E010 = "Recorded ({where}) as a unit change, but {problem}."
E010_HINT = (
    "A unit change names the input that takes over in `new_input` and the units in `was` and `now` "
    '(e.g. "percent" and "kWh"); the old input must be gone from the schema, the new one there.'
)
E011 = f"{FIXTURE_NAME} cannot be read: {{error}}."
E011_HINT = "Restore the file from version control, or write it again with `manage.py export_tool_surface`."
E012 = "An alias ({where}) of {target}, which is not a live tool."
E012_HINT = "Name a registered tool that is neither retired nor an alias as the target, or retire the alias."
E013 = "{state} ({where}) with the retire-on date {retire_on}, which has come: it is retired on every replica."
E013_HINT = (
    "The tables record the retirement on the first request after the date (or `manage.py apply_tool_surface`): "
    "export it, review and commit, and remove the tool from tools.registry.default_tools(); or, to keep it, "
    "move the date (`manage.py schedule_retirement`) or cancel it (`manage.py cancel_retirement`)."
)
E014 = "An alias ({where}), but still registered."
E014_HINT = (
    "Calls to the name reach the alias's target, never this code: remove it from tools.registry.default_tools(), "
    "or end the alias if the tool should be live."
)
E015 = "Deprecated ({where}) in favour of {problem}."
E015_HINT = "Name only registered tools that are neither retired nor aliases, each once, in `replaced_by`."
E016 = "An alias ({where}) that renames an argument, but {problem}."
E016_HINT = "Map each old argument to an input of the target (or to null, to leave it out)."
E017 = "In more than one lifecycle state ({where}): {states}."
E017_HINT = "A name is deprecated, an alias or retired, one at a time: keep the latest state only."
E018 = (
    "{state} ({where}) in favour of {replacement}, which is app-only: only widgets call it, and the callers "
    "of this tool are never listed it."
)
E018_HINT = "Name a live tool a model is listed; an app-only tool replaces only an app-only tool."
E019 = "The governance clock cannot say what time it is: {problem}."
E019_HINT = (
    "Name a function returning an aware datetime (e.g. `datetime.now(UTC)`), or unset GOVERNANCE_CLOCK for the "
    "system clock. Meanwhile retire-on dates are judged by the system clock."
)
E120 = "A row of the {table} table ({where}) does not validate and is left out of the rules: {problem}."
E120_HINT = (
    "It was written around the services (e.g. by SQL): correct it in the admin, or delete it and record it again "
    "with the admin or a management command, which refuse what does not validate."
)
W002 = "Deprecated ({where}) with no replacement: callers are told to stop, not what to call instead."
W002_HINT = "Name the tools that replace it in `replaced_by`, in the order a caller should try them."
W003 = "{state} ({where}) with no retire-on date: it is never retired."
W003_HINT = "Set the day it is retired (`manage.py schedule_retirement`, or the admin), so callers know when to move."
E100 = f"The tool-surface tables and {FIXTURE_NAME} disagree: {{sections}}."
E100_HINT = (
    "A deploy must not leave the database and the committed history apart: run `manage.py apply_tool_surface` "
    "to bring the database to the fixture, or export an admin edit, review and commit it first."
)
W001 = f"The tool-surface tables and {FIXTURE_NAME} disagree: {{sections}}."
W001_HINT = (
    "After an admin edit: `manage.py export_tool_surface`, review the diff and commit it. After a merged change "
    "to the fixture: `manage.py apply_tool_surface`."
)

IN_FIXTURE = "committed fixture"
IN_TABLES = "database"

_WARNINGS = frozenset({"W002", "W003"})
"""The rules reported as warnings (tools.W0xx; the tables' twins are tools.W1xx)."""

_CHANGE_CODES = {
    ChangeKind.REMOVED: "E006",
    ChangeKind.TYPE_CHANGED: "E007",
    ChangeKind.RENAMED: "E009",
    ChangeKind.UNIT_CHANGED: "E010",
}

_paused: ContextVar[bool] = ContextVar("surface_checks_paused", default=False)


@contextlib.contextmanager
def surface_checks_paused() -> Iterator[None]:
    """Run system checks without the tool-surface checks (used by `migrate`)."""
    token = _paused.set(True)
    try:
        yield
    finally:
        _paused.reset(token)


def _issue(code: str, obj: str, offset: int, where: str, **values: str) -> CheckMessage:
    message: str = globals()[code].format(where=where, **values)
    number = int(code[1:]) + offset
    level = checks.Warning if code in _WARNINGS else Error
    return level(message, hint=globals()[f"{code}_HINT"], obj=obj, id=f"tools.{code[0]}{number:03d}")


def _as_in_fixture(issue: CheckMessage) -> tuple[str, Any]:
    """A tables issue (tools.E1NN, W1NN) as the id and object the same rule reports on the fixture."""
    letter, number = str(issue.id)[-4], int(str(issue.id)[-3:]) - TABLES_OFFSET  # every surface issue has an id
    return f"tools.{letter}{number:03d}", issue.obj


def surface_issues(
    surface: Surface, registry: Mapping[str, Tool], *, in_tables: bool = False, day: date | None = None
) -> list[CheckMessage]:
    """The rules (tools.E001-E018, W002, W003, or E101-E118, W102, W103 for the tables) over
    one history and a registry, on the UTC day `day` (default: today by the governance clock)."""
    offset, where = (TABLES_OFFSET, IN_TABLES) if in_tables else (0, IN_FIXTURE)
    day = day or today()
    ledger = surface.ledger_names
    retired = surface.retired_by_name
    aliases = surface.aliases_by_name
    gone = {*retired, *aliases}
    issues: list[CheckMessage] = []
    for name in sorted(set(registry) - ledger):
        issues.append(_issue("E001", name, offset, where))
    for name in sorted(ledger - set(registry) - gone):
        issues.append(_issue("E002", name, offset, where))
    for name in sorted(set(registry) & set(retired)):
        issues.append(_issue("E003", name, offset, where))
    for retirement in surface.retired:
        for replacement in retirement.replaced_by:
            if not rules.is_live(replacement, registry, gone):
                issues.append(_issue("E004", retirement.name, offset, where, replacement=replacement))
    issues += _lifecycle_issues(surface, registry, gone, offset, where, day)
    issues += _app_only_issues(surface, registry, offset, where)
    for tool, changes in surface.changes_by_tool.items():
        if tool in gone:
            inputs = ", ".join(change.input for change in changes)
            state = "Retired" if tool in retired else "An alias"
            issues.append(_issue("E008", tool, offset, where, state=state, inputs=inputs))
        elif tool not in registry:
            issues.append(_issue("E005", tool, offset, where))
        else:
            for change in changes:
                problem = rules.input_problem(registry[tool], change)
                if problem is not None:
                    code = _CHANGE_CODES[change.kind]
                    issues.append(_issue(code, f"{tool}.{change.input}", offset, where, problem=problem))
    return issues


def _lifecycle_issues(
    surface: Surface, registry: Mapping[str, Tool], gone: set[str], offset: int, where: str, day: date
) -> list[CheckMessage]:
    """The deprecations' and aliases' rules: tools.E012-E017, W002, W003."""
    issues: list[CheckMessage] = []
    states: dict[str, list[str]] = {}
    for label, rows in (
        ("deprecated", surface.deprecated),
        ("an alias", surface.aliases),
        ("retired", surface.retired),
    ):
        for row in rows:
            states.setdefault(row.name, []).append(label)
    for name, labels in sorted(states.items()):
        if len(labels) > 1:
            issues.append(_issue("E017", name, offset, where, states=" and ".join(labels)))
    for alias in surface.aliases:
        problems = rules.alias_problems(alias, registry, gone - {alias.name})
        if alias.target == alias.name or not rules.is_live(alias.target, registry, gone - {alias.name}):
            issues.append(_issue("E012", alias.name, offset, where, target=alias.target))
        else:
            issues += [_issue("E016", alias.name, offset, where, problem=problem) for problem in problems]
        if alias.name in registry:
            issues.append(_issue("E014", alias.name, offset, where))
    for deprecation in surface.deprecated:
        for problem in rules.replacement_problems(deprecation.name, deprecation.replaced_by, registry, gone):
            issues.append(_issue("E015", deprecation.name, offset, where, problem=problem))
        if not deprecation.replaced_by:
            issues.append(_issue("W002", deprecation.name, offset, where))
    for scheduled in surface.scheduled:
        state = "Deprecated" if scheduled.name in surface.deprecated_by_name else "An alias"
        if scheduled.retire_on is None:
            issues.append(_issue("W003", scheduled.name, offset, where, state=state))
        elif scheduled.retire_on <= day:
            issues.append(
                _issue("E013", scheduled.name, offset, where, state=state, retire_on=scheduled.retire_on.isoformat())
            )
    return issues


def _app_only_issues(surface: Surface, registry: Mapping[str, Tool], offset: int, where: str) -> list[CheckMessage]:
    """tools.E018: a registered tool a model is listed, replaced by (or aliased to) an app-only
    tool. A name no longer registered is history: whether it was app-only is not in the code."""
    named: list[tuple[str, str, tuple[str, ...]]] = [
        *(("Deprecated", row.name, row.replaced_by) for row in surface.deprecated),
        *(("An alias", row.name, (row.target,)) for row in surface.aliases),
        *(("Retired", row.name, row.replaced_by) for row in surface.retired),
    ]
    issues = []
    for state, name, replacements in named:
        tool = registry.get(name)
        if tool is None or tool.app_only:
            continue
        for replacement in replacements:
            candidate = registry.get(replacement)
            if candidate is not None and candidate.app_only:
                issues.append(_issue("E018", name, offset, where, state=state, replacement=replacement))
    return issues


def differing_sections(surface: Surface, committed: Surface) -> list[str]:
    return [
        label
        for label, ours, theirs in (
            ("ledger", surface.ledger, committed.ledger),
            ("deprecated tools", surface.deprecated, committed.deprecated),
            ("aliases", surface.aliases, committed.aliases),
            ("retired tools", surface.retired, committed.retired),
            ("contract changes", surface.changes, committed.changes),
        )
        if ours != theirs
    ]


def fixture_issues(surface: Surface, path: Path, *, deploy: bool = False) -> list[CheckMessage]:
    """tools.W001 (tools.E100 for a deploy): the database and the committed fixture tell the
    same history. An unreadable fixture is tools.E011's, reported by the fixture group."""
    try:
        committed = fixtures.read_fixture(path)
    except (OSError, ValueError, KeyError, TypeError):
        return []
    differing = differing_sections(surface, committed)
    if not differing:
        return []
    sections = ", ".join(differing)
    if deploy:
        return [Error(E100.format(sections=sections), hint=E100_HINT, obj=FIXTURE_NAME, id="tools.E100")]
    return [checks.Warning(W001.format(sections=sections), hint=W001_HINT, obj=FIXTURE_NAME, id="tools.W001")]


def _skipped(app_configs: Any) -> bool:
    if _paused.get():
        return True
    return app_configs is not None and not any(config.label == "tools" for config in app_configs)


def _committed() -> tuple[Surface | None, list[CheckMessage]]:
    try:
        return fixtures.read_fixture(fixtures.FIXTURE_PATH), []
    except (OSError, ValueError, KeyError, TypeError) as exc:
        error = Error(
            E011.format(error=f"{type(exc).__name__}: {exc}"), hint=E011_HINT, obj=FIXTURE_NAME, id="tools.E011"
        )
        return None, [error]


@checks.register("tool_surface")
def check_fixture(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    """Code and fixture (no database): tools.E001-E018, W002, W003."""
    if _skipped(app_configs):
        return []
    committed, unreadable = _committed()
    if committed is None:
        return unreadable
    return surface_issues(committed, selectors.registered_tools())


@checks.register("tool_surface")
def check_clock(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    """No database: tools.E019, the governance clock answers with an aware datetime."""
    if _skipped(app_configs):
        return []
    problem = clock.problem()
    if problem is None:
        return []
    return [Error(E019.format(problem=problem), hint=E019_HINT, obj="GOVERNANCE_CLOCK", id="tools.E019")]


def skipped_issues(surface: Surface) -> list[CheckMessage]:
    """tools.E120: each table row the reading left out because it does not validate."""
    return [
        Error(
            E120.format(table=row.table, where=IN_TABLES, problem=row.problem),
            hint=E120_HINT,
            obj=row.name or row.table,
            id="tools.E120",
        )
        for row in surface.skipped
    ]


def _table_checks(app_configs: Any, databases: Any, *, deploy: bool) -> list[CheckMessage]:
    if _skipped(app_configs) or not databases or DEFAULT_DB_ALIAS not in databases:
        return []
    if not selectors.tables_exist(DEFAULT_DB_ALIAS):
        return []
    surface, registry = selectors.tool_surface(), selectors.registered_tools()
    if deploy:
        return fixture_issues(surface, fixtures.FIXTURE_PATH, deploy=True)
    committed, _ = _committed()
    reported = set()
    if committed is not None:
        reported = {(issue.id, issue.obj) for issue in surface_issues(committed, registry)}
    own = [
        issue for issue in surface_issues(surface, registry, in_tables=True) if _as_in_fixture(issue) not in reported
    ]
    return [*skipped_issues(surface), *own, *fixture_issues(surface, fixtures.FIXTURE_PATH)]


@checks.register(Tags.database, "tool_surface")
def check_tables(app_configs: Any = None, databases: Any = None, **kwargs: Any) -> list[CheckMessage]:
    """Database: tools.E101-E118, E120, W102, W103 and tools.W001."""
    return _table_checks(app_configs, databases, deploy=False)


@checks.register(Tags.database, "tool_surface", deploy=True)
def check_tables_for_deploy(app_configs: Any = None, databases: Any = None, **kwargs: Any) -> list[CheckMessage]:
    """Database, `check --deploy` only: tools.E100."""
    return _table_checks(app_configs, databases, deploy=True)
