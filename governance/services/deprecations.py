"""Deprecations' writes: a live tool on its way out, still listed and answered with a notice."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date

from governance import selectors
from governance.clock import today
from governance.models import DeprecatedTool
from governance.services.history import Actor, audited
from governance.services.lifecycle import (
    in_ledger,
    refusals,
    replacements,
    require_reason,
    retire_on_later,
    save_scheduled,
)


def deprecation_validate(
    *, name: str, replaced_by: Sequence[str], retire_on: date | None, stored: DeprecatedTool | None = None
) -> None:
    """Raise `ValidationError` unless the live tool `name` may be deprecated this way (or, with
    its `stored` deprecation, changed this way: a retire-on date kept as it is needs no check).
    Every broken rule is named at once, each on its field."""
    with refusals() as rules:
        if stored is not None:
            rules.check(lambda: replacements(stored.name, replaced_by, kept=stored.replaced_by))
            if retire_on != stored.retire_on:
                rules.check(lambda: retire_on_later(retire_on))
            return
        if rules.check(lambda: in_ledger(name, "deprecated")) and (
            name in selectors.gone_names() or name not in selectors.registered_tools()
        ):
            status = selectors.ledger_statuses().get(name, "dropped")
            rules.errors["tool"] = [
                f"{name} is {'an alias' if status == 'alias' else status}: only a live tool can be deprecated."
            ]
        rules.check(lambda: replacements(name, replaced_by))
        rules.check(lambda: retire_on_later(retire_on))


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
    with audited(by=by, via=via) as audit:
        deprecation_validate(name=name, replaced_by=replaced_by, retire_on=retire_on)
        row = DeprecatedTool(
            tool_id=name,
            replaced_by=list(replaced_by),
            since=since or today(),
            retire_on=retire_on,
            reason=reason,
        )
        audit.save(row, f"Deprecated {name}")
        return row


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
    with audited(by=by, via=via) as audit:
        stored = DeprecatedTool.objects.select_for_update().get(pk=deprecation.pk)
        deprecation_validate(name=stored.name, replaced_by=replaced_by, retire_on=retire_on, stored=stored)
        deprecation.replaced_by, deprecation.reason = list(replaced_by), reason
        deprecation.retire_on, deprecation.since = retire_on, since
        save_scheduled(audit, deprecation, stored, f"Changed the deprecation of {deprecation.name}")
        return deprecation


def deprecation_withdraw(*, deprecation: DeprecatedTool, reason: str, by: Actor = None, via: str = "code") -> None:
    """Make a deprecated tool plainly live again, saying why (its scheduled retirement goes too)."""
    require_reason(reason, "withdraw the deprecation")
    with audited(by=by, via=via) as audit:
        audit.delete(deprecation, f"Withdrew the deprecation of {deprecation.name}: {reason.strip()}")
