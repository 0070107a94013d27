"""Issue #43: the evidence figures of a recorded set of sessions (tests/data/evidence_sessions.jsonl,
written by tests/data/evidence_sessions.py) equal the counts made here from the raw lines, in any
ingestion order and batching, ingested once or again, on SQLite and PostgreSQL, with two writers
at once on PostgreSQL."""

from __future__ import annotations

import json
import random
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from django.db import connection

from analytics.ingest.batches import IngestReport
from analytics.models import (
    ArgumentFailureDaily,
    CorrectionDaily,
    ExchangeEvent,
    ListedToolDaily,
    OldCallerDaily,
    ProtocolMixDaily,
    RefusedRequestDaily,
    ToolCallEvent,
    UnknownToolDaily,
)
from analytics.selectors import ReportQuery, still_calling
from tests.analytics.conftest import ingest, ingest_concurrently

pytestmark = pytest.mark.django_db

LINES = Path(__file__).parent.parent.joinpath("data", "evidence_sessions.jsonl").read_text().splitlines()
WINDOW = timedelta(seconds=300)
FAILING = ("invalid_arguments", "unknown_tool", "retired")


def parsed() -> list[dict]:
    out = []
    for text in LINES:
        data = json.loads(text)
        data["at"] = datetime.fromisoformat(data["time"])
        data["day"] = data["at"].replace(hour=0, minute=0, second=0, microsecond=0)
        out.append(data)
    return out


def add(counts: dict, key: tuple, *figures: int, seen: datetime | None = None) -> None:
    row = counts.setdefault(key, [0] * len(figures) + ([seen, seen] if seen else []))
    for index, figure in enumerate(figures):
        row[index] += figure
    if seen:
        row[-2], row[-1] = min(row[-2], seen), max(row[-1], seen)


def expected() -> dict[str, set[tuple]]:
    """Every figure, counted from the lines alone."""
    events = parsed()
    listed: dict = {}
    mix: dict = {}
    refused: dict = {}
    unknown: dict = {}
    corrections: dict = {}
    arguments: dict = {}
    calls = [e for e in events if e["message"] == "Tool call"]
    for e in events:
        client, day, message = e["client"], e["day"], e["message"]
        if message == "Session started":
            add(mix, (day, client, e["client_version"], e["protocol_version"], "session"), 1)
        elif message == "Tools listed":
            add(mix, (day, client, "", e["protocol_version"], "listed"), 1)
            for tool in e["tools"]:
                add(listed, (day, client, tool["name"], e["backend"]), 1, tool["bytes"])
        elif message == "MCP request refused":
            add(mix, (day, client, "", e["protocol_version"], "refused"), 1)
            add(refused, (day, client, e["method"], e["code"]), 1, seen=e["at"])
        elif message == "Tool call":
            add(mix, (day, client, "", e["protocol_version"] or "", "call"), 1)
            if e["outcome"] == "unknown_tool":
                add(unknown, (day, client, e["tool"]), 1, seen=e["at"])
            if e["outcome"] == "invalid_arguments":
                for path in dict.fromkeys(e["argument_paths"] or []):
                    add(arguments, (day, client, e["tool"], path), 1)
            if e["outcome"] in FAILING and e["session"]:
                wanted = {e["tool"], *(e["suggested"] or [])}
                fixed = any(
                    s["session"] == e["session"]
                    and s["outcome"] == "ok"
                    and s["tool"] in wanted
                    and e["at"] < s["at"] <= e["at"] + WINDOW
                    for s in calls
                )
                add(corrections, (day, client, e["tool"], e["outcome"]), 1, int(fixed))
    rows = lambda counts: {(*key, *figures) for key, figures in counts.items()}  # noqa: E731
    return {
        "listed": rows(listed),
        "mix": rows(mix),
        "refused": rows(refused),
        "unknown": rows(unknown),
        "corrections": rows(corrections),
        "arguments": rows(arguments),
    }


def stored() -> dict[str, set[tuple]]:
    def rows(model: Any, *names: str) -> set[tuple]:
        return set(model.objects.values_list("day", *names))

    return {
        "listed": rows(ListedToolDaily, "client", "tool", "backend", "listings", "bytes"),
        "mix": rows(ProtocolMixDaily, "client", "client_version", "protocol_version", "kind", "count"),
        "refused": rows(RefusedRequestDaily, "client", "method", "code", "count", "first_seen", "last_seen"),
        "unknown": rows(UnknownToolDaily, "client", "tool", "calls", "first_seen", "last_seen"),
        "corrections": rows(CorrectionDaily, "client", "tool", "outcome", "failures", "corrected"),
        "arguments": rows(ArgumentFailureDaily, "client", "tool", "path", "calls"),
    }


def ingested_in(lines: list[str], batch_size: int) -> IngestReport:
    report = ingest(*lines, batch_size=batch_size)
    assert report.malformed == 0 and report.skipped == 0
    return report


