"""The evidence pages (issue #43): the selectors give exact figures from rollup rows made here,
the page shows them, and each action links to the governance admin's form, pre-filled; one
session's timeline lists its events in order, bounded, and every request page links to it."""

from __future__ import annotations

import json
import re
from datetime import UTC, date, datetime
from html import unescape
from itertools import count
from pathlib import Path
from urllib.parse import urlencode

import pytest

from analytics.models import (
    AppStatusEvent,
    ArgumentFailureDaily,
    CorrectionDaily,
    ExchangeEvent,
    ListedToolDaily,
    ProtocolMixDaily,
    RefusedRequestDaily,
    ToolCallDaily,
    ToolCallEvent,
    UnknownToolDaily,
)
from analytics.selectors import ReportQuery
from analytics.selectors.evidence import (
    argument_failures,
    client_versions,
    closest_tool,
    corrections,
    listed_against_called,
    never_called,
    protocol_versions,
    refused_requests,
    unknown_names,
)
from analytics.selectors.timeline import session_timeline
from tests.analytics.conftest import ingest
from tests.analytics.test_dashboard import table_rows

pytestmark = pytest.mark.django_db

D0, D1, D2 = "2026-11-01", "2026-11-02", "2026-11-03"
CLAUDE, CHATGPT = "Claude (desktop, web)", "ChatGPT"
PAGE = f"/analytics/evidence/?start={D1}&end={D2}"
_ids = count()


def at(day: str, clock: str = "00:00") -> datetime:
    return datetime.fromisoformat(f"{day}T{clock}:00").replace(tzinfo=UTC)


def query(**filters: str) -> ReportQuery:
    return ReportQuery(start=date.fromisoformat(D1), end=date.fromisoformat(D2), **filters)  # type: ignore[arg-type]


def listed(day: str, client: str, tool: str, listings: int, size: int) -> None:
    ListedToolDaily.objects.create(
        day=at(day), client=client, tool=tool, backend="tomtom-maps", listings=listings, bytes=listings * size
    )


def called(day: str, client: str, tool: str, calls: int, tenant: str = "") -> None:
    ToolCallDaily.objects.create(
        day=at(day),
        client=client,
        tool=tool,
        backend="tomtom-maps",
        tenant=tenant,
        calls=calls,
        upstream_calls=0,
        bytes=0,
        total_timed=0,
        total_ms_sum=0,
        upstream_timed=0,
        upstream_ms_sum=0,
    )


def unknown(day: str, client: str, tool: str, calls: int, first: str, last: str) -> None:
    UnknownToolDaily.objects.create(
        day=at(day), client=client, tool=tool, calls=calls, first_seen=at(day, first), last_seen=at(day, last)
    )


