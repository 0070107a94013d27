"""Issue #42: a cancelled call landed as `never reported` plus an unjoined report. A host that
cancels sends no result, so the widget's `cancelled` report names no delivery; it joins the
latest delivery of its own session's tool before it, not joined otherwise, within the grace window
(analytics/ingest/cancellations.py), in whatever order the events are stored."""

from __future__ import annotations

import pytest

from analytics.models import WidgetFunnelDaily
from core.app_status import Cancelled, Drawn
from tests.analytics.conftest import ingest, line
from tests.analytics.test_funnel_sessions import DAY, FUNNEL, VICTIM, delivery, report

pytestmark = pytest.mark.django_db

ORDERS = [
    "in time order",
    "reports first",
    "deliveries first, reports later",
    "one batch each line",
    "backwards, one batch each line",
    "ingested twice",
]
NEWEST = line(Drawn, f"{DAY}T12:00:00", client="later", request_id="newest", source="inline", session="elsewhere")
"""A later event: the deliveries before it are past the grace window (never reported, not pending)."""


def cancelled(at: str, *, client: str = VICTIM, session: str | None = "victim-s", **fields: object) -> str:
    """The widget's report of a cancellation: no `delivery_request_id` (no result came)."""
    return line(
        Cancelled, f"{DAY}T{at}", client=client, request_id=f"cancel-{at}", session=session, source="none", **fields
    )


def ingested(order: str, deliveries: list[str], reports: list[str]) -> None:
    everything = sorted([*deliveries, *reports], key=lambda text: text.split('"time":"')[1][:23])
    if order == "in time order":
        ingest(*everything)
    elif order == "reports first":
        ingest(*reports)
        ingest(*deliveries)
    elif order == "deliveries first, reports later":
        ingest(*deliveries)
        ingest(*reports)
    elif order == "one batch each line":
        ingest(*everything, batch_size=1)
    elif order == "backwards, one batch each line":
        for text in reversed(everything):
            ingest(text)
    else:
        ingest(*reports[::2], *deliveries[1:])
        ingest(*everything)
        ingest(*everything, batch_size=1)


@pytest.fixture
def staff_client(client, django_user_model):
    client.force_login(django_user_model.objects.create_user("ops", is_staff=True))
    return client


def rows(staff_client, by: str = "client,tool") -> dict[tuple, dict]:
    found = staff_client.get(f"{FUNNEL}&by={by}").json()["rows"]
    return {tuple(row[name] for name in by.split(",")): row for row in found}


def figures(row: dict) -> dict[str, int]:
    names = ("delivered", "reported", "cancelled", "unjoined_reports", "mismatched", "pending", "never_reported")
    return {name: row[name] for name in names}


def assert_no_negative_figure() -> None:
    for row in WidgetFunnelDaily.objects.values():
        assert all(value >= 0 for value in row.values() if isinstance(value, int)), row


@pytest.mark.parametrize("order", ORDERS)
def test_a_cancellation_joins_its_sessions_delivery_of_the_tool(staff_client, settings, order):
    settings.ANALYTICS_WIDGET_GRACE_SECONDS = 600
    ingested(order, [delivery("10:00:00", "d1")], [cancelled("10:00:05"), NEWEST])

    victim = rows(staff_client)[(VICTIM, "tomtom-routing")]
    assert figures(victim) == {
        "delivered": 1,
        "reported": 1,
        "cancelled": 1,
        "unjoined_reports": 0,
        "mismatched": 0,
        "pending": 0,
        "never_reported": 0,
    }
    joined = WidgetFunnelDaily.objects.get(client=VICTIM, size="lt_10kb")
    assert (joined.delivered, joined.reported, joined.cancelled) == (1, 1, 1)
    assert_no_negative_figure()


def test_a_joined_cancellation_leaves_its_delivery_not_pending(staff_client, settings):
    settings.ANALYTICS_WIDGET_GRACE_SECONDS = 600
    ingest(cancelled("10:00:05"))
    ingest(delivery("10:00:00", "d1"), delivery("10:00:06", "d2"))
    victim = rows(staff_client)[(VICTIM, "tomtom-routing")]
    assert (victim["delivered"], victim["reported"], victim["pending"], victim["never_reported"]) == (2, 1, 1, 0)


@pytest.mark.parametrize("order", ORDERS)
def test_a_cancellation_from_another_session_or_without_one_joins_nothing(staff_client, settings, order):
    settings.ANALYTICS_WIDGET_GRACE_SECONDS = 600
    deliveries = [delivery("10:00:00", "d1"), delivery("10:00:00", "g1", client="ChatGPT", session=None)]
    reports = [
        cancelled("10:00:05", session="another-s"),  # the same client name, another session
        cancelled("10:00:05", client="intruder", session="intruder-s"),
        cancelled("10:00:06", client="ChatGPT", session=None),  # sessionless: as before
        NEWEST,
    ]
    ingested(order, deliveries, reports)

    found = rows(staff_client)
    victim, chatgpt = found[(VICTIM, "tomtom-routing")], found[("ChatGPT", "tomtom-routing")]
    assert figures(victim) == {**figures(victim), "delivered": 1, "reported": 0, "never_reported": 1}
    assert (victim["cancelled"], victim["unjoined_reports"], victim["mismatched"]) == (1, 1, 0)
    assert (chatgpt["delivered"], chatgpt["reported"], chatgpt["never_reported"], chatgpt["unjoined_reports"]) == (
        1,
        0,
        1,
        1,
    )
    assert found[("intruder", "tomtom-routing")]["unjoined_reports"] == 1
    assert_no_negative_figure()


