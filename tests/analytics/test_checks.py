"""The system checks hold the analytics tables, as migrated, against the log event declarations."""

from __future__ import annotations

from typing import Annotated

import pytest
from django.core.checks import Error
from django.core.management import call_command

from analytics.checks import declaration_issues, migrated_fields
from analytics.ingest.decode import APP_STATUS, FAMILIES, TOOL_CALLS, Family
from analytics.ingest.rollups import ROLLUPS, TOOL_CALLS_DAILY, Rollup
from analytics.models import ToolCallHourly, WidgetFunnelDaily
from core.app_status import APP_STATUS_EVENTS, AppStatusEvent
from core.calls import ToolCall
from core.events import DIMENSION, Count, ShortText


def tables_without(model: str, *columns: str) -> dict:
    tables = {name: dict(fields) for name, fields in migrated_fields().items()}
    for column in columns:
        del tables[model][column]
    return tables


@pytest.mark.django_db
def test_the_migrated_tables_hold_every_declaration():
    assert declaration_issues(FAMILIES, ROLLUPS, migrated_fields()) == []
    call_command("check", "--fail-level", "ERROR")  # registered, and run by a plain `manage.py check`


def test_a_new_outcome_asks_for_its_migration_by_name():
    """A new error code is one line in core/errors.py: the rollups' columns follow from it, and the
    check names the migration that adds them (here, as if `retry_later` were that new code)."""
    tables = tables_without("toolcalldaily", "outcome_retry_later")

    assert declaration_issues([TOOL_CALLS], {TOOL_CALLS: [TOOL_CALLS_DAILY]}, tables) == [
        Error(
            "ToolCallDaily has no column `outcome_retry_later`, which the rollup adds to (the calls that ended "
            "`retry_later`, an outcome core/calls.py declares).",
            hint="Run `python manage.py makemigrations analytics --skip-checks --name "
            "toolcalldaily_outcome_retry_later`, review and commit the migration.",
            obj="ToolCallDaily",
            id="analytics.E003",
        )
    ]


class Redrawn(AppStatusEvent, kw_only=True, frozen=True):
    """A kind a later version might declare, with a field of its own."""

    KIND = "redrawn"
    MESSAGE = "App redrawn"
    frames: Annotated[Count, DIMENSION] | None = None


def test_a_new_field_asks_for_its_column_and_a_dropped_one_for_its_removal():
    newer = Family(
        "AppStatus",
        (*APP_STATUS_EVENTS, Redrawn),
        APP_STATUS.logger,
        APP_STATUS.marks,
        {**(APP_STATUS.kinds or {}), Redrawn.MESSAGE: Redrawn.KIND},
    )
    older = Family(
        "AppStatus",
        tuple(e for e in APP_STATUS_EVENTS if "error_code" not in e.__struct_fields__),
        APP_STATUS.logger,
        APP_STATUS.marks,
        APP_STATUS.kinds,
    )

    assert declaration_issues([newer], {}, migrated_fields()) == [
        Error(
            "AppStatusEvent has no column for `frames`, which Redrawn declares.",
            hint="Run `python manage.py makemigrations analytics --skip-checks --name appstatusevent_frames`, "
            "review and commit the migration.",
            obj="AppStatusEvent",
            id="analytics.E001",
        )
    ]
    assert declaration_issues([older], {}, migrated_fields()) == [
        Error(
            "AppStatusEvent.error_code is a column no event of the AppStatus family declares.",
            hint="Declare the field in core/, or drop the column: "
            "`python manage.py makemigrations analytics --skip-checks --name appstatusevent_drop_error_code`.",
            obj="AppStatusEvent",
            id="analytics.E002",
        )
    ]


def test_a_column_of_another_kind_and_a_rollup_by_a_detail_are_refused():
    tables = {name: dict(fields) for name, fields in migrated_fields().items()}
    tables["toolcallevent"]["bytes"] = tables["toolcallevent"]["tool"]  # a text column for a count
    by_transport = Rollup(ToolCallHourly, "hour", ("client", "transport"), ("calls",))

    issues = declaration_issues([TOOL_CALLS], {TOOL_CALLS: [by_transport]}, tables)

    assert [(issue.id, issue.msg) for issue in issues] == [
        (
            "analytics.E001",
            "ToolCallEvent.bytes is a TextField, but ToolCall declares a whole value (a "
            "BigIntegerField or IntegerField holds it).",
        ),
        (
            "analytics.E004",
            "ToolCallHourly groups by `transport`, which no event of the ToolCall family declares as a dimension.",
        ),
        ("analytics.E003", "ToolCallHourly has no column `transport`, which the rollup adds to."),
    ]


def test_a_derived_dimension_needs_the_fields_it_is_derived_from():
    funnel = Rollup(
        WidgetFunnelDaily,
        "day",
        ("client", "tool", "size", "simplified"),
        ("delivered",),
        derived={"size": ("raw_bytes",), "simplified": ("frames",)},
    )

    issues = declaration_issues([APP_STATUS], {APP_STATUS: [funnel]}, migrated_fields())

    assert [(issue.id, issue.msg) for issue in issues] == [
        (
            "analytics.E004",
            "WidgetFunnelDaily derives `simplified` from `frames`, which no event of the AppStatus family declares.",
        ),
    ]


class Twin(ToolCall, kw_only=True, frozen=True):
    """The tool-call message declared a second time."""

    backend: ShortText = ""


def test_declarations_that_contradict_each_other_are_refused():
    issues = declaration_issues([], {}, {}, events=[ToolCall, Twin])

    assert [(issue.id, issue.msg) for issue in issues] == [
        ("analytics.E005", "Twin: 'Tool call' on tools.calls is also ToolCall's"),
    ]


def test_the_exchange_table_and_the_evidence_rollups_are_held_against_their_declarations():
    """The exchange events' listing is a list of records, held as JSON text; each evidence rollup
    is checked like every other one."""
    from analytics.ingest.decode import EXCHANGE
    from analytics.ingest.evidence import ARGUMENT_FAILURES, LISTED_TOOLS

    assert declaration_issues([EXCHANGE], ROLLUPS, migrated_fields()) == []
    (missing,) = declaration_issues([EXCHANGE], {}, tables_without("exchangeevent", "tools"))
    assert (missing.id, missing.msg) == (
        "analytics.E001",
        "ExchangeEvent has no column for `tools`, which ToolsListed declares.",
    )
    (derived,) = declaration_issues(
        [TOOL_CALLS], {TOOL_CALLS: [LISTED_TOOLS, ARGUMENT_FAILURES]}, migrated_fields()
    )  # the listed tools come from the exchange lines, not the calls
    assert (derived.id, derived.obj) == ("analytics.E004", "ListedToolDaily")
    assert "derives `tool` from `tools`" in derived.msg


def test_a_correctable_outcome_that_is_no_error_code_is_refused():
    issues = declaration_issues([], {}, {}, correctable=("invalid_arguments", "misnamed"))
    assert [(issue.id, issue.obj) for issue in issues] == [("analytics.E006", "CorrectionDaily")]
    assert "`misnamed`" in issues[0].msg
