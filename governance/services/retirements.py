"""Retirements' writes: a name no longer offered, answered with the tools that replace it; and
the retirements a retire-on date schedules."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction

from core.events import log
from core.operations import ScheduledRetirementFired
from governance import selectors
from governance.clock import system_today, today
from governance.models import DeprecatedTool, RetiredTool, ToolAlias
from governance.services.aliases import alias_update
from governance.services.deprecations import deprecation_update
from governance.services.history import Actor, audited
from governance.services.lifecycle import in_ledger, refusals, replacements, require_reason, supersede

VIA_SCHEDULE = "schedule"
"""Where a retirement whose retire-on date came is recorded from (a replica, or the admin)."""


def retired_tool_validate(*, name: str, replaced_by: Sequence[str], kept: Sequence[str] = ()) -> None:
    """Raise `ValidationError` unless `name` may be retired in favour of `replaced_by` (`kept`:
    the replacements a stored retirement names, judged as before). Every broken rule at once."""
    with refusals() as checked:
        checked.check(lambda: in_ledger(name, "retired"))
        checked.check(lambda: replacements(name, replaced_by, kept=kept))


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
    with audited(by=by, via=via) as audit:
        retired_tool_validate(name=name, replaced_by=replaced_by)
        was_live = name in selectors.registered_tools()
        retired = RetiredTool(
            tool_id=name,
            replaced_by=list(replaced_by),
            since=since or today(),
            release=release,
            message=message,
        )
        audit.save(retired, headline or (f"Retired {name}" + (" while live (kill switch)" if was_live else "")))
        supersede(audit, name, reason=f"{name} was retired")
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
    with audited(by=by, via=via) as audit:
        stored = RetiredTool.objects.get(pk=retired.pk)
        retired_tool_validate(name=retired.name, replaced_by=replaced_by, kept=stored.replaced_by)
        retired.replaced_by = list(replaced_by)
        retired.since = since
        retired.release = release
        retired.message = message
        audit.save(retired, f"Changed the retirement of {retired.name}", stored=stored)
        return retired


def retired_tool_unretire(*, retired: RetiredTool, reason: str, by: Actor = None, via: str = "code") -> None:
    """Un-retire a name, saying why: if the release registers it, it is listed and callable
    again on every replica within GOVERNANCE_REFRESH_SECONDS plus one request."""
    require_reason(reason, "un-retire it")
    with audited(by=by, via=via) as audit:
        audit.delete(retired, f"Un-retired {retired.name}: {reason.strip()}")


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
    default today by the system clock: a rehearsal GOVERNANCE_CLOCK set ahead never writes a
    retirement to the shared tables, governance.clock): each becomes a retirement naming its replacements,
    since its retire-on date, with its reason as the message, recorded `via` `schedule` and
    logged (`Scheduled retirement fired`). Idempotent and safe to run on every replica at once:
    the rows are locked, and one whose retirement another replica recorded first is skipped.
    Returns the names it retired."""
    day = day or system_today()
    fired = []
    for model in (DeprecatedTool, ToolAlias):
        for pk in model.objects.filter(retire_on__lte=day).values_list("pk", flat=True):
            try:
                with transaction.atomic():
                    row = model.objects.select_for_update().filter(pk=pk).first()
                    if row is None or row.retire_on is None or row.retire_on > day:
                        continue  # another replica (or an edit) got there first
                    try:
                        row.clean()
                        scheduled = row.as_deprecation() if isinstance(row, DeprecatedTool) else row.as_alias()
                    except (ValidationError, TypeError, ValueError, AttributeError):
                        continue  # not valid: left out of every replica's rules as well (tools.E120)
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