@pytest.fixture
def evidence() -> None:
    """Two days (D1, D2) of evidence from Claude, two ChatGPT versions and Cursor, and a day
    before them (D0) that no report of D1..D2 may count."""
    listed(D0, "claude-ai", "tomtom-geocode", 100, 800)
    listed(D1, "claude-ai", "tomtom-geocode", 3, 800)
    listed(D2, "claude-ai", "tomtom-geocode", 2, 800)
    listed(D1, "claude-ai", "tomtom-traffic-flow", 3, 1000)
    listed(D1, "ChatGPT/1.2026.1", "tomtom-geocode", 1, 800)
    listed(D2, "ChatGPT/1.2026.2", "tomtom-geocode", 1, 800)
    listed(D1, "ChatGPT/1.2026.1", "tomtom-traffic-flow", 1, 1000)
    called(D0, "claude-ai", "tomtom-traffic-flow", 50)
    called(D1, "claude-ai", "tomtom-geocode", 7, tenant="acme")
    called(D2, "claude-ai", "tomtom-geocode", 2)
    called(D1, "ChatGPT/1.2026.1", "tomtom-geocode", 4)
    called(D1, "claude-ai", "tomtom-made-up", 5)  # an unknown name: never listed, not a row

    unknown(D0, "claude-ai", "tomtom-geocoder", 40, "09:00", "10:00")
    unknown(D1, "claude-ai", "tomtom-geocoder", 4, "09:00", "10:00")
    unknown(D2, "claude-ai", "tomtom-geocoder", 2, "08:00", "09:00")
    unknown(D2, "ChatGPT/1.2026.2", "tomtom-geocoder", 3, "07:00", "12:00")
    unknown(D1, "cursor-vscode", "tomtom-nearby", 1, "11:00", "11:00")  # an alias already
    unknown(D1, "cursor-vscode", "tomtom-routing", 1, "11:00", "11:00")  # a live tool
    unknown(D1, "cursor-vscode", "zzzz-qqqq", 1, "11:00", "11:00")  # like no tool

    for day, client, tool, outcome, failures, corrected in (
        (D0, "claude-ai", "tomtom-routing", "invalid_arguments", 90, 0),
        (D1, "claude-ai", "tomtom-routing", "invalid_arguments", 10, 6),
        (D2, "claude-ai", "tomtom-routing", "invalid_arguments", 2, 2),
        (D1, "ChatGPT/1.2026.1", "tomtom-waypoint-routing", "retired", 5, 4),
        (D2, "ChatGPT/1.2026.2", "tomtom-routing", "invalid_arguments", 3, 0),
    ):
        CorrectionDaily.objects.create(
            day=at(day), client=client, tool=tool, outcome=outcome, failures=failures, corrected=corrected
        )
    for day, client, path, calls in (
        (D1, "claude-ai", "locations[1]", 7),
        (D2, "claude-ai", "locations[1]", 1),
        (D1, "ChatGPT/1.2026.1", "locations[1]", 2),
        (D1, "claude-ai", "travelMode", 3),
        (D0, "claude-ai", "travelMode", 30),
    ):
        ArgumentFailureDaily.objects.create(day=at(day), client=client, tool="tomtom-routing", path=path, calls=calls)
    for day, client, client_version, protocol, kind, n in (
        (D1, "claude-ai", "0.9.1", "2025-06-18", "session", 3),
        (D2, "claude-ai", "0.9.2", "2025-06-18", "session", 1),
        (D1, "claude-ai", "", "2025-06-18", "listed", 5),
        (D1, "claude-ai", "", "2025-06-18", "call", 20),
        (D1, "claude-ai", "", "2025-06-18", "refused", 2),
        (D1, "ChatGPT/1.2026.1", "1.2026.1", "2025-03-26", "session", 2),
        (D1, "ChatGPT/1.2026.1", "", "", "call", 4),
        (D0, "claude-ai", "0.9.0", "2025-03-26", "session", 9),
    ):
        ProtocolMixDaily.objects.create(
            day=at(day), client=client, client_version=client_version, protocol_version=protocol, kind=kind, count=n
        )
    for day, client, method, code, n, first, last in (
        (D1, "claude-ai", "tools/call", -32602, 2, "09:00", "09:30"),
        (D1, "ChatGPT/1.2026.1", "resources/subscribe", -32601, 2, "10:00", "11:00"),
        (D2, "ChatGPT/1.2026.2", "resources/subscribe", -32601, 1, "08:00", "08:00"),
    ):
        RefusedRequestDaily.objects.create(
            day=at(day),
            client=client,
            method=method,
            code=code,
            count=n,
            first_seen=at(day, first),
            last_seen=at(day, last),
        )


@pytest.fixture
def staff_client(client, django_user_model):
    client.force_login(django_user_model.objects.create_user("pm", is_staff=True))
    return client


# --- Selectors: exact figures -----------------------------------------------------------------------


