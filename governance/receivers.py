"""Signal receivers, connected in `GovernanceConfig.ready()`.

- `ledger_registered_tools` (post_migrate): a new database (an empty ledger) is seeded from the
  committed fixture, with the current schema; then every registered tool name missing from the
  ledger is added, so a development database works before the fixture lists a new tool (the
  system check tools.E001 still asks for its fixture row).
- `refuse_ledger_delete` (pre_delete): the last guard of the append-only ledger, for deletes
  that bypass `ToolName.delete()` and its queryset (a plain manager, a cascade).
"""

from __future__ import annotations

from typing import Any

from django.apps import apps as global_apps
from django.apps.registry import Apps
from django.db import DEFAULT_DB_ALIAS

from core.version import version
from governance.models import LEDGER_IS_APPEND_ONLY, AppendOnlyError, ToolName

ADDED_BY_MIGRATE = "Added to the ledger by migrate: first registered in this release."


def ledger_registered_tools(
    sender: Any, *, using: str = DEFAULT_DB_ALIAS, apps: Apps = global_apps, **kwargs: Any
) -> None:
    """post_migrate (and `flush`, which sends no `apps`): ledger every registered name."""
    if using != DEFAULT_DB_ALIAS:
        return
    try:
        apps.get_model("tools", "ToolName")
        apps.get_model("tools", "GovernanceEvent")  # each addition is recorded in the history
        apps.get_model("tools", "ToolAlias")  # the seed fills every lifecycle table
    except LookupError:  # migrated back below the tables: nothing to add to
        return
    from governance import fixtures, selectors, services
    from governance.models import ContractChange, DeprecatedTool, RetiredTool, ToolAlias

    fixtures.seed_if_empty(
        ledger=ToolName, retired=RetiredTool, changes=ContractChange, deprecated=DeprecatedTool, aliases=ToolAlias
    )

    for name in selectors.registered_tools():
        services.ledger_add(name=name, first_release=version(), note=ADDED_BY_MIGRATE, via="migrate")


def refuse_ledger_delete(sender: type[ToolName], instance: ToolName, **kwargs: Any) -> None:
    raise AppendOnlyError(LEDGER_IS_APPEND_ONLY.format(name=instance.name))
