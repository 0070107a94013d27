"""The lifecycle from scripts and CI: one command per action, through the same services as the
admin, each recorded with the command's name and, with --by, who ran it."""

from __future__ import annotations

import io
from datetime import UTC, date, datetime

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from governance import selectors
from governance.models import DeprecatedTool, GovernanceEvent, RetiredTool, ToolAlias

pytestmark = pytest.mark.django_db


def run(*args: str) -> str:
    out = io.StringIO()
    call_command(*args, stdout=out)
    return out.getvalue().strip()


def history(name: str) -> list[tuple[str, str, str, str]]:
    return [(e.subject, e.action, e.actor, e.via) for e in GovernanceEvent.objects.filter(tool=name)]


def test_one_tool_through_every_command(governance_clock, django_user_model):
    django_user_model.objects.create_user("pm")
    assert run(
        "deprecate_tool",
        "tomtom-traffic",
        "--replaced-by",
        "tomtom-routing",
        "--replaced-by",
        "tomtom-geocode",
        "--reason",
        "Incidents now come with routes.",
        "--by",
        "pm",
    ) == (
        "tomtom-traffic is deprecated, with no retire-on date; callers are told to use tomtom-routing or "
        "tomtom-geocode; every replica answers so within 5 s plus one request."
    )
    assert run("schedule_retirement", "tomtom-traffic", "2027-01-15") == (
        "tomtom-traffic is retired on every replica from 2027-01-15 00:00 UTC."
    )
    assert run("cancel_retirement", "tomtom-traffic").startswith("tomtom-traffic is still deprecated, with no")
    assert run("deprecate_tool", "tomtom-traffic", "--retire-on", "2027-02-01").startswith(
        "tomtom-traffic is deprecated, retired on 2027-02-01; callers are told to use tomtom-routing or tomtom-geocode"
    )
    assert DeprecatedTool.objects.get(tool_id="tomtom-traffic").replaced_by == ["tomtom-routing", "tomtom-geocode"]
    with pytest.raises(CommandError, match="tomtom-traffic is live in this release: retiring it is the kill switch"):
        run("retire_tool", "tomtom-traffic")
    assert run("retire_tool", "tomtom-traffic", "--kill-switch") == (
        "tomtom-traffic is retired; callers are told to use tomtom-routing or tomtom-geocode; every replica "
        "answers so within 5 s plus one request."
    )
    retired = RetiredTool.objects.get(tool_id="tomtom-traffic")
    assert (retired.replaced_by, retired.message) == (
        ["tomtom-routing", "tomtom-geocode"],
        "Incidents now come with routes.",
    )
    with pytest.raises(CommandError, match="--reason"):
        run("unretire_tool", "tomtom-traffic")
    assert run("unretire_tool", "tomtom-traffic", "--reason", "Customers need incidents by area.").startswith(
        "tomtom-traffic is no longer retired"
    )
    assert selectors.ledger_statuses()["tomtom-traffic"] == "live"
    lifecycle = [event for event in history("tomtom-traffic") if event[0] in ("deprecation", "retirement")]
    assert [(subject, action, via) for subject, action, _, via in lifecycle] == [
        ("deprecation", "created", "deprecate_tool"),
        ("deprecation", "updated", "schedule_retirement"),
        ("deprecation", "updated", "cancel_retirement"),
        ("deprecation", "updated", "deprecate_tool"),
        ("retirement", "created", "retire_tool"),
        ("deprecation", "deleted", "retire_tool"),
        ("retirement", "deleted", "unretire_tool"),
    ]
    assert lifecycle[0][2] == "pm"
    assert ("contract_change", "deleted", "", "retire_tool") in history("tomtom-traffic")  # retiring dropped them


def test_an_alias_from_the_command_line(governance_clock, tmp_path):
    from governance import services

    services.ledger_add(name="tomtom-search", first_seen=date(2025, 6, 30))
    assert run(
        "alias_tool",
        "tomtom-search",
        "tomtom-fuzzy-search",
        "--argument",
        "q=query",
        "--argument",
        "ui=",
        "--retire-on",
        "2027-03-01",
    ) == (
        "tomtom-search is an alias of tomtom-fuzzy-search, until 2027-03-01; every replica answers so within 5 s "
        "plus one request."
    )
    assert ToolAlias.objects.get(tool_id="tomtom-search").arguments == {"q": "query", "ui": None}
    with pytest.raises(CommandError, match="Refused, nothing changed:\n  arguments: qeury \\(for q\\) is not an input"):
        run("alias_tool", "tomtom-search", "--argument", "q=qeury")
    with pytest.raises(CommandError, match="write OLD=NEW"):
        run("alias_tool", "tomtom-search", "--argument", "q")
    with pytest.raises(CommandError, match="tomtom-poi-search is live in this release: its calls would reach"):
        run("alias_tool", "tomtom-poi-search", "tomtom-fuzzy-search")
    assert run("alias_tool", "tomtom-poi-search", "tomtom-fuzzy-search", "--redirect").startswith(
        "tomtom-poi-search is an alias of tomtom-fuzzy-search;"
    )
    governance_clock.set(datetime(2027, 3, 1, tzinfo=UTC), system=True)  # the date truly came
    out = io.StringIO()
    call_command("export_tool_surface", output=tmp_path / "exported.json", stdout=out)
    assert out.getvalue().startswith("Retired tomtom-search: its retire-on date came.")
    assert RetiredTool.objects.get(tool_id="tomtom-search").replaced_by == ["tomtom-fuzzy-search"]


def test_refusals_name_the_field_and_change_nothing(governance_clock):
    with pytest.raises(CommandError) as refused:
        run("deprecate_tool", "tomtom-traffic", "--replaced-by", "tomtom-static-map", "--retire-on", "2027-01-01")
    assert str(refused.value) == (  # every broken rule at once, each on its field
        "Refused, nothing changed:\n"
        "  replaced_by: tomtom-static-map is not a live tool.\n"
        "  retire_on: 2027-01-01 is not after today (2027-01-10, UTC): retire the tool now instead."
    )
    with pytest.raises(CommandError, match=r"'15/01/2027' is not a date: write YYYY-MM-DD\."):
        run("schedule_retirement", "tomtom-traffic", "15/01/2027")
    with pytest.raises(CommandError, match="--by: no user is named 'nobody'"):
        run("cancel_retirement", "tomtom-traffic", "--by", "nobody")
    assert not DeprecatedTool.objects.exists()
