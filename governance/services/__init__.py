"""Writes to the tool surface: the one path for the admin, the management commands, migrations'
hooks, the replicas (a retire-on date that came) and code.

Every function is keyword-only, validates with the same rules the system checks report
(`rules`), calls `full_clean()` and runs in one transaction. A rule a write would break raises
`ValidationError` keyed by the field at fault, so the admin shows it on the form.

- A name must be in the ledger before it can be deprecated, aliased or retired; replacements
  and an alias's target must be live tools (registered, not retired, not an alias).
- A name is in at most one lifecycle state: deprecating takes a live tool; making a name an
  alias ends its deprecation; retiring ends its deprecation or alias. A retire-on date is a
  later UTC day (`clock.today`); when it comes, `scheduled_retirements_fire` turns the
  deprecation or alias into a retirement (via `schedule`).
- Undoing a state (un-retiring, withdrawing a deprecation, removing an alias) takes a reason,
  which the history keeps.
- Retiring a tool, or making it an alias, deletes its contract changes: the retired-tool
  answer, or the alias's target, covers every call.
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
from django.db import IntegrityError, models, transaction
from django.utils import timezone

from core.events import log
from core.operations import ScheduledRetirementFired
from governance import rules, selectors
from governance.clock import today
from governance.models import ContractChange, DeprecatedTool, GovernanceEvent, RetiredTool, ToolAlias, ToolName
from governance.surface import Alias, ChangeKind, Deprecation, InputChange, LedgerEntry, Retirement

Actor = AbstractBaseUser | AnonymousUser | None
"""Who makes a change: the admin passes `request.user`; code passes nothing."""

EVENT_MESSAGE_MAX = 4000
"""The longest sentence an event keeps (a long retirement message is cut, with an ellipsis)."""

LEDGER_FIELDS = ("first_seen", "first_release", "note")
DEPRECATION_FIELDS = ("replaced_by", "since", "retire_on", "reason")
ALIAS_FIELDS = ("target", "arguments", "since", "retire_on", "reason")
RETIREMENT_FIELDS = ("replaced_by", "since", "release", "message")
CONTRACT_CHANGE_FIELDS = ("kind", "new_input", "was", "now", "since", "instead")
VIA_SCHEDULE = "schedule"
"""Where a retirement whose retire-on date came is recorded from (a replica, or the admin)."""

Subject = GovernanceEvent.Subject
Action = GovernanceEvent.Action


Record = models.Model | LedgerEntry | Deprecation | Alias | Retirement | InputChange


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
        entry = ToolName(name=name, first_seen=first_seen or today(), first_release=first_release, note=note)
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
    with transaction.atomic():
        before = snapshot(ToolName.objects.get(pk=entry.pk), LEDGER_FIELDS)
        entry.first_seen, entry.first_release, entry.note = first_seen, first_release, note
        entry.full_clean()
        entry.save(update_fields=list(LEDGER_FIELDS))
        governance_event_record(
            tool=entry.name,
            subject=Subject.LEDGER,
            action=Action.UPDATED,
            before=before,
            after=snapshot(entry, LEDGER_FIELDS),
            headline=f"Corrected the ledger row of {entry.name}",
            by=by,
            via=via,
        )
        return entry


def _in_ledger(name: str, what: str) -> None:
    if not ToolName.objects.filter(name=name).exists():
        raise ValidationError(
            {"tool": f"{name} is not in the tool name ledger: only a name a release listed can be {what}."}
        )


def _replacements(name: str, replaced_by: Sequence[str]) -> None:
    problems = rules.replacement_problems(
        name, replaced_by, selectors.registered_tools(), selectors.gone_names() - {name}
    )
    if problems:
        raise ValidationError({"replaced_by": [f"{problem}." for problem in problems]})


def _retire_on(retire_on: date | None) -> None:
    problem = rules.retire_on_problem(retire_on, today())
    if problem is not None:
        raise ValidationError({"retire_on": f"{problem}."})


def _require_reason(reason: str, what: str) -> None:
    if not reason.strip():
        raise ValidationError({"reason": f"Say why you {what}: the governance history keeps it."})


def retired_tool_validate(*, name: str, replaced_by: Sequence[str]) -> None:
    """Raise `ValidationError` unless `name` may be retired in favour of `replaced_by`."""
    _in_ledger(name, "retired")
    _replacements(name, replaced_by)


def retired_tool_create(
    *,
    name: str,
    replaced_by: Sequence[str],
    since: date | None = None,
    release: str = "",
    message: str = "",
    by: Actor = None,
    via: str = "code",
    headline: str = "",
) -> RetiredTool:
    """Retire `name`, ending its deprecation or alias. A live tool stops being listed and
    called on every replica within GOVERNANCE_REFRESH_SECONDS plus one request (the kill
    switch)."""
    with transaction.atomic():
        retired_tool_validate(name=name, replaced_by=replaced_by)
        was_live = name in selectors.registered_tools()
        retired = RetiredTool(
            tool_id=name,
            replaced_by=list(replaced_by),
            since=since or today(),
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
            headline=headline or (f"Retired {name}" + (" while live (kill switch)" if was_live else "")),
            by=by,
            via=via,
        )
        _end_lifecycle(name, reason=f"{name} was retired", by=by, via=via)
        for change in ContractChange.objects.filter(tool__name=name):
            _contract_change_remove(change, reason=f"{name} was retired", by=by, via=via)
        return retired


def _end_lifecycle(name: str, *, reason: str, by: Actor, via: str, keep_alias: bool = False) -> None:
    """Delete the deprecation (and, unless `keep_alias`, the alias) of `name`, recorded: a
    later state supersedes it."""
    deprecation = DeprecatedTool.objects.filter(tool__name=name).first()
    if deprecation is not None:
        _record_removal(
            deprecation, Subject.DEPRECATION, DEPRECATION_FIELDS, f"Ended the deprecation ({reason})", by=by, via=via
        )
    alias = None if keep_alias else ToolAlias.objects.filter(tool__name=name).first()
    if alias is not None:
        _record_removal(alias, Subject.ALIAS, ALIAS_FIELDS, f"Ended the alias ({reason})", by=by, via=via)


def _record_removal(
    row: DeprecatedTool | ToolAlias, subject: str, fields: Sequence[str], headline: str, *, by: Actor, via: str
) -> None:
    before = snapshot(row, fields)
    name = row.name
    row.delete()
    governance_event_record(
        tool=name, subject=subject, action=Action.DELETED, before=before, after=None, headline=headline, by=by, via=via
    )


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


def retired_tool_unretire(*, retired: RetiredTool, reason: str, by: Actor = None, via: str = "code") -> None:
    """Un-retire a name, saying why: if the release registers it, it is listed and callable
    again on every replica within GOVERNANCE_REFRESH_SECONDS plus one request."""
    _require_reason(reason, "un-retire it")
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
            headline=f"Un-retired {name}: {reason.strip()}",
            by=by,
            via=via,
        )


# --- Deprecations -----------------------------------------------------------------------------


def deprecation_validate(
    *, name: str, replaced_by: Sequence[str], retire_on: date | None, stored: DeprecatedTool | None = None
) -> None:
    """Raise `ValidationError` unless the live tool `name` may be deprecated this way (or, with
    its `stored` deprecation, changed this way: a retire-on date kept as it is needs no check)."""
    if stored is not None:
        _replacements(stored.name, replaced_by)
        if retire_on != stored.retire_on:
            _retire_on(retire_on)
        return
    _in_ledger(name, "deprecated")
    if name in selectors.gone_names() or name not in selectors.registered_tools():
        status = selectors.ledger_statuses().get(name, "dropped")
        raise ValidationError(
            {"tool": f"{name} is {'an alias' if status == 'alias' else status}: only a live tool can be deprecated."}
        )
    _replacements(name, replaced_by)
    _retire_on(retire_on)


def deprecation_create(
    *,
    name: str,
    replaced_by: Sequence[str],
    reason: str = "",
    retire_on: date | None = None,
    since: date | None = None,
    by: Actor = None,
    via: str = "code",
) -> DeprecatedTool:
    """Deprecate the live tool `name`: it stays listed and answered, with a notice naming
    `replaced_by` and `retire_on` at the start of its description and in every result, on every
    replica within GOVERNANCE_REFRESH_SECONDS plus one request."""
    with transaction.atomic():
        deprecation_validate(name=name, replaced_by=replaced_by, retire_on=retire_on)
        row = DeprecatedTool(
            tool_id=name,
            replaced_by=list(replaced_by),
            since=since or today(),
            retire_on=retire_on,
            reason=reason,
        )
        row.full_clean()
        row.save()
        governance_event_record(
            tool=name,
            subject=Subject.DEPRECATION,
            action=Action.CREATED,
            before=None,
            after=snapshot(row, DEPRECATION_FIELDS),
            headline=f"Deprecated {name}",
            by=by,
            via=via,
        )
        return row


def _save_update(
    row: DeprecatedTool | ToolAlias,
    stored: DeprecatedTool | ToolAlias,
    fields: Sequence[str],
    subject: Subject,
    headline: str,
    *,
    by: Actor,
    via: str,
) -> None:
    """Save a deprecation or alias changed from `stored` (the row as it was, locked) and record
    the change; a retire-on date that moved is the headline."""
    row.full_clean()
    row.save()
    if row.retire_on != stored.retire_on:
        headline = (
            f"Scheduled the retirement of {row.name} for {row.retire_on.isoformat()}"
            if row.retire_on
            else f"Cancelled the scheduled retirement of {row.name}"
        )
    governance_event_record(
        tool=row.name,
        subject=subject,
        action=Action.UPDATED,
        before=snapshot(stored, fields),
        after=snapshot(row, fields),
        headline=headline,
        by=by,
        via=via,
    )


def deprecation_update(
    *,
    deprecation: DeprecatedTool,
    replaced_by: Sequence[str],
    reason: str,
    retire_on: date | None,
    since: date,
    by: Actor = None,
    via: str = "code",
) -> DeprecatedTool:
    """Change a deprecation's replacements, reason and dates (a new retire-on date must be a
    later day; an unchanged one is kept)."""
    with transaction.atomic():
        stored = DeprecatedTool.objects.select_for_update().get(pk=deprecation.pk)
        deprecation_validate(name=stored.name, replaced_by=replaced_by, retire_on=retire_on, stored=stored)
        deprecation.replaced_by, deprecation.reason = list(replaced_by), reason
        deprecation.retire_on, deprecation.since = retire_on, since
        _save_update(
            deprecation,
            stored,
            DEPRECATION_FIELDS,
            Subject.DEPRECATION,
            f"Changed the deprecation of {deprecation.name}",
            by=by,
            via=via,
        )
        return deprecation


def deprecation_withdraw(*, deprecation: DeprecatedTool, reason: str, by: Actor = None, via: str = "code") -> None:
    """Make a deprecated tool plainly live again, saying why (its scheduled retirement goes too)."""
    _require_reason(reason, "withdraw the deprecation")
    with transaction.atomic():
        _record_removal(
            deprecation,
            Subject.DEPRECATION,
            DEPRECATION_FIELDS,
            f"Withdrew the deprecation of {deprecation.name}: {reason.strip()}",
            by=by,
            via=via,
        )


# --- Aliases ----------------------------------------------------------------------------------


def alias_validate(
    *, name: str, target: str, arguments: dict[str, str | None], retire_on: date | None, existing: bool = False
) -> None:
    """Raise `ValidationError` unless `name` may pass its calls on to `target` this way."""
    _in_ledger(name, "made an alias")
    if not existing:
        status = selectors.ledger_statuses().get(name)
        if status == "alias":
            raise ValidationError({"tool": f"{name} is an alias already."})
        if status == "retired":
            raise ValidationError({"tool": f"{name} is retired: un-retire it first."})
    registry, gone = selectors.registered_tools(), selectors.gone_names() - {name}
    if target == name:
        raise ValidationError({"target": f"{name} cannot be an alias of itself."})
    if not rules.is_live(target, registry, gone):
        raise ValidationError({"target": f"{target} is not a live tool."})
    problems = rules.alias_problems(Alias(name, target, timezone.localdate(), tuple(arguments.items())), registry, gone)
    if problems:
        raise ValidationError({"arguments": [f"{problem}." for problem in problems]})
    _retire_on(retire_on)


def alias_create(
    *,
    name: str,
    target: str,
    arguments: dict[str, str | None] | None = None,
    reason: str = "",
    retire_on: date | None = None,
    since: date | None = None,
    by: Actor = None,
    via: str = "code",
) -> ToolAlias:
    """Make `name` an alias of `target`: calls to it reach `target` (with `arguments` renamed)
    and answer as it does, with a notice, on every replica within GOVERNANCE_REFRESH_SECONDS plus
    one request. Ends the name's deprecation, and deletes its contract changes (the target's own
    apply). A registered name stops reaching its own code (check tools.E014 until the code drops
    it)."""
    arguments = dict(arguments or {})
    with transaction.atomic():
        alias_validate(name=name, target=target, arguments=arguments, retire_on=retire_on)
        row = ToolAlias(
            tool_id=name,
            target_id=target,
            arguments=arguments,
            since=since or today(),
            retire_on=retire_on,
            reason=reason,
        )
        row.full_clean()
        row.save()
        governance_event_record(
            tool=name,
            subject=Subject.ALIAS,
            action=Action.CREATED,
            before=None,
            after=snapshot(row, ALIAS_FIELDS),
            headline=f"Made {name} an alias of {target}",
            by=by,
            via=via,
        )
        _end_lifecycle(name, reason=f"{name} became an alias of {target}", by=by, via=via, keep_alias=True)
        for change in ContractChange.objects.filter(tool__name=name):
            _contract_change_remove(change, reason=f"{name} became an alias of {target}", by=by, via=via)
        return row


def alias_update(
    *,
    alias: ToolAlias,
    target: str,
    arguments: dict[str, str | None],
    reason: str,
    retire_on: date | None,
    since: date,
    by: Actor = None,
    via: str = "code",
) -> ToolAlias:
    """Change an alias's target, argument mapping, reason and dates."""
    with transaction.atomic():
        stored = ToolAlias.objects.select_for_update().get(pk=alias.pk)
        alias_validate(
            name=stored.name,
            target=target,
            arguments=arguments,
            retire_on=retire_on if retire_on != stored.retire_on else None,
            existing=True,
        )
        alias.target_id, alias.arguments, alias.reason = target, dict(arguments), reason
        alias.retire_on, alias.since = retire_on, since
        _save_update(alias, stored, ALIAS_FIELDS, Subject.ALIAS, f"Changed the alias {alias.name}", by=by, via=via)
        return alias


