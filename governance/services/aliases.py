"""Aliases' writes: an old name whose calls reach a live tool, with some arguments renamed."""

from __future__ import annotations

from datetime import date

from django.core.exceptions import ValidationError
from django.utils import timezone

from governance import rules, selectors
from governance.clock import today
from governance.models import ToolAlias
from governance.services.history import Actor, audited
from governance.services.lifecycle import in_ledger, require_reason, retire_on_later, save_scheduled, supersede
from governance.surface import Alias


def alias_validate(
    *, name: str, target: str, arguments: dict[str, str | None], retire_on: date | None, existing: bool = False
) -> None:
    """Raise `ValidationError` unless `name` may pass its calls on to `target` this way."""
    in_ledger(name, "made an alias")
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
    retire_on_later(retire_on)


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
    with audited(by=by, via=via) as audit:
        alias_validate(name=name, target=target, arguments=arguments, retire_on=retire_on)
        row = ToolAlias(
            tool_id=name,
            target_id=target,
            arguments=arguments,
            since=since or today(),
            retire_on=retire_on,
            reason=reason,
        )
        audit.save(row, f"Made {name} an alias of {target}")
        supersede(audit, name, reason=f"{name} became an alias of {target}", keep_alias=True)
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
    with audited(by=by, via=via) as audit:
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
        save_scheduled(audit, alias, stored, f"Changed the alias {alias.name}")
        return alias


def alias_remove(*, alias: ToolAlias, reason: str, by: Actor = None, via: str = "code") -> None:
    """End an alias, saying why: a registered name reaches its own code again; any other is
    then dropped (check tools.E002): retire it."""
    require_reason(reason, "end the alias")
    with audited(by=by, via=via) as audit:
        audit.delete(alias, f"Ended the alias {alias.name}: {reason.strip()}")
