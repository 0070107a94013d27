"""Reads of the tool surface: the registered tools and the three tables.

`registered_tools` is the one place governance asks which tools this release registers; tests
replace it to judge a registry of their own.
"""

from __future__ import annotations

from typing import Literal

from django.db import connections
from django.db.models import Model, QuerySet

from tools.definition import Tool
from tools.governance.surface import LedgerEntry, Retirement, Surface
from tools.models import ContractChange, GovernanceEvent, RetiredTool, ToolName

Status = Literal["live", "retired", "dropped"]
"""A ledger name's status: `live` (registered, not retired), `retired`, or `dropped` (neither
registered nor retired: the release lost it without saying what replaces it, check tools.E002).
A retired name that is still registered (tools.E003) is `retired`: it is neither listed nor
callable."""

TABLES: tuple[type[Model], ...] = (ToolName, RetiredTool, ContractChange)


def registered_tools() -> dict[str, Tool]:
    """Every tool this release registers (`tools.registry.default_tools()`), by name."""
    from tools.registry import default_tools

    return {tool.name: tool for tool in default_tools()}


def tables_exist(using: str = "default") -> bool:
    """Whether `migrate` has created the three tables on this database."""
    existing = set(connections[using].introspection.table_names())
    return all(model._meta.db_table in existing for model in TABLES)


def tool_surface() -> Surface:
    """The three tables as one `Surface` (three queries)."""
    return Surface(
        ledger=tuple(
            LedgerEntry(name=row.name, first_seen=row.first_seen, first_release=row.first_release, note=row.note)
            for row in ToolName.objects.all()
        ),
        retired=tuple(
            Retirement(
                name=row.name,
                replaced_by=tuple(row.replaced_by),
                since=row.since,
                release=row.release,
                message=row.message,
            )
            for row in RetiredTool.objects.all()
        ),
        changes=tuple(row.as_change() for row in ContractChange.objects.all()),
    )


def ledger_statuses() -> dict[str, Status]:
    """Every ledger name's status, in ledger order (two queries)."""
    registered = registered_tools()
    retired = set(RetiredTool.objects.values_list("tool_id", flat=True))
    return {
        name: "retired" if name in retired else "live" if name in registered else "dropped"
        for name in ToolName.objects.values_list("name", flat=True)
    }


def live_tools() -> list[str]:
    """The names a retirement may name as replacements: registered and not retired, sorted."""
    retired = set(RetiredTool.objects.values_list("tool_id", flat=True))
    return sorted(name for name in registered_tools() if name not in retired)


def tool_history(name: str) -> QuerySet[GovernanceEvent]:
    """Every governance change to `name`, oldest first."""
    return GovernanceEvent.objects.filter(tool=name).order_by("time", "pk")