def alias_remove(*, alias: ToolAlias, reason: str, by: Actor = None, via: str = "code") -> None:
    """End an alias, saying why: a registered name reaches its own code again; any other is
    then dropped (check tools.E002): retire it."""
    _require_reason(reason, "end the alias")
    with transaction.atomic():
        _record_removal(
            alias, Subject.ALIAS, ALIAS_FIELDS, f"Ended the alias {alias.name}: {reason.strip()}", by=by, via=via
        )


# --- Scheduled retirements --------------------------------------------------------------------


def _scheduled(name: str) -> DeprecatedTool | ToolAlias:
    row: DeprecatedTool | ToolAlias | None = DeprecatedTool.objects.filter(tool__name=name).first()
    row = row or ToolAlias.objects.filter(tool__name=name).first()
    if row is None:
        raise ValidationError(
            {"tool": f"{name} is neither deprecated nor an alias: deprecate it (with its retire-on date) first."}
        )
    return row


def retirement_schedule(*, name: str, retire_on: date, by: Actor = None, via: str = "code") -> None:
    """Set (or move) the retire-on date of the deprecated tool or alias `name`."""
    with transaction.atomic():
        _set_retire_on(_scheduled(name), retire_on, by=by, via=via)


def retirement_cancel(*, name: str, by: Actor = None, via: str = "code") -> None:
    """Clear the retire-on date of the deprecated tool or alias `name`: it stays deprecated."""
    with transaction.atomic():
        row = _scheduled(name)
        if row.retire_on is None:
            raise ValidationError({"retire_on": f"{name} has no scheduled retirement to cancel."})
        _set_retire_on(row, None, by=by, via=via)


