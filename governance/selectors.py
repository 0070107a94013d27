"""Reads of the tool surface: the registered tools and the tables.

`registered_tools` is the one place governance asks which tools this release registers; tests
replace it to judge a registry of their own.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Literal

from django.core.exceptions import ValidationError
from django.db import connections
from django.db.models import Model, QuerySet

from governance.clock import today
from governance.models import ContractChange, DeprecatedTool, GovernanceEvent, RetiredTool, ToolAlias, ToolName
from governance.surface import LedgerEntry, Retirement, SkippedRow, Surface
from tools.definition import Tool

Status = Literal["live", "deprecated", "alias", "retired", "dropped"]
"""A ledger name's status today: `live` (registered, in no other state), `deprecated` (live,
listed with a notice), `alias` (its calls reach another tool), `retired` (also a deprecation or
alias whose retire-on date has come, before a replica records it), or `dropped` (none of these
and not registered: the release lost it without saying what replaces it, check tools.E002). A
retired or aliased name that is still registered (tools.E003, tools.E014) is `retired` or
`alias`: its calls never reach its own code."""

TABLES: tuple[type[Model], ...] = (ToolName, DeprecatedTool, ToolAlias, RetiredTool, ContractChange)


def registered_tools() -> dict[str, Tool]:
    """Every tool this release registers (`tools.registry.default_tools()`), by name."""
    from tools.registry import default_tools

    return {tool.name: tool for tool in default_tools()}


def tables_exist(using: str = "default") -> bool:
    """Whether `migrate` has created the tool-surface tables on this database."""
    existing = set(connections[using].introspection.table_names())
    return all(model._meta.db_table in existing for model in TABLES)


def tool_surface() -> Surface:
    """The tables as one `Surface` (five queries). A row that does not validate (written
    around the services, e.g. by SQL) is left out and named in `Surface.skipped`: one bad row
    never takes the rest of the rules, the listing or readiness down (check tools.E120)."""
    skipped: list[SkippedRow] = []
    return Surface(
        deprecated=tuple(_valid(DeprecatedTool, DeprecatedTool.as_deprecation, skipped)),
        aliases=tuple(_valid(ToolAlias, ToolAlias.as_alias, skipped)),
        ledger=tuple(
            LedgerEntry(name=row.name, first_seen=row.first_seen, first_release=row.first_release, note=row.note)
            for row in ToolName.objects.all()
        ),
        retired=tuple(_valid(RetiredTool, _retirement, skipped)),
        changes=tuple(_valid(ContractChange, ContractChange.as_change, skipped)),
        skipped=tuple(skipped),
    )


def _retirement(row: RetiredTool) -> Retirement:
    return Retirement(
        name=row.name, replaced_by=tuple(row.replaced_by), since=row.since, release=row.release, message=row.message
    )


def _valid[M: Model, R](model: type[M], convert: Callable[[M], R], skipped: list[SkippedRow]) -> Iterator[R]:
    """Each row of `model` that validates (its `clean()`, then `convert`), as a record; each
    one that does not is added to `skipped` with what is wrong with it."""
    for row in model._default_manager.all():
        try:
            if model is not ContractChange:  # a contract change's own rules are tools.E106-E110's
                row.clean()
            record = convert(row)
        except ValidationError as exc:
            problem = "; ".join(message.rstrip(".") for message in exc.messages)
        except (TypeError, ValueError, AttributeError, KeyError) as exc:
            problem = f"{type(exc).__name__}: {exc}"
        else:
            yield record
            continue
        skipped.append(SkippedRow(str(model._meta.verbose_name), _row_name(row), problem))


def _row_name(row: Model) -> str:
    """The tool name a row is about (its `tool` column)."""
    return str(getattr(row, "tool_id", "") or "")


def ledger_statuses() -> dict[str, Status]:
    """Every ledger name's status today, in ledger order (four queries)."""
    registered, day = registered_tools(), today()
    retired = set(RetiredTool.objects.values_list("tool_id", flat=True))
    retired |= set(DeprecatedTool.objects.filter(retire_on__lte=day).values_list("tool_id", flat=True))
    retired |= set(ToolAlias.objects.filter(retire_on__lte=day).values_list("tool_id", flat=True))
    deprecated = set(DeprecatedTool.objects.values_list("tool_id", flat=True))
    aliases = set(ToolAlias.objects.values_list("tool_id", flat=True))

    def status(name: str) -> Status:
        if name in retired:
            return "retired"
        if name in aliases:
            return "alias"
        if name not in registered:
            return "dropped"
        return "deprecated" if name in deprecated else "live"

    return {name: status(name) for name in ToolName.objects.values_list("name", flat=True)}


def gone_names() -> set[str]:
    """The names no call reaches the code of: retired, or aliases (two queries)."""
    return {row.name for model in (RetiredTool, ToolAlias) for row in model.objects.only("tool")}


def live_tools() -> list[str]:
    """The names a retirement, a deprecation or an alias may name as replacements: registered,
    not retired and not an alias, sorted."""
    gone = gone_names()
    return sorted(name for name in registered_tools() if name not in gone)


def tool_names_for_tenants() -> dict[str, str | None]:
    """Every tool name this server knows, each with why a tenant's allow-list cannot name it
    (None: it may). Tenants may be allowed the live tools (deprecated ones included); a retired
    name, an alias or a dropped name answers no call of its own. Read by the tenants' admin
    through the `TENANT_TOOL_NAMES` setting (the apps do not import each other)."""
    statuses = ledger_statuses()
    aliases = {row.name: row.target_id for row in ToolAlias.objects.all()}
    retirements = {row.name: list(row.replaced_by) for row in RetiredTool.objects.all()}
    names: dict[str, str | None] = {name: None for name in registered_tools()}
    for name, status in statuses.items():
        if status == "alias":
            names[name] = f"an old name of {aliases[name]}: allow {aliases[name]}"
        elif status == "retired":
            replaced_by = retirements.get(name) or []
            names[name] = "retired" + (f": allow {' or '.join(replaced_by)}" if replaced_by else "")
        elif status == "dropped":
            names[name] = "no longer offered"
    return names


def tool_statuses() -> dict[str, str]:
    """Every tool name this server knows with its state on the tool surface: the ledger's
    (`Status`), and `app-only` for a live tool only widgets call (a model is never listed it, so
    it neither replaces nor is suggested for a model's call); a registered tool the ledger does
    not have yet is `live` (or `app-only`). Read by the analytics' evidence pages through the
    `TOOL_STATUSES` setting (the apps do not import each other)."""
    registered = registered_tools()
    statuses: dict[str, str] = {name: "live" for name in registered}
    statuses.update(ledger_statuses())
    for name, tool in registered.items():
        if tool.app_only and statuses[name] in ("live", "deprecated"):
            statuses[name] = "app-only"
    return statuses


def tool_history(name: str) -> QuerySet[GovernanceEvent]:
    """Every governance change to `name`, oldest first."""
    return GovernanceEvent.objects.filter(tool=name).order_by("time", "pk")