@pytest.mark.usefixtures("evidence")
def test_listed_against_called_per_host_and_family():
    by_client = {(r.host, r.tool): (r.listings, r.listing_bytes, r.calls) for r in listed_against_called(query()).rows}
    by_family = {
        (r.host, r.tool): (r.listings, r.listing_bytes, r.calls)
        for r in listed_against_called(query(group="family")).rows
    }

    assert by_client == {
        ("claude-ai", "tomtom-geocode"): (5, 4000, 9),
        ("claude-ai", "tomtom-traffic-flow"): (3, 3000, 0),
        ("ChatGPT/1.2026.1", "tomtom-geocode"): (1, 800, 4),
        ("ChatGPT/1.2026.2", "tomtom-geocode"): (1, 800, 0),
        ("ChatGPT/1.2026.1", "tomtom-traffic-flow"): (1, 1000, 0),
    }
    assert by_family == {
        (CLAUDE, "tomtom-geocode"): (5, 4000, 9),
        (CLAUDE, "tomtom-traffic-flow"): (3, 3000, 0),
        (CHATGPT, "tomtom-geocode"): (2, 1600, 4),
        (CHATGPT, "tomtom-traffic-flow"): (1, 1000, 0),
    }


@pytest.mark.usefixtures("evidence")
def test_tools_listed_and_never_called_with_what_they_cost():
    found = never_called(query(group="family"))

    assert [(n.tool, n.listings, n.listing_bytes, n.hosts, n.status) for n in found.rows] == [
        ("tomtom-traffic-flow", 4, 4000, (CHATGPT, CLAUDE), "live")
    ]
    assert (found.total, found.returned, found.truncated) == (1, 1, False)
    # One host called it (the day before is not counted); narrowed to ChatGPT, it is never called there.
    assert [n.tool for n in never_called(query(family=CHATGPT, group="family")).rows] == ["tomtom-traffic-flow"]
    assert [n.tool for n in never_called(query(client="ChatGPT/1.2026.2")).rows] == ["tomtom-geocode"]


@pytest.mark.usefixtures("evidence")
def test_names_that_do_not_exist_with_hosts_first_and_last_seen_and_the_closest_tool():
    found = {n.name: n for n in unknown_names(query(group="family")).rows}

    geocoder = found["tomtom-geocoder"]
    assert (geocoder.calls, geocoder.hosts) == (9, ((CLAUDE, 6), (CHATGPT, 3)))
    assert (geocoder.first_seen, geocoder.last_seen) == (at(D1, "09:00"), at(D2, "12:00"))
    assert (geocoder.closest, geocoder.status, geocoder.aliasable) == ("tomtom-geocode", "", True)
    assert (found["tomtom-nearby"].status, found["tomtom-nearby"].aliasable) == ("alias", False)
    assert (found["tomtom-routing"].status, found["tomtom-routing"].aliasable) == ("live", False)
    assert (found["zzzz-qqqq"].closest, found["zzzz-qqqq"].aliasable) == ("", False)
    assert list(found) == ["tomtom-geocoder", "tomtom-nearby", "tomtom-routing", "zzzz-qqqq"]


def test_the_closest_tool_is_a_live_one_alike_enough():
    live = ["tomtom-geocode", "tomtom-reverse-geocode", "tomtom-routing"]

    assert closest_tool("tomtom-geocoder", live) == "tomtom-geocode"
    assert closest_tool("tomtom_route", live) == "tomtom-routing"
    assert closest_tool("weather", live) == ""


@pytest.mark.usefixtures("evidence")
def test_self_correction_per_tool_and_host_and_the_failing_arguments():
    by_family = {(c.host, c.tool): c for c in corrections(query(group="family")).rows}

    routing = by_family[(CLAUDE, "tomtom-routing")]
    assert (routing.failures, routing.corrected, routing.rate) == (12, 8, pytest.approx(8 / 12))
    assert routing.by_outcome == (("invalid_arguments", 12, 8),)
    chatgpt = by_family[(CHATGPT, "tomtom-routing")]
    assert (chatgpt.failures, chatgpt.corrected, chatgpt.rate) == (3, 0, 0)
    assert by_family[(CHATGPT, "tomtom-waypoint-routing")].by_outcome == (("retired", 5, 4),)
    assert [(a.tool, a.path, a.calls, a.hosts) for a in argument_failures(query()).rows] == [
        ("tomtom-routing", "locations[1]", 10, (("claude-ai", 8), ("ChatGPT/1.2026.1", 2))),
        ("tomtom-routing", "travelMode", 3, (("claude-ai", 3),)),
    ]


