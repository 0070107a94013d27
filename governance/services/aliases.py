"""Aliases' writes: an old name whose calls reach a live tool, with some arguments renamed."""

from __future__ import annotations

from datetime import date

from django.utils import timezone

from governance import rules, selectors
from governance.clock import today
from governance.models import ToolAlias, ToolName
from governance.services.history import Actor, audited
from governance.services.ledger import ledger_add
from governance.services.lifecycle import (
    app_only_problem,
    in_ledger,
    refusals,
    require_reason,
    retire_on_later,
    save_scheduled,
    supersede,
)
from governance.surface import Alias
from tools.definition import TOOL_NAME


def alias_validate(
    *,
    name: str,
    target: str,
    arguments: dict[str, str | None],
    retire_on: date | None,
    existing: bool = False,
    unlisted: bool = False,
) -> None:
    """Raise `ValidationError` unless `name` may pass its calls on to `target` this way. Every
    broken rule is named at once, each on its field. `unlisted`: `name` may be one no release
    listed (a name agents call that does not exist), which the alias adds to the ledger."""
    with refusals() as checked:
        if unlisted and not ToolName.objects.filter(name=name).exists():
            if not TOOL_NAME.fullmatch(name):
                checked.errors["tool"] = [f"{name[:140]!r} is not a tool name: 1-128 letters, digits, _, - or ."]
        elif checked.check(lambda: in_ledger(name, "made an alias")) and not existing:
            status = selectors.ledger_statuses().get(name)
            if status == "alias":
                checked.errors["tool"] = [f"{name} is an alias already."]
            if status == "retired":
                checked.errors["tool"] = [f"{name} is retired: un-retire it first."]
        registry, gone = selectors.registered_tools(), selectors.gone_names() - {name}
        if target == name:
            checked.errors["target"] = [f"{name} cannot be an alias of itself."]
        elif not rules.is_live(target, registry, gone):
            checked.errors["target"] = [f"{target} is not a live tool."]
        elif (problem := app_only_problem(name, target, role="be the target of")) is not None:
            checked.errors["target"] = [f"{problem}."]
        elif shape := rules.mapping_problems(arguments):
            checked.errors["arguments"] = [f"{problem}." for problem in shape]
        else:
            alias = Alias(name, target, timezone.localdate(), tuple(arguments.items()))
            if problems := rules.alias_problems(alias, registry, gone):
                checked.errors["arguments"] = [f"{problem}." for problem in problems]
        checked.check(lambda: retire_on_later(retire_on))


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
    unlisted: bool = False,
) -> ToolAlias:
    """Make `name` an alias of `target`: calls to it reach `target` (with `arguments` renamed)
    and answer as it does, with a notice, on every replica within GOVERNANCE_REFRESH_SECONDS plus
    one request. Ends the name's deprecation, and deletes its contract changes (the target's own
    apply). A registered name stops reaching its own code (check tools.E014 until the code drops
    it). With `unlisted`, a name no release listed (one agents call that does not exist) is added
    to the ledger first, in the same transaction and history."""
    arguments = dict(arguments or {})
    with audited(by=by, via=via) as audit:
        alias_validate(name=name, target=target, arguments=arguments, retire_on=retire_on, unlisted=unlisted)
        if unlisted and not ToolName.objects.filter(name=name).exists():
            note = f"Never listed: a name agents called, made an alias of {target}."
            ledger_add(name=name, note=note, by=by, via=via)
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
