"""The audited write: every service's transaction, and the governance history it appends to.

A service opens `audited(by=..., via=...)` and writes each row through the `Audit` it gets:
`save` (a new row, or a row changed from the `stored` one), `delete`, or `recorded` around a
write of its own (the committed history's). Each is one `GovernanceEvent` in the same
transaction: the row's fields before and after (`snapshot`), the ones that differ, and a
sentence saying so. Which subject an event is about, and which fields it keeps, follow from the
row's type (a table's model or its fixture twin in `governance.surface`).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import date
from enum import Enum
from typing import Any

from django.contrib.auth.base_user import AbstractBaseUser
from django.contrib.auth.models import AnonymousUser
from django.db import models, transaction

from governance.models import ContractChange, DeprecatedTool, GovernanceEvent, RetiredTool, ToolAlias, ToolName
from governance.surface import Alias, Deprecation, InputChange, LedgerEntry, Retirement

Actor = AbstractBaseUser | AnonymousUser | None
"""Who makes a change: the admin passes `request.user`; code passes nothing."""

EVENT_MESSAGE_MAX = 4000
"""The longest sentence an event keeps (a long retirement message is cut, with an ellipsis)."""

LEDGER_FIELDS = ("first_seen", "first_release", "note")
DEPRECATION_FIELDS = ("replaced_by", "since", "retire_on", "reason")
ALIAS_FIELDS = ("target", "arguments", "since", "retire_on", "reason")
RETIREMENT_FIELDS = ("replaced_by", "since", "release", "message")
CONTRACT_CHANGE_FIELDS = ("kind", "new_input", "was", "now", "since", "instead")

Subject = GovernanceEvent.Subject
Action = GovernanceEvent.Action


Record = models.Model | LedgerEntry | Deprecation | Alias | Retirement | InputChange

Row = ToolName | DeprecatedTool | ToolAlias | RetiredTool | ContractChange
"""A row of a governance table."""
Committed = LedgerEntry | Deprecation | Alias | Retirement | InputChange
"""A row of the committed history (the fixture), as it would stand in its table."""
Audited = Row | Committed

AUDITED: dict[type[Audited], tuple[str, tuple[str, ...]]] = {
    ToolName: (Subject.LEDGER, LEDGER_FIELDS),
    LedgerEntry: (Subject.LEDGER, LEDGER_FIELDS),
    DeprecatedTool: (Subject.DEPRECATION, DEPRECATION_FIELDS),
    Deprecation: (Subject.DEPRECATION, DEPRECATION_FIELDS),
    ToolAlias: (Subject.ALIAS, ALIAS_FIELDS),
    Alias: (Subject.ALIAS, ALIAS_FIELDS),
    RetiredTool: (Subject.RETIREMENT, RETIREMENT_FIELDS),
    Retirement: (Subject.RETIREMENT, RETIREMENT_FIELDS),
    ContractChange: (Subject.CONTRACT_CHANGE, CONTRACT_CHANGE_FIELDS),
    InputChange: (Subject.CONTRACT_CHANGE, CONTRACT_CHANGE_FIELDS),
}
"""Each kind of row's history subject and the fields its events keep."""


def snapshot(row: Record, fields: Sequence[str]) -> dict[str, Any]:
    """A row's (or its fixture twin's) governance fields as JSON values: dates as ISO strings,
    tuples as lists, a related ledger row by name, an alias's arguments as an object, kinds by
    value."""
    values = {}
    for name in fields:
        value = getattr(row, f"{name}_id" if name == "target" and isinstance(row, models.Model) else name)
        if isinstance(value, date):
            value = value.isoformat()
        elif name == "arguments":
            value = dict(value)
        elif isinstance(value, tuple):
            value = list(value)
        elif isinstance(value, Enum):
            value = value.value
        values[name] = value
    return values


