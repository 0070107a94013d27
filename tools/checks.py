"""System checks of the tool surface: the registered tools, the three tables and the fixture.

Every id is documented in docs/governance.md ("System checks"). The checks read the database,
so they are tagged `database` (and `tool_surface`): `manage.py check --database default` runs
them, `check --deploy --database default` fails on their errors, and plain `check` skips them.
They also skip before `migrate` has created the tables, and while `migrate` runs its own
pre-flight checks (`surface_checks_paused`): migrate is what adds new tool names to the ledger.

`surface_issues` and `fixture_issues` are pure, so tests judge any registry and history.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from contextvars import ContextVar
from pathlib import Path
from typing import Any

from django.core import checks
from django.core.checks import CheckMessage, Error, Tags
from django.db import DEFAULT_DB_ALIAS

from tools.definition import Tool
from tools.governance import fixtures, rules, selectors
from tools.governance.surface import ChangeKind, Surface

FIXTURE_NAME = "tools/fixtures/tool_surface.json"

E001 = "Registered, but not in the tool name ledger."
E001_HINT = "Run `manage.py migrate` (it adds registered names), then `manage.py export_tool_surface` and commit."
E002 = "In the tool name ledger, but neither registered nor retired."
E002_HINT = (
    "A name that leaves the catalog must become a retired tool: retire it in the admin, naming what replaces it."
)
E003 = "Retired, but still registered."
E003_HINT = "Remove it from tools.registry.default_tools(), or delete the retirement if the tool should be live."
E004 = "Retired in favour of {replacement}, which is not a live tool."
E004_HINT = "Name only registered, unretired tools in `replaced_by`."
E005 = "A contract change names this tool, which is not registered."
E005_HINT = "Delete the contract change: a tool that leaves the catalog is retired, not changed."
E006 = "Recorded as a removed input, but still in the tool's input schema."
E006_HINT = "Delete the contract change, or remove the input from the tool module."
E007 = "Recorded as string-now-list, but the tool's input schema does not take a list."
E007_HINT = "Delete or correct the contract change, or make the input an array in the tool module."
E008 = "Retired, but still has contract changes ({inputs})."
E008_HINT = "Retiring a tool deletes its contract changes (the retired-tool answer covers every call): delete them."
W001 = f"The tool-surface tables and {FIXTURE_NAME} disagree: {{sections}}."
W001_HINT = "Run `manage.py export_tool_surface`, review the diff and commit it (or revert the admin edit)."

_paused: ContextVar[bool] = ContextVar("surface_checks_paused", default=False)


@contextlib.contextmanager
def surface_checks_paused() -> Iterator[None]:
    """Run system checks without the tool-surface checks (used by `migrate`)."""
    token = _paused.set(True)
    try:
        yield
    finally:
        _paused.reset(token)


def surface_issues(surface: Surface, registry: Mapping[str, Tool]) -> list[CheckMessage]:
    """tools.E001-E008: the registry and the history, judged together."""
    ledger = surface.ledger_names
    retired = surface.retired_by_name
    issues: list[CheckMessage] = []
    for name in sorted(set(registry) - ledger):
        issues.append(Error(E001, hint=E001_HINT, obj=name, id="tools.E001"))
    for name in sorted(ledger - set(registry) - set(retired)):
        issues.append(Error(E002, hint=E002_HINT, obj=name, id="tools.E002"))
    for name in sorted(set(registry) & set(retired)):
        issues.append(Error(E003, hint=E003_HINT, obj=name, id="tools.E003"))
    for retirement in surface.retired:
        for replacement in retirement.replaced_by:
            if not rules.is_live(replacement, registry, retired):
                message = E004.format(replacement=replacement)
                issues.append(Error(message, hint=E004_HINT, obj=retirement.name, id="tools.E004"))
    for tool, changes in surface.changes_by_tool.items():
        if tool in retired:
            inputs = ", ".join(change.input for change in changes)
            issues.append(Error(E008.format(inputs=inputs), hint=E008_HINT, obj=tool, id="tools.E008"))
        elif tool not in registry:
            issues.append(Error(E005, hint=E005_HINT, obj=tool, id="tools.E005"))
        else:
            for change in changes:
                if rules.input_problem(registry[tool], change.input, change.kind) is None:
                    continue
                obj = f"{tool}.{change.input}"
                if change.kind is ChangeKind.REMOVED:
                    issues.append(Error(E006, hint=E006_HINT, obj=obj, id="tools.E006"))
                else:
                    issues.append(Error(E007, hint=E007_HINT, obj=obj, id="tools.E007"))
    return issues


def fixture_issues(surface: Surface, path: Path) -> list[CheckMessage]:
    """tools.W001: the database and the committed fixture tell the same history."""
    try:
        committed = fixtures.read_fixture(path)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        sections = f"the fixture cannot be read ({type(exc).__name__}: {exc})"
    else:
        differing = [
            label
            for label, ours, theirs in (
                ("ledger", surface.ledger, committed.ledger),
                ("retired tools", surface.retired, committed.retired),
                ("contract changes", surface.changes, committed.changes),
            )
            if ours != theirs
        ]
        if not differing:
            return []
        sections = ", ".join(differing)
    return [checks.Warning(W001.format(sections=sections), hint=W001_HINT, obj=FIXTURE_NAME, id="tools.W001")]


@checks.register(Tags.database, "tool_surface")
def check_tool_surface(app_configs: Any = None, databases: Any = None, **kwargs: Any) -> list[CheckMessage]:
    if _paused.get() or not databases or DEFAULT_DB_ALIAS not in databases:
        return []
    if app_configs is not None and not any(config.label == "tools" for config in app_configs):
        return []
    if not selectors.tables_exist(DEFAULT_DB_ALIAS):
        return []
    surface = selectors.tool_surface()
    return [
        *surface_issues(surface, selectors.registered_tools()),
        *fixture_issues(surface, fixtures.FIXTURE_PATH),
    ]