@pytest.mark.usefixtures("evidence")
def test_protocol_and_client_mix_and_refused_requests():
    protocols = [
        (r.host, r.protocol_version, r.sessions, r.listed, r.calls, r.refused) for r in protocol_versions(query()).rows
    ]
    versions = [(r.host, r.client, r.client_version, r.sessions) for r in client_versions(query(group="family")).rows]
    refused = [
        (r.host, r.method, r.code, r.count, r.first_seen, r.last_seen)
        for r in refused_requests(query(group="family")).rows
    ]

    assert protocols == [
        ("ChatGPT/1.2026.1", "2025-03-26", 2, 0, 0, 0),
        ("ChatGPT/1.2026.1", "", 0, 0, 4, 0),
        ("claude-ai", "2025-06-18", 4, 5, 20, 2),
    ]
    assert versions == [
        (CHATGPT, "ChatGPT/1.2026.1", "1.2026.1", 2),
        (CLAUDE, "claude-ai", "0.9.1", 3),
        (CLAUDE, "claude-ai", "0.9.2", 1),
    ]
    assert refused == [
        (CHATGPT, "resources/subscribe", -32601, 3, at(D1, "10:00"), at(D2, "08:00")),
        (CLAUDE, "tools/call", -32602, 2, at(D1, "09:00"), at(D1, "09:30")),
    ]


@pytest.mark.usefixtures("evidence")
def test_lists_are_bounded_and_say_how_many_there_were(monkeypatch):
    from analytics.selectors import evidence

    monkeypatch.setattr(evidence, "MAX_ROWS", 2)
    found = unknown_names(query())

    assert (found.total, found.returned, found.truncated) == (4, 2, True)
    assert [n.name for n in found.rows] == ["tomtom-geocoder", "tomtom-nearby"]


# --- The page ---------------------------------------------------------------------------------------


def test_only_staff_see_the_evidence(client, django_user_model):
    for url in (PAGE, "/analytics/sessions/sess-a/"):
        assert client.get(url).status_code == 302
    client.force_login(django_user_model.objects.create_user("someone"))
    for url in (PAGE, "/analytics/sessions/sess-a/"):
        assert client.get(url)["Location"].startswith("/admin/login/")


@pytest.mark.usefixtures("evidence")
def test_the_page_shows_the_figures_each_with_what_it_counts(staff_client):
    html = staff_client.get(f"{PAGE}&group=family").content.decode()

    assert table_rows(html, "listed-called") == [
        [CLAUDE, "tomtom-geocode", "5", "4,000", "9", "444.4", ""],
        [CLAUDE, "tomtom-traffic-flow", "3", "3,000", "0", "—", "never called"],
        [CHATGPT, "tomtom-geocode", "2", "1,600", "4", "400.0", ""],
        [CHATGPT, "tomtom-traffic-flow", "1", "1,000", "0", "—", "never called"],
    ]
    assert table_rows(html, "never-called") == [
        ["tomtom-traffic-flow", f"{CHATGPT}, {CLAUDE}", "4", "4,000", "live", "Deprecate…"]
    ]
    unknown_rows = table_rows(html, "unknown-names")
    assert unknown_rows[0] == [
        "tomtom-geocoder",
        "9",
        f"{CLAUDE} (6), {CHATGPT} (3)",
        f"{D1} 09:00",
        f"{D2} 12:00",
        "tomtom-geocode",
        "no such tool",
        "Alias this name to tomtom-geocode…",
    ]
    assert [row[-1] for row in unknown_rows[1:]] == ["", "", ""]
    assert table_rows(html, "self-correction")[0][:6] == [
        CLAUDE,
        "tomtom-routing",
        "12",
        "8",
        "66.7%",
        "invalid_arguments 12 (8 corrected)",
    ]
    assert table_rows(html, "refused-requests")[0][:4] == [CHATGPT, "resources/subscribe", "-32601", "3"]
    assert [row[:4] for row in table_rows(html, "protocol-versions")] == [
        [CHATGPT, "2025-03-26", "2", "0"],
        [CHATGPT, "(not known)", "0", "0"],
        [CLAUDE, "2025-06-18", "4", "5"],
    ]
    for counts in ("listed", "unknown", "correction", "protocol"):
        section = re.search(rf'<section class="analytics-evidence" id="{counts}".*?</section>', html, re.S)
        assert (
            section
            and "<strong>Counts</strong>" in section.group(0)
            and "<strong>Cannot see</strong>" in section.group(0)
        )
    assert f"the whole days {D1} to {D2}" in html
    assert 'href="/analytics/evidence/?' in html  # the navigation links the page


