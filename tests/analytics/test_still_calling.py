"""Who still calls a tool the old way: counted at ingestion per tool, kind, client, tenant, with
first and last seen; the report and the API equal counts taken from the raw events."""

from __future__ import annotations

from collections import defaultdict
from datetime import date

import pytest

from analytics.families import Families
from analytics.models import AppStatusEvent, OldCallerDaily
from analytics.selectors import ReportQuery, still_calling
from core.app_status import AliasCalled, DeprecatedToolCalled, OutdatedCall, RetiredToolCalled
from tests.analytics.conftest import ingest, line

pytestmark = pytest.mark.django_db

D1, D2, D3 = "2027-01-05", "2027-01-06", "2027-01-07"
LINES = [
    line(
        DeprecatedToolCalled,
        f"{D1}T09:00:00",
        tool="tomtom-traffic",
        client="claude-ai",
        tenant="acme",
        replaced_by=["tomtom-routing"],
    ),
    line(
        DeprecatedToolCalled,
        f"{D1}T09:05:00",
        tool="tomtom-traffic",
        client="claude-ai",
        tenant="acme",
        replaced_by=["tomtom-routing"],
    ),
    line(
        DeprecatedToolCalled,
        f"{D2}T10:00:00",
        tool="tomtom-traffic",
        client="claude-ai",
        tenant="acme",
        replaced_by=["tomtom-routing"],
    ),
    line(
        DeprecatedToolCalled,
        f"{D1}T11:00:00",
        tool="tomtom-traffic",
        client="claude-ai",
        tenant="globex",
        replaced_by=["tomtom-routing"],
    ),
    line(
        DeprecatedToolCalled,
        f"{D2}T11:00:00",
        tool="tomtom-traffic",
        client="ChatGPT/1.2026.2",
        tenant="acme",
        replaced_by=["tomtom-routing"],
    ),
    line(
        DeprecatedToolCalled,
        f"{D1}T11:30:00",
        tool="tomtom-traffic",
        client="ChatGPT/1.2026.1",
        tenant="acme",
        replaced_by=["tomtom-routing"],
    ),
    line(
        DeprecatedToolCalled,
        f"{D2}T12:00:00",
        tool="tomtom-traffic",
        client="fleet-agent",
        replaced_by=["tomtom-routing"],
    ),  # an API key: no tenant
    line(
        AliasCalled,
        f"{D1}T08:00:00",
        tool="tomtom-search",
        client="cursor-vscode",
        tenant="acme",
        replaced_by=["tomtom-fuzzy-search"],
    ),
    line(
        AliasCalled,
        f"{D3}T08:00:00",
        tool="tomtom-search",
        client="cursor-vscode",
        tenant="acme",
        replaced_by=["tomtom-fuzzy-search"],
    ),
    line(
        RetiredToolCalled,
        f"{D3}T00:00:01",
        tool="tomtom-traffic",
        client="claude-ai",
        tenant="acme",
        replaced_by=["tomtom-routing"],
    ),
    line(OutdatedCall, f"{D2}T13:00:00", tool="tomtom-ev-routing", client="goose", input="origin", change="removed"),
    line(
        OutdatedCall, f"{D2}T13:00:00", tool="tomtom-ev-routing", client="goose", input="destination", change="removed"
    ),
]
ALL = ReportQuery(start=date(2027, 1, 5), end=date(2027, 1, 7))


def from_raw_events(group: str = "client") -> list[tuple]:
    """The report counted straight from the stored raw events: calls, not lines (a call sending
    two outdated inputs is logged as two `Outdated call` lines of one request id)."""
    families = Families.load()
    seen: dict[tuple, list] = defaultdict(lambda: [0, None, None])
    calls: set[tuple] = set()
    for event in AppStatusEvent.objects.filter(
        kind__in=["deprecated_tool", "alias_call", "retired_tool", "outdated_call"]
    ):
        host = families.family_of(event.client) if group == "family" else event.client
        row = seen[(event.tool, event.kind, host, families.family_of(event.client), event.tenant)]
        call = (event.request_id, event.client, event.tool) if event.kind == "outdated_call" else (event.event_id,)
        row[0] += call not in calls
        calls.add(call)
        row[1] = event.time if row[1] is None else min(row[1], event.time)
        row[2] = event.time if row[2] is None else max(row[2], event.time)
    return sorted(((*key, *values) for key, values in seen.items()), key=lambda r: (r[0], r[1], -r[5], r[2], r[4]))


def reported(query: ReportQuery) -> list[tuple]:
    return [
        (r.tool, r.kind, r.client, r.family, r.tenant, r.calls, r.first_seen, r.last_seen) for r in still_calling(query)
    ]


def test_who_still_calls_equals_the_raw_events_per_host_and_tenant():
    ingest(*LINES)
    ingest(*LINES[:3])  # the same lines again count once
    assert reported(ALL) == from_raw_events()
    (outdated,) = [r for r in reported(ALL) if r[1] == "outdated_call"]
    assert outdated[5] == 1  # one call with two outdated inputs: one call (issue #43), not `calls: 2`
    traffic = [r for r in reported(ALL) if r[0] == "tomtom-traffic" and r[1] == "deprecated_tool"]
    assert [(r[2], r[4], r[5]) for r in traffic] == [
        ("claude-ai", "acme", 3),
        ("ChatGPT/1.2026.1", "acme", 1),
        ("ChatGPT/1.2026.2", "acme", 1),
        ("claude-ai", "globex", 1),
        ("fleet-agent", "", 1),
    ]
    assert OldCallerDaily.objects.filter(tenant="acme").exists()  # rolled up at ingestion, per tenant


def test_grouped_by_host_family_it_still_equals_the_raw_events():
    ingest(*LINES)
    by_family = ReportQuery(start=ALL.start, end=ALL.end, group="family")
    assert reported(by_family) == from_raw_events("family")
    acme = [r for r in reported(by_family) if r[1] == "deprecated_tool" and r[4] == "acme"]
    assert [(r[2], r[5], r[6].isoformat()) for r in acme] == [
        ("Claude (desktop, web)", 3, "2027-01-05T09:00:00+00:00"),
        ("ChatGPT", 2, "2027-01-05T11:30:00+00:00"),
    ]


@pytest.fixture
def staff_client(client, django_user_model):
    client.force_login(django_user_model.objects.create_user("ops", is_staff=True))
    return client


def test_one_tool_and_one_day(staff_client):
    ingest(*LINES)
    day = ReportQuery(start=date(2027, 1, 6), end=date(2027, 1, 6), tool="tomtom-traffic")
    assert [(r[1], r[2], r[5]) for r in reported(day)] == [
        ("deprecated_tool", "ChatGPT/1.2026.2", 1),
        ("deprecated_tool", "claude-ai", 1),
        ("deprecated_tool", "fleet-agent", 1),
    ]
    body = staff_client.get("/api/analytics/still-calling?start=2027-01-05&end=2027-01-07&tool=tomtom-search").json()
    assert body == [
        {
            "tool": "tomtom-search",
            "kind": "alias_call",
            "client": "cursor-vscode",
            "family": "Cursor",
            "tenant": "acme",
            "calls": 2,
            "first_seen": "2027-01-05T08:00:00Z",
            "last_seen": "2027-01-07T08:00:00Z",
        }
    ]
