"""The tool name ledger's writes: it only grows (a name is added, never changed or removed)."""

from __future__ import annotations

from datetime import date

from governance.clock import today
from governance.models import ToolName
from governance.services.history import LEDGER_FIELDS, Actor, audited


def ledger_add(
    *,
    name: str,
    first_seen: date | None = None,
    first_release: str = "",
    note: str = "",
    by: Actor = None,
    via: str = "code",
) -> ToolName:
    """Add `name` to the ledger, or return its row unchanged when it is already there."""
    with audited(by=by, via=via) as audit:
        existing = ToolName.objects.filter(name=name).first()
        if existing is not None:
            return existing
        entry = ToolName(name=name, first_seen=first_seen or today(), first_release=first_release, note=note)
        audit.save(entry, f"Added {name} to the tool name ledger")
        return entry


def ledger_update(
    *,
    entry: ToolName,
    first_seen: date,
    first_release: str,
    note: str,
    by: Actor = None,
    via: str = "code",
) -> ToolName:
    """Correct a ledger row's dates and note; its name never changes."""
    with audited(by=by, via=via) as audit:
        stored = ToolName.objects.get(pk=entry.pk)
        entry.first_seen, entry.first_release, entry.note = first_seen, first_release, note
        audit.save(entry, f"Corrected the ledger row of {entry.name}", stored=stored, update_fields=list(LEDGER_FIELDS))
        return entry
