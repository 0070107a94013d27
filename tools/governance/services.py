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
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date
from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from tools.governance import rules, selectors
from tools.governance.surface import ChangeKind, InputChange
from tools.models import ContractChange, RetiredTool, ToolName


def ledger_add(*, name: str, first_seen: date | None = None, first_release: str = "", note: str = "") -> ToolName:
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
    *, name: str, replaced_by: Sequence[str], since: date | None = None, release: str = "", message: str = ""
) -> RetiredTool:
    """Retire `name`. A live tool stops being listed and called on every replica within
    GOVERNANCE_REFRESH_SECONDS (the kill switch)."""
    with transaction.atomic():
        retired_tool_validate(name=name, replaced_by=replaced_by)
        retired = RetiredTool(
            tool_id=name,
            replaced_by=list(replaced_by),
            since=since or timezone.localdate(),
            release=release,
            message=message,
        )
        retired.full_clean()
        retired.save()
        ContractChange.objects.filter(tool__name=name).delete()
        return retired


def retired_tool_update(
    *, retired: RetiredTool, replaced_by: Sequence[str], since: date, release: str, message: str
) -> RetiredTool:
    """Change what the answer to a retired name says; the name itself never changes."""
    with transaction.atomic():
        retired_tool_validate(name=retired.name, replaced_by=replaced_by)
        retired.replaced_by = list(replaced_by)
        retired.since = since
        retired.release = release
        retired.message = message
        retired.full_clean()
        retired.save()
        return retired


def retired_tool_delete(*, retired: RetiredTool) -> None:
    """Un-retire a name: if the release registers it, it is listed and callable again."""
    with transaction.atomic():
        retired.delete()


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
        change.kind = kind.value
        change.new_input, change.was, change.now = new_input, was, now
        change.since = since
        change.instead = instead
        change.full_clean()
        change.save()
        return change


def contract_change_delete(*, change: ContractChange) -> None:
    with transaction.atomic():
        change.delete()
