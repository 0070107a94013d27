"""The tool lifecycle's write path: deprecate, alias, schedule and cancel a retirement, retire
when the date comes, un-retire; each with its rules and its place in the governance history."""

from __future__ import annotations

import logging
from datetime import UTC, date, datetime

import pytest
from django.core.exceptions import ValidationError

from governance import selectors, services
from governance.models import ContractChange, DeprecatedTool, GovernanceEvent, RetiredTool, ToolAlias, ToolName
from governance.surface import ChangeKind
from tests.governance.conftest import fake_tool
from tests.support import logs

pytestmark = pytest.mark.django_db

DAY = date(2027, 1, 15)


@pytest.fixture
def release(use_registry, governance_clock):
    """demo-live, demo-next, demo-other are registered; demo-old is a ledger name the release dropped."""
    use_registry(
        fake_tool("demo-live", query=str, old=str),
        fake_tool("demo-next", query=str, limit=int),
        fake_tool("demo-other"),
    )
    for name in ("demo-live", "demo-next", "demo-other", "demo-old"):
        services.ledger_add(name=name, first_seen=date(2026, 1, 1))


def messages(error: pytest.ExceptionInfo[ValidationError]) -> dict[str, list[str]]:
    return error.value.message_dict


def history(name: str) -> list[tuple[str, str, str]]:
    return [(e.subject, e.action, e.via) for e in GovernanceEvent.objects.filter(tool=name)]


def test_deprecate_a_live_tool_with_ordered_replacements_and_a_date(release):
    row = services.deprecation_create(
        name="demo-live", replaced_by=["demo-next", "demo-other"], reason="Merged into demo-next.", retire_on=DAY
    )
    stored = DeprecatedTool.objects.get(tool_id="demo-live")
    assert (stored.replaced_by, stored.retire_on, stored.reason) == (
        ["demo-next", "demo-other"],
        DAY,
        "Merged into demo-next.",
    )
    assert selectors.ledger_statuses()["demo-live"] == "deprecated"
    assert "demo-live" in selectors.live_tools()  # still live: it may replace another
    [event] = GovernanceEvent.objects.filter(tool="demo-live", subject="deprecation")
    assert event.message == (
        "Deprecated demo-live. replaced_by: demo-next, demo-other; since: 2027-01-10; retire_on: 2027-01-15; "
        "reason: Merged into demo-next."
    )
    assert row.as_deprecation().replaced_by == ("demo-next", "demo-other")


@pytest.mark.parametrize(
    ("name", "replaced_by", "retire_on", "field", "message"),
    [
        ("demo-old", ["demo-next"], None, "tool", "demo-old is dropped: only a live tool can be deprecated."),
        (
            "demo-gone",
            ["demo-next"],
            None,
            "tool",
            "demo-gone is not in the tool name ledger: only a name a release listed can be deprecated.",
        ),
        ("demo-live", ["demo-old"], None, "replaced_by", "demo-old is not a live tool."),
        ("demo-live", ["demo-live"], None, "replaced_by", "demo-live cannot replace itself."),
        (
            "demo-live",
            ["demo-next"],
            date(2027, 1, 10),
            "retire_on",
            "2027-01-10 is not after today (2027-01-10, UTC): retire the tool now instead.",
        ),
    ],
    ids=["dropped", "not in the ledger", "dead replacement", "itself", "date not in the future"],
)
def test_deprecation_rules(release, name, replaced_by, retire_on, field, message):
    with pytest.raises(ValidationError) as refused:
        services.deprecation_create(name=name, replaced_by=replaced_by, retire_on=retire_on)
    assert messages(refused) == {field: [message]}
    assert not DeprecatedTool.objects.exists()
    assert not GovernanceEvent.objects.filter(subject="deprecation").exists()


