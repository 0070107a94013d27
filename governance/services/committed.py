"""The committed history's writes (`governance.fixtures`): a record of the fixture file put in
its table, or a row the file no longer has taken out.

The file is history, checked as a whole before it is applied (the system checks), not an edit
made today: the lifecycle services' rules (a retire-on date is a later day, a replacement is
live in this release) would refuse what it tells, and their cascades would add to it. So its
records are written as they stand, each recorded in the governance history (`audited`); seeding
a new database records nothing, the file it comes from being that history.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.db import models, transaction

from governance.models import ContractChange, DeprecatedTool, RetiredTool, ToolAlias, ToolName
from governance.services.history import Actor, Committed, audited
from governance.surface import Alias, Deprecation, InputChange, LedgerEntry, Retirement, Surface

TABLES: dict[type[Committed], type[models.Model]] = {
    LedgerEntry: ToolName,
    Deprecation: DeprecatedTool,
    Alias: ToolAlias,
    Retirement: RetiredTool,
    InputChange: ContractChange,
}
"""The table each kind of committed record is written to."""


def committed_record_put(
    *, record: Committed, stored: Committed | None, headline: str, by: Actor = None, via: str = "code"
) -> None:
    """Write `record` to its table by its key, over `stored` (what the table held, as a record;
    None: nothing), and record the change."""
    with audited(by=by, via=via) as audit, audit.recorded(headline, before=stored, after=record):
        _put(TABLES[type(record)], record)


def committed_record_delete(*, record: Committed, headline: str, by: Actor = None, via: str = "code") -> None:
    """Delete the row `record` stands for (never a ledger row: the ledger only grows), recorded."""
    with audited(by=by, via=via) as audit, audit.recorded(headline, before=record, after=None):
        key = (
            {"tool__name": record.tool, "input": record.input}
            if isinstance(record, InputChange)
            else {"tool__name": record.name}
        )
        TABLES[type(record)]._default_manager.filter(**key).delete()


def committed_history_seed(*, surface: Surface, tables: Mapping[type[Committed], Any] | None = None) -> None:
    """Write every record of `surface` to its table, recording nothing: a new database starts
    from the committed history. `tables` replaces the model of a kind of record (a migration
    writes through its historical models)."""
    models_by_kind = {**TABLES, **(tables or {})}
    with transaction.atomic():
        records: tuple[Committed, ...] = (
            *surface.ledger,
            *surface.deprecated,
            *surface.aliases,
            *surface.retired,
            *surface.changes,
        )
        for record in records:
            _put(models_by_kind[type(record)], record)


def _put(model: Any, record: Committed) -> None:
    """update_or_create the row of `record` (a model class, maybe a migration's)."""
    match record:
        case LedgerEntry():
            model.objects.update_or_create(
                name=record.name,
                defaults={"first_seen": record.first_seen, "first_release": record.first_release, "note": record.note},
            )
        case Deprecation():
            model.objects.update_or_create(
                tool_id=record.name,
                defaults={
                    "replaced_by": list(record.replaced_by),
                    "since": record.since,
                    "retire_on": record.retire_on,
                    "reason": record.reason,
                },
            )
        case Alias():
            model.objects.update_or_create(
                tool_id=record.name,
                defaults={
                    "target_id": record.target,
                    "arguments": dict(record.arguments),
                    "since": record.since,
                    "retire_on": record.retire_on,
                    "reason": record.reason,
                },
            )
        case Retirement():
            model.objects.update_or_create(
                tool_id=record.name,
                defaults={
                    "replaced_by": list(record.replaced_by),
                    "since": record.since,
                    "release": record.release,
                    "message": record.message,
                },
            )
        case InputChange():
            model.objects.update_or_create(
                tool_id=record.tool,
                input=record.input,
                defaults={
                    "kind": record.kind.value,
                    "since": record.since,
                    "instead": record.instead,
                    "new_input": record.new_input,
                    "was": record.was,
                    "now": record.now,
                },
            )
