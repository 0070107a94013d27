"""Reads of the tool surface: the registered tools and the three tables.

`registered_tools` is the one place governance asks which tools this release registers; tests
replace it to judge a registry of their own.
"""

from __future__ import annotations

from django.db import connections
from django.db.models import Model

from tools.definition import Tool
from tools.governance.surface import LedgerEntry, Retirement, Surface
from tools.models import ContractChange, RetiredTool, ToolName

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
