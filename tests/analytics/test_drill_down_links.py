"""Issue #42: every drill-down lands on the call. A failing widget event links to the call that
delivered its data, every request id on a page is a link to its request page, a request page
shows its session's calls around it, and the failing calls tell the caller's mistakes from the
server's errors."""

from __future__ import annotations

import re
from html import unescape

import pytest
from django.template import Context, Template

from analytics.requests import request_url, session_neighbours
from core.app_status import AppData, Failed
from tests.analytics.conftest import call_line, ingest, line
from tests.analytics.test_dashboard import table_rows

pytestmark = pytest.mark.django_db

DAY = "2026-11-14"
RANGE = f"start={DAY}&end={DAY}"


def at(clock: str) -> str:
    return f"{DAY}T{clock}"


SESSION_CALLS = [
    call_line(at("09:58:00"), tool="tomtom-geocode", request_id="before-2", session="s1"),
    call_line(at("09:59:00"), tool="tomtom-geocode", request_id="before-1", session="s1"),
    call_line(at("09:59:30"), tool="tomtom-geocode", request_id="elsewhere", session="s2"),
    call_line(at("10:00:00"), request_id="deliver-1", session="s1"),
    call_line(at("10:00:05"), tool="tomtom-report-app-status", request_id="report-1", session="s1"),
    call_line(at("10:02:00"), outcome="invalid_arguments", request_id="after-1", session="s1", error="`x`: wrong"),
    call_line(at("10:03:00"), outcome="internal", request_id="server-1", session="s2", error="Something went wrong"),
    call_line(at("10:04:00"), outcome="unavailable", request_id="server-2", error="TomTom is down"),
]
WIDGET_EVENTS = [
    line(AppData, at("10:00:00"), request_id="deliver-1", session="s1", delivery="inline", raw_bytes=900),
    line(
        Failed,
        at("10:00:05"),
        request_id="report-1",
        session="s1",
        source="inline",
        stage="render",
        error="WebGL lost",
        delivery_request_id="deliver-1",
    ),
]


@pytest.fixture
def staff_client(client, django_user_model):
    client.force_login(django_user_model.objects.create_user("ops", is_staff=True))
    ingest(*SESSION_CALLS, *WIDGET_EVENTS)
    return client