@pytest.mark.parametrize("order", ORDERS)
def test_of_two_deliveries_the_cancellation_joins_the_latest_before_it(staff_client, settings, order):
    settings.ANALYTICS_WIDGET_GRACE_SECONDS = 600
    deliveries = [
        delivery("10:00:00", "d1", raw_bytes=5_000),  # < 10 kB
        delivery("10:00:10", "d2", raw_bytes=50_000),  # 10-100 kB: the latest before the report
        delivery("10:00:30", "d3", raw_bytes=500_000),  # after it
        delivery("10:00:15", "d4", tool="tomtom-geocode", raw_bytes=5_000),  # another tool
    ]
    ingested(order, deliveries, [cancelled("10:00:20"), NEWEST])

    by_size = rows(staff_client, "tool,size")
    assert by_size[("tomtom-routing", "10kb_100kb")]["cancelled"] == 1
    assert figures(by_size[("tomtom-routing", "lt_10kb")])["never_reported"] == 1
    assert figures(by_size[("tomtom-routing", "100kb_1mb")])["never_reported"] == 1
    assert figures(by_size[("tomtom-geocode", "lt_10kb")])["never_reported"] == 1
    assert by_size[("tomtom-routing", "unjoined")]["cancelled"] == 0, "the newest event's row only"
    assert_no_negative_figure()


@pytest.mark.parametrize("order", [*ORDERS, "the naming report last"])
def test_a_delivery_a_report_names_is_not_taken_and_two_cancellations_take_two(staff_client, settings, order):
    """d2 is drawn (its report names it): the first cancellation takes d1; the second d3, then
    the latest left, and nothing is left for the third."""
    settings.ANALYTICS_WIDGET_GRACE_SECONDS = 600
    deliveries = [
        delivery("10:00:00", "d1", raw_bytes=5_000),
        delivery("10:00:10", "d2", raw_bytes=50_000),
        delivery("10:00:25", "d3", raw_bytes=500_000),
    ]
    named = report("drawn", "10:00:40", "d2")
    reports = [cancelled("10:00:20"), cancelled("10:00:30"), cancelled("10:00:35"), NEWEST]
    if order == "the naming report last":
        ingest(*deliveries, *reports)
        ingest(named)
    else:
        ingested(order, deliveries, [named, *reports])

    by_size = rows(staff_client, "size")
    assert (by_size[("lt_10kb",)]["cancelled"], by_size[("lt_10kb",)]["reported"]) == (1, 1)
    assert (by_size[("10kb_100kb",)]["drawn"], by_size[("10kb_100kb",)]["cancelled"]) == (1, 0)
    assert (by_size[("100kb_1mb",)]["cancelled"], by_size[("100kb_1mb",)]["reported"]) == (1, 1)
    assert by_size[("unjoined",)]["cancelled"] == 1
    assert sum(row["never_reported"] for row in by_size.values()) == 0
    assert_no_negative_figure()


@pytest.mark.parametrize("order", ORDERS)
def test_a_cancellation_past_the_grace_window_joins_nothing(staff_client, settings, order):
    settings.ANALYTICS_WIDGET_GRACE_SECONDS = 60
    ingested(order, [delivery("10:00:00", "d1")], [cancelled("10:01:01"), NEWEST])
    victim = rows(staff_client)[(VICTIM, "tomtom-routing")]
    assert (victim["reported"], victim["never_reported"], victim["unjoined_reports"]) == (0, 1, 1)


@pytest.mark.parametrize("order", ["reports first", "in time order"])
def test_a_dropped_cancellation_joins_nothing(staff_client, settings, order):
    settings.ANALYTICS_SESSION_MAX_REPORTS = 1
    settings.ANALYTICS_WIDGET_GRACE_SECONDS = 600
    deliveries = [delivery("10:00:00", "d1"), delivery("10:00:01", "d2")]
    ingested(order, deliveries, [cancelled("10:00:05"), cancelled("10:00:06")])  # the second is over the cap
    ingest(NEWEST)
    victim = rows(staff_client)[(VICTIM, "tomtom-routing")]
    assert (victim["delivered"], victim["reported"], victim["cancelled"], victim["never_reported"]) == (2, 1, 1, 1)
    assert rows(staff_client)[(VICTIM, "(over a session cap)")]["dropped"] == 1
    assert_no_negative_figure()


@pytest.mark.postgresql
@pytest.mark.parametrize("order", ["reports first", "deliveries first, reports later", "one batch each line"])
def test_the_join_of_a_cancellation_is_the_same_on_postgresql(staff_client, settings, order):
    from django.db import connection

    if connection.vendor != "postgresql":
        pytest.skip("needs PostgreSQL (DATABASE_URL=postgres://...)")
    test_of_two_deliveries_the_cancellation_joins_the_latest_before_it(staff_client, settings, order)
