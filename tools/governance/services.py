"""Writes to the tool surface: the one path for the admin, migrations' hooks and code.

Every function is keyword-only, validates with the same rules the system checks report
(`rules`), calls `full_clean()` and runs in one transaction. A rule a write would break raises
`ValidationError` keyed by the field at fault, so the admin shows it on the form.

- A name must be in the ledger before it can be retired; its replacements must be live tools.
- Retiring a tool deletes its contract changes: the retired-tool answer covers every call.
- A contract change names a live tool, and its kind agrees with the current schema: a removed
  or renamed input is gone from it (a new name is in it), a type change's `now` is the input's
  current shape and `was` no longer passes, a unit change names the input that took over.
- The ledger only grows (`ledger_add` never changes or removes a row).
- Every write records a `GovernanceEvent` in its own transaction: what changed (each field
  before and after), a sentence saying so, and who made it (`by`, the admin's user, and `via`).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date
from enum import Enum
from typing import Any

from django.contrib.auth.base_user import AbstractBaseUser
from django.contrib.auth.models import AnonymousUser
from django.core.exceptions import ValidationError
from django.db import models, transaction
from django.utils import timezone

from tools.governance import rules, selectors
from tools.governance.surface import ChangeKind, InputChange, LedgerEntry, Retirement
from tools.models import ContractChange, GovernanceEvent, RetiredTool, ToolName

Actor = AbstractBaseUser | AnonymousUser | None
"""Who makes a change: the admin passes `request.user`; code passes nothing."""

EVENT_MESSAGE_MAX = 4000
"""The longest sentence an event keeps (a long retirement message is cut, with an ellipsis)."""

LEDGER_FIELDS = ("first_seen", "first_release", "note")
RETIREMENT_FIELDS = ("replaced_by", "since", "release", "message")
CONTRACT_CHANGE_FIELDS = ("kind", "new_input", "was", "now", "since", "instead")

Subject = GovernanceEvent.Subject
Action = GovernanceEvent.Action


def snapshot(row: models.Model | LedgerEntry | Retirement | InputChange, fields: Sequence[str]) -> dict[str, Any]:
    """A row's (or its fixture twin's) governance fields as JSON values: dates as ISO strings,
    tuples as lists, kinds by value."""
    values = {}
    for name in fields:
        value = getattr(row, name)
        if isinstance(value, date):
            value = value.isoformat()
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
    if value is None or value == "" or value == []:
        return "—"
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return ", ".join(value)
    return str(value)


def _sentence(headline: str, changes: dict[str, list[Any]], *, action: str) -> str:
    if action == Action.UPDATED:
        parts = [f"{name}: {_shown(was)} → {_shown(now)}" for name, (was, now) in changes.items()]
    else:
        side = 1 if action == Action.CREATED else 0
        parts = [f"{name}: {_shown(values[side])}" for name, values in changes.items()]
    text = f"{headline}. {'; '.join(parts)}" if parts else headline
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
    with transaction.atomic():
        existing = ToolName.objects.filter(name=name).first()
        if existing is not None:
            return existing
        entry = ToolName(
            name=name, first_seen=first_seen or timezone.localdate(), first_release=first_release, note=note
        )
        entry.full_clean()
        entry.save()
        governance_event_record(
            tool=name,
            subject=Subject.LEDGER,
            action=Action.CREATED,
            before=None,
            after=snapshot(entry, LEDGER_FIELDS),
            headline=f"Added {name} to the tool name ledger",
            by=by,
            via=via,
        )
        return entry


def retired_tool_validate(*, name: str, replaced_by: Sequence[str]) -> None:
    """Raise `ValidationError` unless `name` may be retired in favour of `replaced_by`."""
    if not ToolName.objects.filter(name=name).exists():
        raise ValidationError(
            {"tool": f"{name} is not in the tool name ledger: only a name a release listed can be retired."}
        )
    retired = set(RetiredTool.objects.exclude(tool__name=name).values_list("tool__name", flat=True))
    problems = rules.replacement_problems(name, replaced_by, selectors.registered_tools(), retired)
    if problems:
        raise ValidationError({"replaced_by": [f"{problem}." for problem in problems]})


def retired_tool_create(
    *,
    name: str,
    replaced_by: Sequence[str],
    since: date | None = None,
    release: str = "",
    message: str = "",
    by: Actor = None,
    via: str = "code",
) -> RetiredTool:
    """Retire `name`. A live tool stops being listed and called on every replica within
    GOVERNANCE_REFRESH_SECONDS plus one request (the kill switch)."""
    with transaction.atomic():
        retired_tool_validate(name=name, replaced_by=replaced_by)
        was_live = name in selectors.registered_tools()
        retired = RetiredTool(
            tool_id=name,
            replaced_by=list(replaced_by),
            since=since or timezone.localdate(),
            release=release,
            message=message,
        )
        retired.full_clean()
        retired.save()
        governance_event_record(
            tool=name,
            subject=Subject.RETIREMENT,
            action=Action.CREATED,
            before=None,
            after=snapshot(retired, RETIREMENT_FIELDS),
            headline=f"Retired {name}" + (" while live (kill switch)" if was_live else ""),
            by=by,
            via=via,
        )
        for change in ContractChange.objects.filter(tool__name=name):
            _contract_change_remove(change, reason=f"{name} was retired", by=by, via=via)
        return retired


def retired_tool_update(
    *,
    retired: RetiredTool,
    replaced_by: Sequence[str],
    since: date,
    release: str,
    message: str,
    by: Actor = None,
    via: str = "code",
) -> RetiredTool:
    """Change what the answer to a retired name says; the name itself never changes."""
    with transaction.atomic():
        retired_tool_validate(name=retired.name, replaced_by=replaced_by)
        before = snapshot(RetiredTool.objects.get(pk=retired.pk), RETIREMENT_FIELDS)
        retired.replaced_by = list(replaced_by)
        retired.since = since
        retired.release = release
        retired.message = message
        retired.full_clean()
        retired.save()
        governance_event_record(
            tool=retired.name,
            subject=Subject.RETIREMENT,
            action=Action.UPDATED,
            before=before,
            after=snapshot(retired, RETIREMENT_FIELDS),
            headline=f"Changed the retirement of {retired.name}",
            by=by,
            via=via,
        )
        return retired


def retired_tool_delete(*, retired: RetiredTool, by: Actor = None, via: str = "code") -> None:
    """Un-retire a name: if the release registers it, it is listed and callable again."""
    with transaction.atomic():
        before = snapshot(retired, RETIREMENT_FIELDS)
        name = retired.name
        retired.delete()
        governance_event_record(
            tool=name,
            subject=Subject.RETIREMENT,
            action=Action.DELETED,
            before=before,
            after=None,
            headline=f"Un-retired {name}",
            by=by,
            via=via,
        )


def contract_change_validate(
    *, tool: str, input_name: str, kind: ChangeKind, new_input: str = "", was: Any = None, now: Any = None
) -> None:
    """Raise `ValidationError` unless `input_name` of `tool` really changed this way."""
    registry = selectors.registered_tools()
    if RetiredTool.objects.filter(tool__name=tool).exists():
        raise ValidationError({"tool": f"{tool} is retired: the retired-tool answer covers every call to it."})
    if tool not in registry:
        raise ValidationError({"tool": f"{tool} is not a live tool."})
    change = InputChange(tool, input_name, kind, timezone.localdate(), "", new_input=new_input, was=was, now=now)
    problem = rules.input_problem(registry[tool], change)
    if problem is not None:
        raise ValidationError({"input": f"{problem}."})


def contract_change_record(
    *,
    tool: str,
    input_name: str,
    kind: ChangeKind,
    instead: str,
    since: date | None = None,
    new_input: str = "",
    was: Any = None,
    now: Any = None,
    by: Actor = None,
    via: str = "code",
) -> ContractChange:
    """Record how `input_name` of `tool` broke (see `ChangeKind` for what each kind needs)."""
    with transaction.atomic():
        contract_change_validate(tool=tool, input_name=input_name, kind=kind, new_input=new_input, was=was, now=now)
        change = ContractChange(
            tool_id=tool,
            input=input_name,
            kind=kind.value,
            new_input=new_input,
            was=was,
            now=now,
            since=since or timezone.localdate(),
            instead=instead,
        )
        change.full_clean()
        change.save()
        governance_event_record(
            tool=tool,
            subject=Subject.CONTRACT_CHANGE,
            action=Action.CREATED,
            before=None,
            after=snapshot(change, CONTRACT_CHANGE_FIELDS),
            headline=f"Recorded a contract change: {input_name} {kind.value}",
            by=by,
            via=via,
        )
        return change


def contract_change_update(
    *,
    change: ContractChange,
    kind: ChangeKind,
    since: date,
    instead: str,
    new_input: str = "",
    was: Any = None,
    now: Any = None,
    by: Actor = None,
    via: str = "code",
) -> ContractChange:
    """Correct a recorded change; its tool and input never change."""
    with transaction.atomic():
        contract_change_validate(
            tool=change.tool_id,
            input_name=change.input,
            kind=kind,
            new_input=new_input,
            was=was,
            now=now,
        )
        before = snapshot(ContractChange.objects.get(pk=change.pk), CONTRACT_CHANGE_FIELDS)
        change.kind = kind.value
        change.new_input, change.was, change.now = new_input, was, now
        change.since = since
        change.instead = instead
        change.full_clean()
        change.save()
        governance_event_record(
            tool=change.tool_id,
            subject=Subject.CONTRACT_CHANGE,
            action=Action.UPDATED,
            before=before,
            after=snapshot(change, CONTRACT_CHANGE_FIELDS),
            headline=f"Changed the contract change of {change.input}",
            by=by,
            via=via,
        )
        return change


def contract_change_delete(*, change: ContractChange, by: Actor = None, via: str = "code") -> None:
    """Forget a recorded change: a call sending the old input gets the plain schema answer."""
    with transaction.atomic():
        _contract_change_remove(change, reason="", by=by, via=via)


def _contract_change_remove(change: ContractChange, *, reason: str, by: Actor, via: str) -> None:
    before = snapshot(change, CONTRACT_CHANGE_FIELDS)
    tool, input_name = change.tool_id, change.input
    change.delete()
    governance_event_record(
        tool=tool,
        subject=Subject.CONTRACT_CHANGE,
        action=Action.DELETED,
        before=before,
        after=None,
        headline=f"Deleted the contract change of {input_name}" + (f" ({reason})" if reason else ""),
        by=by,
        via=via,
    )