def test_schedule_move_and_cancel_a_retirement(release):
    services.deprecation_create(name="demo-live", replaced_by=["demo-next"])
    services.retirement_schedule(name="demo-live", retire_on=DAY)
    services.retirement_schedule(name="demo-live", retire_on=date(2027, 2, 1))
    services.retirement_cancel(name="demo-live")
    assert DeprecatedTool.objects.get(tool_id="demo-live").retire_on is None
    messages_ = [e.message for e in GovernanceEvent.objects.filter(tool="demo-live", subject="deprecation")]
    assert messages_[1:] == [
        "Scheduled the retirement of demo-live for 2027-01-15. retire_on: — → 2027-01-15.",
        "Scheduled the retirement of demo-live for 2027-02-01. retire_on: 2027-01-15 → 2027-02-01.",
        "Cancelled the scheduled retirement of demo-live. retire_on: 2027-02-01 → —.",
    ]
    with pytest.raises(ValidationError) as nothing:
        services.retirement_cancel(name="demo-live")
    assert messages(nothing) == {"retire_on": ["demo-live has no scheduled retirement to cancel."]}
    with pytest.raises(ValidationError) as live:
        services.retirement_schedule(name="demo-next", retire_on=DAY)
    assert messages(live) == {
        "tool": ["demo-next is neither deprecated nor an alias: deprecate it (with its retire-on date) first."]
    }


def test_a_scheduled_retirement_fires_once_its_day_comes(release, governance_clock, caplog):
    services.contract_change_record(tool="demo-live", input_name="gone", kind=ChangeKind.REMOVED, instead="x")
    services.deprecation_create(name="demo-live", replaced_by=["demo-next"], reason="Use next.", retire_on=DAY)
    assert services.scheduled_retirements_fire() == []  # 2027-01-10: not yet
    governance_clock.set(datetime(2027, 1, 14, 23, 59, 59, tzinfo=UTC), system=True)
    assert services.scheduled_retirements_fire() == []
    assert selectors.ledger_statuses()["demo-live"] == "deprecated"
    governance_clock.set(datetime(2027, 1, 15, 0, 0, tzinfo=UTC), system=True)  # 00:00 UTC on the retire-on date
    assert selectors.ledger_statuses()["demo-live"] == "retired"  # before anyone records it
    with caplog.at_level(logging.WARNING, logger="tools.governance"):
        assert services.scheduled_retirements_fire() == ["demo-live"]
        assert services.scheduled_retirements_fire() == []  # idempotent
    retired = RetiredTool.objects.get(tool_id="demo-live")
    assert (retired.replaced_by, retired.since, retired.message) == (["demo-next"], DAY, "Use next.")
    assert not DeprecatedTool.objects.exists() and not ContractChange.objects.filter(tool_id="demo-live").exists()
    assert history("demo-live")[-4:] == [
        ("deprecation", "created", "code"),
        ("retirement", "created", "schedule"),
        ("deprecation", "deleted", "schedule"),
        ("contract_change", "deleted", "schedule"),
    ]
    assert (
        GovernanceEvent.objects.filter(tool="demo-live", subject="retirement")
        .get()
        .message.startswith("Retired demo-live: its retire-on date, 2027-01-15, came. replaced_by: demo-next;")
    )
    [line] = [r for r in caplog.records if r.getMessage() == "Scheduled retirement fired"]
    assert logs.fields(line) == {"tool": "demo-live", "retire_on": "2027-01-15", "replaced_by": ["demo-next"]}


def test_an_alias_passes_calls_to_a_live_tool_with_a_checked_argument_mapping(release):
    services.contract_change_record(tool="demo-live", input_name="gone", kind=ChangeKind.REMOVED, instead="x")
    services.deprecation_create(name="demo-live", replaced_by=["demo-next"])
    alias = services.alias_create(
        name="demo-live",
        target="demo-next",
        arguments={"old": "query", "fields": None},
        retire_on=DAY,
        reason="Renamed.",
    )
    assert (alias.target_id, alias.arguments) == ("demo-next", {"old": "query", "fields": None})
    assert selectors.ledger_statuses()["demo-live"] == "alias"
    assert "demo-live" not in selectors.live_tools()
    assert not DeprecatedTool.objects.exists() and not ContractChange.objects.filter(tool_id="demo-live").exists()
    assert history("demo-live")[-3:] == [
        ("alias", "created", "code"),
        ("deprecation", "deleted", "code"),
        ("contract_change", "deleted", "code"),
    ]
    event = GovernanceEvent.objects.get(tool="demo-live", subject="alias")
    assert event.message == (
        "Made demo-live an alias of demo-next. target: demo-next; arguments: old → query, fields → (left out); "
        "since: 2027-01-10; retire_on: 2027-01-15; reason: Renamed."
    )


