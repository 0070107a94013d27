"""The JSON API: who may read it, and that it gives the dashboard's numbers."""

from __future__ import annotations

import re
from datetime import date, datetime

import pytest

from analytics.funnel import FIGURE_NAMES
from analytics.selectors import ReportQuery, failure_counts
from analytics.stats import STAT_NAMES
from analytics.tool_stats import CALL_STAT_NAMES

pytestmark = pytest.mark.django_db

TOTALS = "/api/analytics/failures/totals?start=2026-11-02&end=2026-11-03"
TOKEN = "analytics-token-9d2f"


@pytest.fixture
def staff_client(client, django_user_model):
    client.force_login(django_user_model.objects.create_user("ops", is_staff=True))
    return client


def test_anonymous_callers_are_refused(client):
    assert client.get(TOTALS).status_code == 401


def test_a_signed_in_user_who_is_not_staff_is_refused(client, django_user_model):
    client.force_login(django_user_model.objects.create_user("someone"))

    assert client.get(TOTALS).status_code == 401


def test_a_listed_bearer_token_is_accepted_and_any_other_refused(client, settings, known_data):
    settings.ANALYTICS_API_TOKENS = ["other-token", TOKEN]

    assert client.get(TOTALS, HTTP_AUTHORIZATION=f"Bearer {TOKEN}").status_code == 200
    assert client.get(TOTALS, HTTP_AUTHORIZATION=f"Bearer {TOKEN}x").status_code == 401
    settings.ANALYTICS_API_TOKENS = []
    assert client.get(TOTALS, HTTP_AUTHORIZATION=f"Bearer {TOKEN}").status_code == 401


def test_the_totals_are_the_dashboard_tables_numbers(staff_client, known_data):
    body = staff_client.get(TOTALS).json()

    query = ReportQuery(start=date(2026, 11, 2), end=date(2026, 11, 3))
    expected = [
        {key: value for key, value in row.as_dict().items() if key != "bucket"}
        for row in failure_counts(query, by=("client", "tool"))
    ]
    assert body == {
        "start": "2026-11-02",
        "end": "2026-11-03",
        "bucket": "day",
        "tool": "",
        "client": "",
        "family": "",
        "group": "client",
        "tenant": "",
        "backend": "",
        "rows": expected,
    }
    assert body["rows"][3] == {
        "client": "cursor-vscode",
        "tool": "tomtom-routing",
        "widgets_drawn": 0,
        "widgets_failed": 3,
        "widgets_cancelled": 0,
        "too_large": 0,
        "host_dropped": 2,
        "decode_failed": 0,
        "fetch_failed": 0,
        "unknown_events": 0,
        "failure_rate": 1.0,
    }


def test_the_series_by_host_are_the_dashboard_charts_numbers(staff_client, known_data):
    rows = staff_client.get("/api/analytics/failures/by-host?start=2026-11-02&end=2026-11-03").json()["rows"]

    query = ReportQuery(start=date(2026, 11, 2), end=date(2026, 11, 3))
    assert [(datetime.fromisoformat(row.pop("bucket")), row) for row in rows] == [
        (row.bucket, {key: value for key, value in row.as_dict().items() if key not in ("bucket", "tool")})
        for row in failure_counts(query, by=("bucket", "client"))
    ]


def test_hourly_rows_for_one_host_and_tool(staff_client, known_data):
    rows = staff_client.get(
        "/api/analytics/failures?start=2026-11-02&end=2026-11-02&bucket=hour&client=claude-ai&tool=tomtom-routing"
    ).json()["rows"]

    assert [(row["bucket"], row["widgets_drawn"], row["widgets_failed"], row["failure_rate"]) for row in rows] == [
        ("2026-11-02T10:00:00Z", 2, 0, 0.0),
        ("2026-11-02T11:00:00Z", 0, 1, 1.0),
    ]


def test_failing_events_come_a_page_at_a_time(staff_client, known_data):
    url = "/api/analytics/failing-events?start=2026-11-02&end=2026-11-03&client=cursor-vscode&limit=2&offset=1"

    body = staff_client.get(url).json()

    assert body["count"] == 5
    assert [(event["time"], event["kind"], event["stage"]) for event in body["events"]] == [
        ("2026-11-02T10:40:01Z", "failed", "result"),
        ("2026-11-02T10:40:00Z", "host_dropped", ""),
    ]