@pytest.mark.usefixtures("evidence")
def test_each_action_links_to_the_admin_form_pre_filled(staff_client):
    html = unescape(staff_client.get(PAGE).content.decode())

    assert (
        f'href="/admin/tools/toolalias/add/?{urlencode({"name": "tomtom-geocoder", "target": "tomtom-geocode"})}"'
        in html
    )
    assert f'href="/admin/tools/deprecatedtool/add/?{urlencode({"tool": "tomtom-traffic-flow"})}"' in html
    assert "=tomtom-nearby" not in html and "=zzzz-qqqq" not in html
    table = re.search(r'<table id="self-correction".*?</table>', html, re.S)
    assert table
    arguments = re.search(r'href="([^"]*)">See the failing arguments</a>', table.group(0))
    failing = re.search(r'href="([^"]*)">See the failing calls</a>', table.group(0))
    assert arguments and "tool=tomtom-routing" in arguments.group(1) and "client=claude-ai" in arguments.group(1)
    assert arguments.group(1).startswith("/analytics/evidence/?") and arguments.group(1).endswith(
        "#failing-arguments-title"
    )
    assert failing and failing.group(1).startswith("/analytics/calls/?") and "class=caller" in failing.group(1)


@pytest.mark.usefixtures("evidence")
def test_the_alias_form_opens_with_the_name_and_the_target(staff_client, django_user_model):
    admin = django_user_model.objects.create_superuser("owner", password="x")
    staff_client.force_login(admin)

    form = staff_client.get(
        f"/admin/tools/toolalias/add/?{urlencode({'name': 'tomtom-geocoder', 'target': 'tomtom-geocode'})}"
    )

    assert form.status_code == 200
    html = form.content.decode()
    assert "tomtom-geocoder" in html
    assert re.search(r'<option value="tomtom-geocode"[^>]*selected', html)


@pytest.mark.usefixtures("evidence")
def test_the_failing_arguments_link_narrows_the_page_to_the_tool(staff_client):
    html = staff_client.get(f"{PAGE}&tool=tomtom-routing&client=claude-ai").content.decode()

    assert table_rows(html, "failing-arguments") == [
        ["tomtom-routing", "locations[1]", "8", "claude-ai (8)"],
        ["tomtom-routing", "travelMode", "3", "claude-ai (3)"],
    ]


@pytest.mark.usefixtures("evidence")
def test_every_table_downloads_as_csv(staff_client):
    response = staff_client.get(f"{PAGE}&csv=unknown-names")

    assert response["Content-Type"].startswith("text/csv")
    lines = response.content.decode().splitlines()
    assert lines[0] == "name,calls,first_seen,last_seen,closest,status"
    assert lines[1].startswith("tomtom-geocoder,9,")


def test_a_tenant_filter_is_said_not_to_apply(staff_client):
    html = staff_client.get(f"{PAGE}&tenant=acme").content.decode()

    assert 'id="evidence-unfiltered"' in html


# --- The session timeline -----------------------------------------------------------------------------


def _event_id() -> bytes:
    return next(_ids).to_bytes(16, "big")


def exchange(kind: str, clock: str, session: str = "sess-a", **fields) -> None:
    ExchangeEvent.objects.create(
        time=at(D1, clock), event_id=_event_id(), kind=kind, raw="", client="claude-ai", session=session, **fields
    )


def call(clock: str, tool: str, outcome: str, request_id: str, session: str = "sess-a", **fields) -> None:
    ToolCallEvent.objects.create(
        time=at(D1, clock),
        event_id=_event_id(),
        raw=fields.pop("raw", ""),
        tool=tool,
        client="claude-ai",
        outcome=outcome,
        request_id=request_id,
        session=session,
        **fields,
    )


