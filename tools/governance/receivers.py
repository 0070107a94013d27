"""Signal receivers, connected in `ToolsConfig.ready()`.

- `ledger_registered_tools` (post_migrate): every registered tool name missing from the ledger
  is added, so a new tool needs no hand-written ledger row; `export_tool_surface` then writes it
  into the fixture for review.
- `refuse_ledger_delete` (pre_delete): the last guard of the append-only ledger, for deletes
  that bypass `ToolName.delete()` and its queryset (a plain manager, a cascade).
"""

from __future__ import annotations

from typing import Any

from django.apps import apps as global_apps
from django.apps.registry import Apps
from django.db import DEFAULT_DB_ALIAS

from tomtom_mcp import version
from tools.models import LEDGER_IS_APPEND_ONLY, AppendOnlyError, ToolName

ADDED_BY_MIGRATE = "Added to the ledger by migrate: first registered in this release."


def ledger_registered_tools(
    sender: Any, *, using: str = DEFAULT_DB_ALIAS, apps: Apps = global_apps, **kwargs: Any
) -> None:
    """post_migrate (and `flush`, which sends no `apps`): ledger every registered name."""
    if using != DEFAULT_DB_ALIAS:
        return
    try:
        apps.get_model("tools", "ToolName")
    except LookupError:  # migrated back below the tables: nothing to add to
        return
    from tools.governance import selectors, services

    for name in selectors.registered_tools():
        services.ledger_add(name=name, first_release=version(), note=ADDED_BY_MIGRATE)


def refuse_ledger_delete(sender: type[ToolName], instance: ToolName, **kwargs: Any) -> None:
    raise AppendOnlyError(LEDGER_IS_APPEND_ONLY.format(name=instance.name))