def test_old_callers(staff_client, known_data):
    body = staff_client.get("/api/analytics/old-callers?start=2026-11-02&end=2026-11-03").json()

    assert [(c["kind"], c["client"], c["tool"], c["calls"], c["last_seen"]) for c in body] == [
        ("outdated_call", "ChatGPT", "tomtom-traffic", 1, "2026-11-03T09:45:00Z"),
        ("retired_tool", "goose", "tomtom-fuzzy-search", 2, "2026-11-03T09:30:00Z"),
    ]


def test_an_impossible_range_is_a_422(staff_client):
    response = staff_client.get("/api/analytics/failures?start=2026-11-03&end=2026-11-02")

    assert response.status_code == 422
    assert response.json() == {"detail": "the start date is after the end date"}


def test_the_openapi_schema_describes_every_endpoint_and_stat(staff_client):
    schema = staff_client.get("/api/analytics/openapi.json").json()

    assert sorted(schema["paths"]) == [
        "/api/analytics/evidence",
        "/api/analytics/failing-calls",
        "/api/analytics/failing-events",
        "/api/analytics/failures",
        "/api/analytics/failures/by-host",
        "/api/analytics/failures/totals",
        "/api/analytics/funnel",
        "/api/analytics/old-callers",
        "/api/analytics/overview",
        "/api/analytics/requests/{request_id}",
        "/api/analytics/sessions/{session}",
        "/api/analytics/still-calling",
        "/api/analytics/tool-calls",
        "/api/analytics/tool-calls/by-host",
        "/api/analytics/tool-calls/totals",
    ]
    row = schema["components"]["schemas"]["FailureRow"]["properties"]
    assert [name for name in STAT_NAMES if not row[name].get("description")] == []
    funnel_row = schema["components"]["schemas"]["FunnelRowOut"]["properties"]
    assert [name for name in FIGURE_NAMES if not funnel_row[name].get("description")] == []
    call_row = schema["components"]["schemas"]["ToolCallRow"]["properties"]
    assert [name for name in CALL_STAT_NAMES if not call_row[name].get("description")] == []


def test_tool_call_totals_by_family_and_backend_are_the_selectors_numbers(staff_client, known_calls):
    body = staff_client.get(
        "/api/analytics/tool-calls/totals?start=2026-11-02&end=2026-11-03&group=family&by=client&by=backend"
    ).json()

    assert (body["group"], body["by"]) == ("family", ["client", "backend"])
    rows = [(r["client"], r["backend"], r["tool"], r["calls"], r["errors"], r["p50_total_ms"]) for r in body["rows"]]
    assert rows == [
        ("ChatGPT", "tomtom-orbis-maps", None, 2, 1, 75.0),
        ("Claude (desktop, web)", "tomtom-maps", None, 1, 1, 1500.0),
        ("Claude (desktop, web)", "tomtom-orbis-maps", None, 3, 1, 75.0),
        ("Claude Code", "tomtom-orbis-maps", None, 1, 0, 35.0),
        ("fleet-agent", "tomtom-orbis-maps", None, 1, 0, 750.0),
    ]
    assert body["rows"][1]["unavailable"] == 1


def test_tool_call_reports_need_the_same_authentication(client):
    assert client.get("/api/analytics/tool-calls/totals").status_code == 401


SCHEMA = "/api/analytics/openapi.json"
DOCS = "/api/analytics/docs"


def test_the_schema_needs_the_apis_authentication(client, django_user_model, settings):
    settings.ANALYTICS_API_TOKENS = [TOKEN]

    assert client.get(SCHEMA).status_code == 401
    assert client.get(SCHEMA, HTTP_AUTHORIZATION="Bearer not-listed").status_code == 401
    assert client.get(SCHEMA, HTTP_AUTHORIZATION=f"Bearer {TOKEN}").json()["info"]["title"] == ("TomTom MCP analytics")
    client.force_login(django_user_model.objects.create_user("someone"))
    assert client.get(SCHEMA).status_code == 401
    client.force_login(django_user_model.objects.create_user("ops", is_staff=True))
    assert client.get(SCHEMA).status_code == 200


def test_the_docs_page_sends_anyone_but_staff_to_the_admin_login(client, django_user_model, settings):
    settings.ANALYTICS_API_TOKENS = [TOKEN]

    for response in (
        client.get(DOCS),
        client.get(DOCS, HTTP_AUTHORIZATION=f"Bearer {TOKEN}"),  # a token is for programs, not the page
    ):
        assert response.status_code == 302
        assert response["Location"] == f"/admin/login/?next={DOCS}"
    client.force_login(django_user_model.objects.create_user("someone"))
    assert client.get(DOCS).status_code == 302