@pytest.fixture
def session_events() -> None:
    from analytics.partitions import ensure_partitions, is_partitioned

    for model in (ExchangeEvent, ToolCallEvent, AppStatusEvent):  # PostgreSQL: the raw tables are monthly partitions
        if is_partitioned(model._meta.db_table):
            ensure_partitions(model._meta.db_table, [at(D1)])
    exchange("session", "09:00", client_version="0.9.1", protocol_version="2025-06-18", request_id="init-1")
    exchange(
        "listed",
        "09:01",
        bytes=1800,
        tools=json.dumps([{"name": "tomtom-routing", "bytes": 1000}, {"name": "tomtom-geocode", "bytes": 800}]),
    )
    call(
        "09:02",
        "tomtom-routing",
        "invalid_arguments",
        "call-1",
        error="locations[1]: send [lon, lat]",
        raw='{"key":"SECRET-KEY-1"}',
    )
    call("09:03", "tomtom-routing", "ok", "call-2")
    AppStatusEvent.objects.create(
        time=at(D1, "09:04"),
        event_id=_event_id(),
        kind="drawn",
        raw="",
        tool="tomtom-routing",
        client="claude-ai",
        request_id="report-1",
        session="sess-a",
    )
    exchange("refused", "09:05", method="resources/subscribe", code=-32601)
    call("09:03", "tomtom-geocode", "ok", "other-1", session="sess-b")


@pytest.mark.usefixtures("session_events")
def test_a_sessions_events_in_time_order_bounded():
    found = session_timeline("sess-a")

    assert [(e.message, e.kind, e.request_id) for e in found.rows] == [
        ("Session started", "session", "init-1"),
        ("Tools listed", "listed", ""),
        ("Tool call", "invalid_arguments", "call-1"),
        ("Tool call", "ok", "call-2"),
        ("App drawn", "drawn", "report-1"),
        ("MCP request refused", "refused", ""),
    ]
    assert ("tools", "2") in found.rows[1].fields and ("bytes", "1,800") in found.rows[1].fields
    assert found.rows[-1].fields == (("method", "resources/subscribe"), ("code", "-32601"))
    assert (found.total, found.returned, found.truncated) == (6, 6, False)
    cut = session_timeline("sess-a", limit=2)
    assert (cut.total, cut.returned, cut.truncated) == (6, 2, True)
    assert session_timeline("").rows == []


@pytest.mark.usefixtures("session_events")
def test_the_session_page_shows_the_timeline_and_no_secret(staff_client):
    html = staff_client.get("/analytics/sessions/sess-a/").content.decode()

    rows = re.findall(r"<tr class=\"(\w+)\">", html)
    assert rows == ["exchange", "exchange", "call", "call", "widget", "exchange"]
    assert "locations[1]: send [lon, lat]" in html
    assert "SECRET-KEY-1" not in html and "other-1" not in html
    assert 'href="/analytics/requests/call-1/?at=' in html


@pytest.mark.usefixtures("session_events")
def test_every_request_page_links_to_its_sessions_timeline(staff_client):
    html = staff_client.get(f"/analytics/requests/call-2/?at={D1}T09:03:00%2B00:00").content.decode()
    widget = staff_client.get(f"/analytics/requests/report-1/?at={D1}T09:04:00%2B00:00").content.decode()
    alone = staff_client.get(f"/analytics/requests/nothing/?at={D1}T09:04:00%2B00:00").content.decode()

    assert 'id="session-timeline-link"' in html and 'href="/analytics/sessions/sess-a/"' in html
    assert 'href="/analytics/sessions/sess-a/"' in widget
    assert 'id="session-timeline-link"' not in alone


# --- The API ------------------------------------------------------------------------------------------