ORDERS = {
    "one batch": lambda: ingested_in(LINES, 5000),
    "line by line": lambda: ingested_in(LINES, 1),
    "reversed": lambda: ingested_in(LINES[::-1], 7),
    "split in three batches": lambda: ingested_in(LINES, len(LINES) // 3 + 1),
    "shuffled, seed 1": lambda: ingested_in(random.Random(1).sample(LINES, len(LINES)), 13),
    "shuffled, seed 2": lambda: ingested_in(random.Random(2).sample(LINES, len(LINES)), 40),
    "shuffled, seed 3, line by line": lambda: ingested_in(random.Random(3).sample(LINES, len(LINES)), 1),
    "ingested twice": lambda: (ingested_in(LINES, 50), ingested_in(LINES, 17)),
    "halves, the second first, then all again": lambda: (
        ingested_in(LINES[len(LINES) // 2 :], 9),
        ingested_in(LINES[: len(LINES) // 2], 11),
        ingested_in(random.Random(4).sample(LINES, len(LINES)), 23),
    ),
}


@pytest.mark.parametrize("order", ORDERS)
def test_every_evidence_figure_equals_the_counts_from_the_raw_lines(settings, order):
    settings.ANALYTICS_CORRECTION_WINDOW_SECONDS = 300
    ORDERS[order]()
    want, got = expected(), stored()
    for figure in want:
        assert got[figure] == want[figure], figure
    assert ExchangeEvent.objects.count() == sum(1 for e in parsed() if e["logger"] == "tools.mcp.requests")


def test_the_recorded_sessions_say_what_a_product_manager_reads():
    ingested_in(LINES, 5000)
    claude = CorrectionDaily.objects.filter(client="claude-ai", day__day=23)
    assert {(r.tool, r.outcome, r.failures, r.corrected) for r in claude} == {
        ("tomtom-routing", "invalid_arguments", 2, 2),  # corrected once each, however many successes
        ("tomtom-search", "unknown_tool", 1, 1),  # by the suggested tool
        ("tomtom-static-map", "retired", 1, 1),  # by its replacement
        ("tomtom-geocode", "invalid_arguments", 1, 0),  # the success came 301 s later
        ("tomtom-traffic", "invalid_arguments", 1, 0),  # the success came at the same moment
        ("tomtom-directions", "unknown_tool", 1, 0),  # the success was in another session
    }
    cursor = CorrectionDaily.objects.get(client="cursor-vscode", tool="tomtom-static-map", day__day=23)
    assert (cursor.failures, cursor.corrected) == (1, 0)  # called another tool than its replacement
    names = UnknownToolDaily.objects.filter(tool="get_weather")
    assert sum(r.calls for r in names) == 10  # sessionless: named, not in the corrections
    goose = ListedToolDaily.objects.filter(client="goose", day__day=23)
    assert sorted(r.tool for r in goose) == ["tomtom-geocode", "tomtom-poi-search", "tomtom-routing"]
    assert ProtocolMixDaily.objects.get(client="goose", kind="session", day__day=23).client_version == ""
    assert RefusedRequestDaily.objects.filter(code=-32602).count() == 2
    assert ToolCallEvent.objects.filter(session="s00").exists()


@pytest.mark.parametrize("order", ["one batch", "reversed", "line by line", "ingested twice"])
def test_a_call_with_two_outdated_inputs_is_one_call_of_who_still_calls(order):
    ORDERS[order]()  # either line of a call first, in one batch or apart
    rows = OldCallerDaily.objects.filter(client="goose", kind="outdated_call")
    assert sorted((r.input, r.calls, r.tool_calls) for r in rows) == [("avoid", 1, 1)] * 2 + [("units", 1, 0)] * 2
    query = ReportQuery(start=date(2026, 11, 23), end=date(2026, 11, 24))
    (goose,) = [r for r in still_calling(query) if r.client == "goose"]
    assert goose.calls == 2  # two calls over two days, not four inputs


@pytest.mark.postgresql
@pytest.mark.django_db(transaction=True)
def test_two_writers_on_one_session_count_each_correction_once(settings):
    """The failures and the successes of the same sessions stored by two writers at the same
    moment: each failing call is counted corrected once, exactly as in one writer."""
    if connection.vendor != "postgresql":
        pytest.skip("concurrent writers need PostgreSQL (DATABASE_URL=postgres://...)")
    settings.ANALYTICS_CORRECTION_WINDOW_SECONDS = 300
    calls = [text for text in LINES if '"Tool call"' in text]
    failing = [text for text in calls if '"outcome":"ok"' not in text]
    halves = [failing, [text for text in calls if text not in failing]]
    for _round in range(3):
        for model in (ToolCallEvent, CorrectionDaily, UnknownToolDaily, ArgumentFailureDaily, ProtocolMixDaily):
            model.objects.all().delete()
        ingest_concurrently(*halves, batch_size=3)
        assert stored()["corrections"] == expected()["corrections"]


def test_the_retention_drops_the_exchange_events_and_keeps_their_figures():
    from django.core.management import call_command

    from analytics.partitions import is_partitioned, partitions

    ingested_in(LINES, 5000)
    table = ExchangeEvent._meta.db_table
    if connection.vendor == "postgresql":  # partitioned by month, like every raw event table
        assert is_partitioned(table) and [name for name, _month in partitions(table)] == [f"{table}_p202611"]
    assert ExchangeEvent.objects.filter(raw="").count() == ExchangeEvent.objects.count() > 0  # held whole
    figures = stored()
    call_command("analytics_retention", "--days", "1")  # everything in November 2026 is older
    assert not ExchangeEvent.objects.exists() and not ToolCallEvent.objects.exists()
    assert stored() == figures


def test_the_recorded_sessions_are_what_their_script_writes():
    """tests/data/evidence_sessions.py wrote the file (the process's replica and pid aside)."""
    from tests.data.evidence_sessions import lines

    def without_process(text: str) -> dict:
        return {name: value for name, value in json.loads(text).items() if name not in ("replica", "pid")}

    assert [without_process(text) for text in LINES] == [without_process(text) for text in lines()]
    families = {e["client"].split("/")[0] for e in parsed()}
    assert families == {"claude-ai", "cursor-vscode", "ChatGPT", "goose"}  # four host families