def every_row(html: str, table_id: str) -> list[list[str]]:
    """The text of each body row's cells, rows with attributes too (`table_rows` skips those)."""
    body = re.search(rf'<table id="{table_id}".*?<tbody>(.*?)</tbody>', html, re.S)
    assert body, f"no table {table_id}"
    return [
        [re.sub(r"<[^>]+>", "", cell).strip() for cell in re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", row, re.S)]
        for row in re.findall(r"<tr[^>]*>(.*?)</tr>", body.group(1), re.S)
    ]


def links(html: str) -> list[str]:
    return [unescape(href) for href in re.findall(r'<a href="([^"]*/analytics/requests/[^"]*)"', html)]


def test_a_failing_widget_event_links_to_the_call_that_delivered_its_data(staff_client):
    html = staff_client.get(f"/analytics/events/?{RANGE}").content.decode()
    (row,) = table_rows(html, "failing-events")
    assert "delivered by" in unescape(" ".join(row))
    found = links(html)
    assert request_url("deliver-1", _moment("10:00:05")) in found, "the delivering call's page"
    assert request_url("report-1", _moment("10:00:05")) in found, "and the report's own call"
    assert found.index(request_url("deliver-1", _moment("10:00:05"))) < found.index(
        request_url("report-1", _moment("10:00:05"))
    )
    landed = staff_client.get(request_url("deliver-1", _moment("10:00:05"))).content.decode()
    assert [row[1] for row in table_rows(landed, "request-events")] == ["Tool call", "App data", "App failed"]


def test_every_request_id_on_the_request_page_is_a_link(staff_client):
    html = staff_client.get(request_url("deliver-1", _moment("10:00:00"))).content.decode()
    found = links(html)
    # the report's fields: the delivering call (this one) and the report's own call
    assert request_url("deliver-1", _moment("10:00:05")) in found
    assert request_url("report-1", _moment("10:00:05")) in found


def test_the_request_page_shows_the_sessions_calls_around_it(staff_client):
    html = staff_client.get(request_url("deliver-1", _moment("10:00:00"))).content.decode()
    shown = every_row(html, "session-calls")
    assert [row[3] for row in shown] == [
        "before-2",
        "before-1",
        "deliver-1",
        "report-1",
        "after-1",
    ]
    assert "elsewhere" not in html and "server-1" not in html, "another session's calls are not its neighbours"
    found = links(html)
    for request_id, clock in (("before-1", "09:59:00"), ("report-1", "10:00:05"), ("after-1", "10:02:00")):
        assert request_url(request_id, _moment(clock)) in found, request_id
    first = session_neighbours("deliver-1", _moment("00:00:00"), _moment("23:59:59"), limit=1)
    assert [c.request_id for c in first.before] == ["before-1"] and [c.request_id for c in first.after] == ["report-1"]


def test_a_sessionless_call_has_no_neighbours_to_show(staff_client):
    html = staff_client.get(request_url("server-2", _moment("10:04:00"))).content.decode()
    assert "came in no client session" in html and 'id="session-calls"' not in html


def test_the_failing_calls_tell_the_callers_mistakes_from_the_servers_errors(staff_client):
    html = staff_client.get(f"/analytics/calls/?{RANGE}").content.decode()
    whose = {row[0]: row[-1] for row in table_rows(html, "call-groups")}
    assert whose == {"invalid_arguments": "caller", "internal": "server", "unavailable": "server"}
    calls = {row[5]: row[-1] for row in table_rows(html, "failing-calls")}
    assert calls == {"after-1": "caller", "server-1": "server", "server-2": "server"}
    assert "Caller mistakes" in html and "Server and upstream errors" in html
    for code in ("invalid_arguments", "unknown_tool", "retired", "unsupported", "unauthorized"):
        assert f"<code>{code}</code>" in html
    assert links(html) and all("/analytics/requests/" in href for href in links(html))
    timelines = {row[5]: row[6] for row in table_rows(html, "failing-calls")}
    assert timelines == {"after-1": "timeline", "server-1": "timeline", "server-2": "—"}  # server-2: sessionless
    assert '<a href="/analytics/sessions/s1/" class="session-link">timeline</a>' in html

    caller = staff_client.get(f"/analytics/calls/?{RANGE}&class=caller").content.decode()
    assert [row[5] for row in table_rows(caller, "failing-calls")] == ["after-1"]
    assert [row[-1] for row in table_rows(caller, "call-groups")] == ["caller"]
    server = staff_client.get(f"/analytics/calls/?{RANGE}&class=server").content.decode()
    assert sorted(row[5] for row in table_rows(server, "failing-calls")) == [
        "server-1",
        "server-2",
    ]


def test_the_request_link_tag_links_and_escapes():
    rendered = Template("{% load analytics_tags %}{% request_link rid when %}|{% request_link '' %}").render(
        Context({"rid": "a<b", "when": _moment("10:00:00")})
    )
    link, empty = rendered.split("|")
    assert empty == ""
    assert link.startswith('<a href="/analytics/requests/a%3Cb/?at=2026-11-14T10%3A00%3A00%2B00%3A00"')
    assert link.endswith('class="request-link">a&lt;b</a>')


def _moment(clock: str):
    from datetime import UTC, datetime

    return datetime.fromisoformat(at(clock)).replace(tzinfo=UTC)


def test_the_api_names_whose_each_failing_call_is_and_the_delivering_call_of_a_report(staff_client):
    calls = staff_client.get(f"/api/analytics/failing-calls?{RANGE}").json()["calls"]
    assert {c["request_id"]: (c["whose"], c["session"]) for c in calls} == {
        "after-1": ("caller", "s1"),
        "server-1": ("server", "s2"),
        "server-2": ("server", ""),
    }
    (event,) = staff_client.get(f"/api/analytics/failing-events?{RANGE}").json()["events"]
    assert (event["request_id"], event["delivery_request_id"], event["session"]) == ("report-1", "deliver-1", "s1")
