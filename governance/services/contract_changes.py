"""Contract changes' writes: how one input of a live tool broke, told to a caller who still
sends the old one."""

from __future__ import annotations

from datetime import date
from typing import Any

from django.core.exceptions import ValidationError
from django.utils import timezone

from governance import rules, selectors
from governance.clock import today
from governance.models import ContractChange, RetiredTool, ToolAlias
from governance.services.history import Actor, Audit, audited
from governance.surface import ChangeKind, InputChange


def contract_change_validate(
    *, tool: str, input_name: str, kind: ChangeKind, new_input: str = "", was: Any = None, now: Any = None
) -> None:
    """Raise `ValidationError` unless `input_name` of `tool` really changed this way."""
    registry = selectors.registered_tools()
    if RetiredTool.objects.filter(tool__name=tool).exists():
        raise ValidationError({"tool": f"{tool} is retired: the retired-tool answer covers every call to it."})
    if ToolAlias.objects.filter(tool__name=tool).exists():
        raise ValidationError({"tool": f"{tool} is an alias: its target's own contract changes apply to its calls."})
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
    with audited(by=by, via=via) as audit:
        contract_change_validate(tool=tool, input_name=input_name, kind=kind, new_input=new_input, was=was, now=now)
        change = ContractChange(
            tool_id=tool,
            input=input_name,
            kind=kind.value,
            new_input=new_input,
            was=was,
            now=now,
            since=since or today(),
            instead=instead,
        )
        audit.save(change, f"Recorded a contract change: {input_name} {kind.value}")
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
    with audited(by=by, via=via) as audit:
        contract_change_validate(
            tool=change.tool_id,
            input_name=change.input,
            kind=kind,
            new_input=new_input,
            was=was,
            now=now,
        )
        stored = ContractChange.objects.get(pk=change.pk)
        change.kind = kind.value
        change.new_input, change.was, change.now = new_input, was, now
        change.since = since
        change.instead = instead
        audit.save(change, f"Changed the contract change of {change.input}", stored=stored)
        return change


def contract_change_delete(*, change: ContractChange, by: Actor = None, via: str = "code") -> None:
    """Forget a recorded change: a call sending the old input gets the plain schema answer."""
    with audited(by=by, via=via) as audit:
        contract_change_remove(audit, change, reason="")


def contract_change_remove(audit: Audit, change: ContractChange, *, reason: str) -> None:
    """Delete `change` within `audit`, saying why when a later state superseded it."""
    audit.delete(change, f"Deleted the contract change of {change.input}" + (f" ({reason})" if reason else ""))