def _diff(before: dict[str, Any] | None, after: dict[str, Any] | None) -> dict[str, list[Any]]:
    """`{field: [before, after]}` for every field that differs (all of them on create or delete)."""
    names = list((before or after or {}).keys())
    return {
        name: [None if before is None else before[name], None if after is None else after[name]]
        for name in names
        if before is None or after is None or before[name] != after[name]
    }


def _shown(value: Any) -> str:
    if value is None or value == "" or value == [] or value == {}:
        return "—"
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return ", ".join(value)
    if isinstance(value, dict):
        return ", ".join(f"{old} → {new or '(left out)'}" for old, new in value.items())
    return str(value)


def _sentence(headline: str, changes: dict[str, list[Any]], *, action: str) -> str:
    if action == Action.UPDATED:
        parts = [f"{name}: {_shown(was)} → {_shown(now)}" for name, (was, now) in changes.items()]
    else:
        side = 1 if action == Action.CREATED else 0
        parts = [f"{name}: {_shown(values[side])}" for name, values in changes.items()]
    text = f"{headline.rstrip('.')}. {'; '.join(parts)}" if parts else headline
    text = text if text.endswith((".", "!", "?")) else f"{text}."
    return text if len(text) <= EVENT_MESSAGE_MAX else text[: EVENT_MESSAGE_MAX - 1] + "…"


def governance_event_record(
    *,
    tool: str,
    subject: str,
    action: str,
    before: dict[str, Any] | None,
    after: dict[str, Any] | None,
    headline: str,
    by: Actor = None,
    via: str = "code",
) -> GovernanceEvent | None:
    """Append one event to the governance history: `headline` plus what changed between the
    `before` and `after` snapshots (None where the row did not exist). An update that changed
    nothing records nothing and returns None."""
    changes = _diff(before, after)
    if action == Action.UPDATED and not changes:
        return None
    actor = by.get_username() if by is not None and by.is_authenticated else ""
    event = GovernanceEvent(
        tool=tool,
        subject=subject,
        action=action,
        actor=actor,
        via=via,
        message=_sentence(headline, changes, action=action),
        changes=changes,
    )
    event.full_clean()
    event.save()
    return event


def _tool(row: Audited) -> str:
    """The ledger name an event about `row` is filed under."""
    if isinstance(row, ContractChange):
        return row.tool_id
    if isinstance(row, InputChange):
        return row.tool
    return row.name


class Audit:
    """A write in progress (`audited`): each row it saves or deletes is recorded as one event,
    made by `by` `via`."""

    def __init__(self, *, by: Actor, via: str) -> None:
        self.by, self.via = by, via

    @contextmanager
    def recorded(self, headline: str, *, before: Audited | None, after: Audited | None) -> Iterator[None]:
        """Record the write done in the body: `before` as it is on entry, `after` as the body
        leaves it (None on the side where the row does not exist: a create, a delete)."""
        row = before if before is not None else after
        assert row is not None
        subject, fields = AUDITED[type(row)]
        tool, was = _tool(row), None if before is None else snapshot(before, fields)
        yield
        governance_event_record(
            tool=tool,
            subject=subject,
            action=Action.CREATED if before is None else Action.DELETED if after is None else Action.UPDATED,
            before=was,
            after=None if after is None else snapshot(after, fields),
            headline=headline,
            by=self.by,
            via=self.via,
        )

    def save(
        self, row: Row, headline: str, *, stored: Row | None = None, update_fields: list[str] | None = None
    ) -> None:
        """Validate and save `row`: new, or changed from `stored` (the row as the table holds it)."""
        with self.recorded(headline, before=stored, after=row):
            row.full_clean()
            row.save(update_fields=update_fields)

    def delete(self, row: Row, headline: str) -> None:
        with self.recorded(headline, before=row, after=None):
            row.delete()


@contextmanager
def audited(*, by: Actor = None, via: str = "code") -> Iterator[Audit]:
    """One service's writes, in one transaction, each recorded in the governance history (see
    `Audit`): a write that is refused, or fails, leaves neither the row nor its event."""
    with transaction.atomic():
        yield Audit(by=by, via=via)