@pytest.mark.usefixtures("evidence")
def test_the_api_gives_the_same_figures_bounded(staff_client):
    found = staff_client.get(f"/api/analytics/evidence?start={D1}&end={D2}&group=family").json()

    assert found["unknown_names"]["total"] == 4 and found["unknown_names"]["truncated"] is False
    geocoder = found["unknown_names"]["rows"][0]
    assert (geocoder["name"], geocoder["calls"], geocoder["closest"], geocoder["aliasable"]) == (
        "tomtom-geocoder",
        9,
        "tomtom-geocode",
        True,
    )
    assert geocoder["hosts"] == [{"host": CLAUDE, "calls": 6}, {"host": CHATGPT, "calls": 3}]
    assert [(r["tool"], r["listing_bytes"]) for r in found["never_called"]["rows"]] == [("tomtom-traffic-flow", 4000)]
    routing = found["corrections"]["rows"][0]
    assert (routing["host"], routing["failures"], routing["corrected"]) == (CLAUDE, 12, 8)
    assert routing["by_outcome"] == [{"outcome": "invalid_arguments", "failures": 12, "corrected": 8}]
    assert found["refused_requests"]["rows"][0]["count"] == 3


@pytest.mark.usefixtures("session_events")
def test_the_api_gives_a_sessions_timeline(staff_client, client):
    found = staff_client.get("/api/analytics/sessions/sess-a").json()

    assert (found["total"], found["returned"], found["truncated"]) == (6, 6, False)
    assert [e["message"] for e in found["events"]][:3] == ["Session started", "Tools listed", "Tool call"]
    assert found["events"][2]["fields"]["error"] == "locations[1]: send [lon, lat]"


# --- The recorded sessions, ingested ---------------------------------------------------------------------

RECORDED = Path(__file__).parent.parent.joinpath("data", "evidence_sessions.jsonl").read_text().splitlines()


def test_the_recorded_sessions_ingested_read_on_the_pages(staff_client):
    ingest(*RECORDED)
    html = staff_client.get("/analytics/evidence/?start=2026-11-23&end=2026-11-24&group=family").content.decode()

    names = {row[0]: row for row in table_rows(html, "unknown-names")}
    assert sorted(names) == ["get_weather", "tomtom-directions", "tomtom-search"]
    assert [names[name][1] for name in sorted(names)] == ["10", "10", "10"]
    assert names["get_weather"][5:] == ["—", "no such tool", ""]  # like no tool: nothing to alias it to
    suggested = {
        line["tool"]: line["suggested"][0]
        for line in map(json.loads, RECORDED)
        if line.get("outcome") == "unknown_tool" and line.get("suggested")
    }
    assert suggested == {"tomtom-directions": "tomtom-routing", "tomtom-search": "tomtom-poi-search"}
    for name, closest in suggested.items():  # the tool the server's answer pointed to
        assert names[name][5:] == [closest, "no such tool", f"Alias this name to {closest}…"]
    claude = {(row[0], row[1]): row for row in table_rows(html, "self-correction")}
    assert claude[("Claude (desktop, web)", "tomtom-routing")][2:5] == ["4", "4", "100.0%"]  # 2 of 2 each day

    in_session = [line for line in RECORDED if json.loads(line).get("session") == "s00"]
    timeline = staff_client.get("/analytics/sessions/s00/").content.decode()
    assert f"{len(in_session)} events." in timeline
    times = re.findall(r'<td class="nowrap">([^<]+)</td>', timeline)
    assert times == sorted(times) and len(times) == len(in_session)


def test_a_session_key_of_any_text_has_its_timeline(staff_client):
    from analytics.partitions import ensure_partitions, is_partitioned

    if is_partitioned(ToolCallEvent._meta.db_table):
        ensure_partitions(ToolCallEvent._meta.db_table, [at(D1)])
    call("09:00", "tomtom-geocode", "ok", "odd-1", session="a/b c<")

    page = staff_client.get(f"/analytics/requests/odd-1/?at={D1}T09:00:00%2B00:00").content.decode()
    link = re.search(r'href="(/analytics/sessions/[^"]*)" id="session-timeline-link"', page)
    assert link and link.group(1) == "/analytics/sessions/a/b%20c%3C/"
    timeline = staff_client.get(link.group(1)).content.decode()
    assert "1 event." in timeline and "a/b c&lt;" in timeline