def test_staff_get_the_docs_page_from_this_servers_own_static_files(staff_client):
    response = staff_client.get(DOCS)

    assert response.status_code == 200
    page = response.content.decode()
    assert '<div id="swagger-ui">' in page
    assert f'"url": "{SCHEMA}"' in page
    referenced = re.findall(r'(?:src|href)="([^"]+)"', page)
    assert "/static/ninja/swagger-ui-bundle.js" in referenced
    assert "/static/ninja/swagger-ui.css" in referenced
    assert [url for url in referenced if not url.startswith("/")] == []  # no CDN, no other host
    assert "//" not in "".join(referenced)


def test_the_overview_the_failing_calls_and_the_filters_widgets_cannot_honour(staff_client, known_data, known_calls):
    overview = staff_client.get("/api/analytics/overview?start=2026-11-02&end=2026-11-03").json()
    figures = {figure["name"]: figure for figure in overview["figures"]}
    assert (figures["calls"]["value"], figures["error_rate"]["value"]) == (8, 3 / 8)
    # One delivery (claude-ai, routing) and only reports without the join key: never reported.
    unreported = figures["widget_unreported_rate"]
    assert (unreported["value"], unreported["available"], unreported["sample"]) == (1.0, True, "1 of 1 deliveries")
    assert overview["freshness"]["data_up_to"] == "2026-11-03T09:45:00Z"

    calls = staff_client.get("/api/analytics/failing-calls?start=2026-11-02&end=2026-11-03&tenant=-").json()
    assert calls["count"] == 3 and {group["code"] for group in calls["groups"]} == {
        "invalid_arguments",
        "unavailable",
        "retry_later",
    }
    by_backend = staff_client.get(
        "/api/analytics/tool-calls/totals?start=2026-11-02&end=2026-11-03&backend=tomtom-maps&by=backend"
    ).json()
    assert [(row["backend"], row["calls"]) for row in by_backend["rows"]] == [("tomtom-maps", 1)]

    refused = staff_client.get("/api/analytics/failures/totals?start=2026-11-02&end=2026-11-03&backend=tomtom-maps")
    assert refused.status_code == 422
    assert refused.json() == {"detail": "widget events record no backend: widget figures cannot be filtered by it"}


def test_the_overview_ranks_every_host_by_its_change_and_keeps_every_field(staff_client):
    from tests.analytics.conftest import ingest
    from tests.analytics.incident_data import BROKEN, SILENT, incident_lines
    from tests.analytics.test_ranking import NOW

    ingest(*incident_lines(NOW))
    since, until = "2026-12-06T13:00:00Z", "2026-12-07T14:00:00Z"  # the 24-hour preset at NOW

    body = staff_client.get(f"/api/analytics/overview?since={since}&until={until}").json()

    assert [figure["name"] for figure in body["figures"]] == [
        "calls",
        "error_rate",
        "widget_failure_rate",
        "widget_unreported_rate",
        "p95_ms",
        "upstream_calls",
        "server_error_rate",
        "caller_error_rate",
    ]
    assert all(figure["cannot_see"] for figure in body["figures"])
    broken = body["worst_hosts"][0]
    before = (
        "name calls errors error_rate previous_error_rate widgets_failed widgets_reported widget_failure_rate "
        "previous_widget_failure_rate p95_ms previous_p95_ms small_sample"
    )
    assert set(before.split()) <= set(broken)  # every field the endpoint had, and more
    assert (broken["name"], broken["signal"], broken["since"]) == (BROKEN, "server_errors", "2026-12-07T10:00:00Z")
    assert broken["change"] == pytest.approx(broken["rate"] - broken["baseline_rate"])
    assert broken["own_baseline"] is True and broken["server_errors"] + broken["caller_errors"] == broken["errors"]
    assert body["silent_hosts"] == [SILENT]
    assert (body["baseline_start"], body["baseline_end"]) == ("2026-11-29T00:00:00Z", "2026-12-06T00:00:00Z")
    assert "baseline" in body["ranking"]
    assert [beat["family"] for beat in body["freshness"]["families"]] == ["ToolCall", "AppStatus"]
    assert staff_client.get("/api/analytics/overview?window=1h").status_code == 200
    assert staff_client.get("/api/analytics/overview?window=2h").status_code == 422