@pytest.mark.parametrize(
    ("name", "target", "arguments", "field", "message"),
    [
        ("demo-old", "demo-old", {}, "target", "demo-old cannot be an alias of itself."),
        ("demo-old", "demo-gone", {}, "target", "demo-gone is not a live tool."),
        ("demo-old", "demo-next", {"q": "qeury"}, "arguments", "qeury (for q) is not an input of demo-next."),
        ("demo-old", "demo-next", {"query": "query"}, "arguments", "query is mapped to itself."),
    ],
    ids=["itself", "missing target", "unknown input", "identity"],
)
def test_alias_rules(release, name, target, arguments, field, message):
    with pytest.raises(ValidationError) as refused:
        services.alias_create(name=name, target=target, arguments=arguments)
    assert messages(refused) == {field: [message]}
    assert not ToolAlias.objects.filter(tool_id=name).exists()


def test_no_name_is_in_two_states_and_undoing_one_takes_a_reason(release):
    services.retired_tool_create(name="demo-old", replaced_by=["demo-next"])
    with pytest.raises(ValidationError) as retired:
        services.alias_create(name="demo-old", target="demo-next")
    assert messages(retired) == {"tool": ["demo-old is retired: un-retire it first."]}
    services.alias_create(name="demo-other", target="demo-next")
    with pytest.raises(ValidationError) as aliased:
        services.deprecation_create(name="demo-other", replaced_by=["demo-next"])
    assert messages(aliased) == {"tool": ["demo-other is an alias: only a live tool can be deprecated."]}
    with pytest.raises(ValidationError) as target:
        services.deprecation_create(name="demo-live", replaced_by=["demo-other"])  # an alias is not live
    assert messages(target) == {"replaced_by": ["demo-other is not a live tool."]}
    alias = ToolAlias.objects.get(tool_id="demo-other")
    with pytest.raises(ValidationError):
        services.alias_remove(alias=alias, reason="")
    services.alias_remove(alias=alias, reason="Renamed back.")
    deprecation = services.deprecation_create(name="demo-other", replaced_by=["demo-next"], retire_on=DAY)
    services.deprecation_withdraw(deprecation=deprecation, reason="Customers need it.")
    services.retired_tool_create(name="demo-other", replaced_by=[])
    assert history("demo-other") == [
        ("ledger", "created", "code"),
        ("alias", "created", "code"),
        ("alias", "deleted", "code"),
        ("deprecation", "created", "code"),
        ("deprecation", "deleted", "code"),
        ("retirement", "created", "code"),
    ]


def test_retiring_ends_a_deprecation(release):
    services.deprecation_create(name="demo-live", replaced_by=["demo-next"], retire_on=DAY)
    services.retired_tool_create(name="demo-live", replaced_by=["demo-next"], message="Early.")
    assert not DeprecatedTool.objects.exists()
    assert history("demo-live")[-2:] == [("retirement", "created", "code"), ("deprecation", "deleted", "code")]


def test_ledger_notes_and_dates_are_corrected_with_a_record_but_the_name_stays(release, django_user_model):
    pm = django_user_model.objects.create_user("pm")
    entry = ToolName.objects.get(name="demo-old")
    services.ledger_update(
        entry=entry, first_seen=date(2025, 6, 30), first_release="1.0.0", note="First public.", by=pm, via="admin"
    )
    stored = ToolName.objects.get(name="demo-old")
    assert (stored.first_seen, stored.first_release, stored.note) == (date(2025, 6, 30), "1.0.0", "First public.")
    event = GovernanceEvent.objects.filter(tool="demo-old").last()
    assert (event.subject, event.action, event.actor, event.via) == ("ledger", "updated", "pm", "admin")
    assert event.changes == {
        "first_seen": ["2026-01-01", "2025-06-30"],
        "first_release": ["", "1.0.0"],
        "note": ["", "First public."],
    }
    services.ledger_update(entry=stored, first_seen=date(2025, 6, 30), first_release="1.0.0", note="First public.")
    assert GovernanceEvent.objects.filter(tool="demo-old").count() == 2  # nothing changed, nothing recorded


def test_a_retire_on_date_fires_even_when_a_replacement_left_meanwhile(release, governance_clock):
    services.deprecation_create(name="demo-live", replaced_by=["demo-next", "demo-other"], retire_on=DAY)
    services.retired_tool_create(name="demo-other", replaced_by=["demo-next"])
    governance_clock.set(datetime(2027, 1, 15, tzinfo=UTC), system=True)
    assert services.scheduled_retirements_fire() == ["demo-live"]
    assert RetiredTool.objects.get(tool_id="demo-live").replaced_by == ["demo-next"]