def _set_retire_on(row: DeprecatedTool | ToolAlias, retire_on: date | None, *, by: Actor, via: str) -> None:
    if isinstance(row, DeprecatedTool):
        deprecation_update(
            deprecation=row,
            replaced_by=row.replaced_by,
            reason=row.reason,
            retire_on=retire_on,
            since=row.since,
            by=by,
            via=via,
        )
    else:
        alias_update(
            alias=row,
            target=row.target_id,
            arguments=row.arguments,
            reason=row.reason,
            retire_on=retire_on,
            since=row.since,
            by=by,
            via=via,
        )


def scheduled_retirements_fire(*, day: date | None = None) -> list[str]:
    """Retire every deprecated tool and alias whose retire-on date has come (on or before `day`,
    default today by the governance clock): each becomes a retirement naming its replacements,
    since its retire-on date, with its reason as the message, recorded `via` `schedule` and
    logged (`Scheduled retirement fired`). Idempotent and safe to run on every replica at once:
    the rows are locked, and one whose retirement another replica recorded first is skipped.
    Returns the names it retired."""
    day = day or today()
    fired = []
    for model in (DeprecatedTool, ToolAlias):
        for pk in model.objects.filter(retire_on__lte=day).values_list("pk", flat=True):
            try:
                with transaction.atomic():
                    row = model.objects.select_for_update().filter(pk=pk).first()
                    if row is None or row.retire_on is None or row.retire_on > day:
                        continue  # another replica (or an edit) got there first
                    scheduled = row.as_deprecation() if isinstance(row, DeprecatedTool) else row.as_alias()
                    retire_on = scheduled.retire_on
                    assert retire_on is not None
                    # A replacement retired since is left out: the date fires whatever became of it.
                    live = set(selectors.live_tools())
                    replaced_by = [name for name in scheduled.replaced_by if name in live and name != scheduled.name]
                    retired_tool_create(
                        name=scheduled.name,
                        replaced_by=replaced_by,
                        since=retire_on,
                        message=scheduled.reason,
                        via=VIA_SCHEDULE,
                        headline=f"Retired {scheduled.name}: its retire-on date, {retire_on.isoformat()}, came",
                    )
            except IntegrityError:
                continue  # retired meanwhile by another replica or by hand: nothing left to record
            log(ScheduledRetirementFired(tool=scheduled.name, retire_on=retire_on.isoformat(), replaced_by=replaced_by))
            fired.append(scheduled.name)
    return fired


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
    with transaction.atomic():
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
