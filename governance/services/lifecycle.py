"""What the lifecycle services (deprecations, aliases, retirements) share: the refusals they
raise, and what a later state does to the states it supersedes."""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator, Sequence
from contextlib import contextmanager
from datetime import date

from django.core.exceptions import ValidationError

from governance import rules, selectors
from governance.clock import today
from governance.models import ContractChange, DeprecatedTool, ToolAlias, ToolName
from governance.services.contract_changes import contract_change_remove
from governance.services.history import Audit


class Refusals:
    """Every rule a write breaks, gathered so one `ValidationError` names all of them (keyed by
    the field at fault), not the first one only: a form shows them all after one save."""

    def __init__(self) -> None:
        self.errors: dict[str, list[str]] = {}

    def check(self, rule: Callable[[], object]) -> bool:
        """Run one rule; True when it passed."""
        try:
            rule()
        except ValidationError as error:
            for field, problems in error.message_dict.items():
                self.errors.setdefault(field, []).extend(problems)
            return False
        return True

    def raise_any(self) -> None:
        if self.errors:
            raise ValidationError(self.errors)


@contextmanager
def refusals() -> Iterator[Refusals]:
    """`with refusals() as rules: rules.check(...)`: raises every refusal at once on leaving."""
    gathered = Refusals()
    yield gathered
    gathered.raise_any()


def in_ledger(name: str, what: str) -> None:
    if not ToolName.objects.filter(name=name).exists():
        raise ValidationError(
            {"tool": f"{name} is not in the tool name ledger: only a name a release listed can be {what}."}
        )


def replacements(name: str, replaced_by: Sequence[str], *, kept: Collection[str] = ()) -> None:
    """Refuse replacements that are not live tools, or that the tool's callers are never listed:
    an app-only tool (only widgets call it) replaces only an app-only tool. `kept`: the stored
    replacements, judged as before (an edit of an old retirement keeps what it named)."""
    registry = selectors.registered_tools()
    problems = rules.replacement_problems(name, replaced_by, registry, selectors.gone_names() - {name})
    problems += [problem for tool in replaced_by if tool not in kept and (problem := app_only_problem(name, tool))]
    if problems:
        raise ValidationError({"replaced_by": [f"{problem}." for problem in problems]})


def app_only_problem(name: str, tool: str, *, role: str = "replace") -> str | None:
    """Why `tool` cannot `role` (replace, be the target of) `name`: it is app-only (only widgets
    call it; hosts never list it to a model) and `name` is not (None when it may)."""
    registry = selectors.registered_tools()
    candidate = registry.get(tool)
    if candidate is None or not candidate.app_only:
        return None
    replaced = registry.get(name)
    if replaced is not None and replaced.app_only:
        return None
    return (
        f"{tool} is app-only (only widgets call it; a model is never listed it), so it cannot {role} {name}: "
        f"pick a live tool a model is listed, or leave it out"
    )


def retire_on_later(retire_on: date | None) -> None:
    problem = rules.retire_on_problem(retire_on, today())
    if problem is not None:
        raise ValidationError({"retire_on": f"{problem}."})


def require_reason(reason: str, what: str) -> None:
    if not reason.strip():
        raise ValidationError({"reason": f"Say why you {what}: the governance history keeps it."})


def supersede(audit: Audit, name: str, *, reason: str, keep_alias: bool = False) -> None:
    """Delete, recorded, what a retirement or an alias of `name` supersedes: its deprecation,
    its alias (unless `keep_alias`), and its contract changes (the retired-tool answer, or the
    alias's target, covers every call)."""
    deprecation = DeprecatedTool.objects.filter(tool__name=name).first()
    if deprecation is not None:
        audit.delete(deprecation, f"Ended the deprecation ({reason})")
    alias = None if keep_alias else ToolAlias.objects.filter(tool__name=name).first()
    if alias is not None:
        audit.delete(alias, f"Ended the alias ({reason})")
    for change in ContractChange.objects.filter(tool__name=name):
        contract_change_remove(audit, change, reason=reason)


def save_scheduled(
    audit: Audit, row: DeprecatedTool | ToolAlias, stored: DeprecatedTool | ToolAlias, headline: str
) -> None:
    """Save a deprecation or alias changed from `stored` (the row as it was, locked) and record
    the change; a retire-on date that moved is the headline."""
    if row.retire_on != stored.retire_on:
        headline = (
            f"Scheduled the retirement of {row.name} for {row.retire_on.isoformat()}"
            if row.retire_on
            else f"Cancelled the scheduled retirement of {row.name}"
        )
    audit.save(row, headline, stored=stored)
