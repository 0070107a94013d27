"""System checks: the analytics tables hold what the log events declare (core/). Every id is
documented in docs/analytics.md ("System checks").

The tables are judged as the migrations leave them (read from the migration files, no database
needed), so a declaration that changed without its migration fails `manage.py check` at once, and
the hint names the migration to make (with `--skip-checks`: makemigrations runs the system checks
first, and the very error that asks for the migration would stop it):

- `analytics.E001`: a family's raw event table lacks a column for a declared field, or its column
  holds another kind of value.
- `analytics.E002`: a raw event table has a column no declaration names.
- `analytics.E003`: a rollup's table lacks a column the rollup adds to (a new outcome's, say).
- `analytics.E004`: a rollup groups by a field its family does not declare as a dimension (or,
  for a dimension it derives, `Rollup.derived`, from fields its family does not declare).
- `analytics.E005`: the declarations contradict each other (core/events.py, `declaration_problems`).
- `analytics.E006`: the self-correction figures count an outcome core/calls.py does not declare
  (`CorrectionDaily`, analytics.models.CORRECTABLE).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from django.core import checks
from django.core.checks import CheckMessage, Error

from analytics.ingest.decode import FAMILIES, Column, Family
from analytics.ingest.rollups import ROLLUPS, Rollup
from analytics.ingest.store import EVENT_MODELS
from analytics.models import CORRECTABLE, OUTCOME_COLUMNS
from core.calls import OUTCOMES
from core.catalog import EVENTS
from core.events import Event, Role, declaration_problems

HOLDS: dict[str, tuple[str, ...]] = {
    "text": ("TextField", "CharField"),
    "texts": ("TextField",),
    "whole": ("BigIntegerField", "IntegerField"),
    "number": ("FloatField",),
    "records": ("TextField",),
}
"""The model fields that hold each kind of declared value."""
KEY_COLUMNS = {"id", "pk", "time", "event_id", "kind", "raw"}
"""A raw event table's columns that are not declared fields: identity, kind and the line itself."""


def migrated_fields() -> dict[str, Mapping[str, Any]]:
    """Each analytics model's fields as the migrations leave them (lower-case model name -> fields)."""
    from django.db.migrations.loader import MigrationLoader

    state = MigrationLoader(None, ignore_no_migrations=True).project_state()
    return {name: model.fields for (app, name), model in state.models.items() if app == "analytics"}


@checks.register("analytics")
def check_declarations(app_configs: Iterable[Any] | None = None, **kwargs: Any) -> list[CheckMessage]:
    return declaration_issues(FAMILIES, ROLLUPS, migrated_fields())


def declaration_issues(
    families: Iterable[Family],
    rollups: Mapping[Family, Iterable[Rollup]],
    tables: Mapping[str, Mapping[str, Any]],
    events: Iterable[type[Event]] = EVENTS,
    correctable: Iterable[str] = CORRECTABLE,
) -> list[CheckMessage]:
    """What `check_declarations` reports, for any families, rollups, migrated tables and events."""
    issues: list[CheckMessage] = [
        Error(problem, hint="Correct the declarations in core/.", id="analytics.E005")
        for problem in declaration_problems(events)
    ]
    issues += [
        Error(
            f"CorrectionDaily counts calls ending `{outcome}`, which is not an outcome core/calls.py declares.",
            hint="Name an error code of core/errors.py in analytics.models.CORRECTABLE.",
            obj="CorrectionDaily",
            id="analytics.E006",
        )
        for outcome in correctable
        if outcome not in OUTCOMES
    ]
    for family in families:
        model = EVENT_MODELS[family.name]
        fields = tables.get(model.__name__.lower(), {})
        issues += _event_table_issues(family, model.__name__, fields)
        for rollup in rollups.get(family, ()):
            issues += _rollup_issues(family, rollup, tables.get(rollup.model.__name__.lower(), {}))
    return issues


def _migration(model: str, what: str) -> str:
    """The hint that names the migration to make."""
    return f"Run `{_makemigrations(model, what)}`, review and commit the migration."


def _makemigrations(model: str, what: str) -> str:
    return f"python manage.py makemigrations analytics --skip-checks --name {model.lower()}_{what}"


def _event_table_issues(family: Family, model: str, fields: Mapping[str, Any]) -> list[CheckMessage]:
    issues: list[CheckMessage] = []
    declared = {column.name: column for column in family.columns}
    for name, column in declared.items():
        field = fields.get(name)
        if field is None:
            issues.append(
                Error(
                    f"{model} has no column for `{name}`, which {_declared_by(family, column)} declares.",
                    hint=_migration(model, name),
                    obj=model,
                    id="analytics.E001",
                )
            )
        elif type(field).__name__ not in HOLDS[column.kind]:
            issues.append(
                Error(
                    f"{model}.{name} is a {type(field).__name__}, but {_declared_by(family, column)} declares "
                    f"a {column.kind} value (a {' or '.join(HOLDS[column.kind])} holds it).",
                    hint=_migration(model, name),
                    obj=model,
                    id="analytics.E001",
                )
            )
    for name in fields:
        if name not in declared and name not in KEY_COLUMNS:
            issues.append(
                Error(
                    f"{model}.{name} is a column no event of the {family.name} family declares.",
                    hint=f"Declare the field in core/, or drop the column: `{_makemigrations(model, 'drop_' + name)}`.",
                    obj=model,
                    id="analytics.E002",
                )
            )
    return issues


def _declared_by(family: Family, column: Column) -> str:
    if column.name in ("replica", "pid"):
        return "the log formatter's envelope"
    field = column.record or column.name
    names = [event.__name__ for event in family.events if field in event.__struct_fields__]
    return ", ".join(names) if len(names) < 4 else f"{names[0]} and {len(names) - 1} other events"


def _rollup_issues(family: Family, rollup: Rollup, fields: Mapping[str, Any]) -> list[CheckMessage]:
    model = rollup.model.__name__
    issues: list[CheckMessage] = []
    dimensions = {*family.names(Role.DIMENSION), *(("kind",) if family.kinds is not None else ())}
    declared = set(family.column_names)
    for name in rollup.dimensions:
        if name in rollup.derived:
            missing = [source for source in rollup.derived[name] if source not in declared]
            if missing:
                issues.append(
                    Error(
                        f"{model} derives `{name}` from {', '.join(f'`{m}`' for m in missing)}, which no event of the "
                        f"{family.name} family declares.",
                        hint="Declare the field in core/, or derive the dimension from declared fields.",
                        obj=model,
                        id="analytics.E004",
                    )
                )
        elif name not in dimensions:
            issues.append(
                Error(
                    f"{model} groups by `{name}`, which no event of the {family.name} family declares as a dimension.",
                    hint="Declare the field with DIMENSION in core/, or leave it out of the rollup.",
                    obj=model,
                    id="analytics.E004",
                )
            )
    outcomes = {column: outcome for outcome, column in OUTCOME_COLUMNS.items()}
    for name in rollup.columns:
        if name not in fields:
            what = ""
            if name in outcomes:
                what = f" (the calls that ended `{outcomes[name]}`, an outcome core/calls.py declares)"
            issues.append(
                Error(
                    f"{model} has no column `{name}`, which the rollup adds to{what}.",
                    hint=_migration(model, name),
                    obj=model,
                    id="analytics.E003",
                )
            )
    return issues
