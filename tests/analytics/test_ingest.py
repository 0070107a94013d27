"""Ingesting app-status logs: every event once, nothing lost, every other line accounted for."""

from __future__ import annotations

import gzip
import io
import os
import random
import re
import subprocess
import sys
import threading
import zlib
from dataclasses import replace
from datetime import UTC, datetime

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import DatabaseError, OperationalError, connection
from django.db.models import Sum
from psycopg.errors import DeadlockDetected

from analytics.ingest import sources, workers
from analytics.ingest import store as store_module
from analytics.ingest.batches import IngestReport, batches, chunks
from analytics.ingest.pipeline import ingest as events_ingest
from analytics.ingest.pipeline import worker_start_method
from analytics.ingest.rollups import Rollup
from analytics.ingest.sources import log_lines, log_open
from analytics.ingest.store import Store
from analytics.models import AppStatusDailyCount, AppStatusEvent, AppStatusHourlyCount, OldCallerDaily
from core.app_status import AppData, Drawn, Failed, HostDropped, OutdatedCall, RetiredToolCalled
from tests.analytics.conftest import call_line, ingest, line, log
from tests.conftest import REPO

pytestmark = pytest.mark.django_db

EVENTS = [
    line(
        AppData,
        "2026-11-02T10:00:01",
        delivery="inline",
        raw_bytes=93_000,
        encoded_chars=41_000,
        result_chars=44_000,
        simplification={"original_points": 20_571, "points": 14_065, "max_error_m": 2.0},
    ),
    line(Drawn, "2026-11-02T10:00:02", source="inline", duration_ms=412.5, features=3),
    line(HostDropped, "2026-11-02T10:30:00", client="cursor-vscode", source="inline", reason="host_dropped"),
    line(
        Failed,
        "2026-11-02T10:30:01",
        client="cursor-vscode",
        source="none",
        stage="result",
        duration_ms=20.0,
        error="no app data",
    ),
    line(
        RetiredToolCalled,
        "2026-11-02T11:05:00",
        tool="tomtom-fuzzy-search",
        client="goose",
        replaced_by=["tomtom-geocode", "tomtom-poi-search"],
    ),
]
TOOL_CALL = call_line("2026-11-02T10:00:00", total_ms=120.5, upstream_ms=98.25, upstream_calls=2, bytes=1_234)


def stored() -> int:
    return AppStatusEvent.objects.count()


def hourly_matches_events() -> bool:
    """The rollup holds exactly the raw events' counts per hour, client, tool and kind."""
    counted = {(row.hour, row.client, row.tool, row.kind): row.count for row in AppStatusHourlyCount.objects.all()}
    raw: dict[tuple[object, ...], int] = {}
    for event in AppStatusEvent.objects.all():
        key = (event.time.replace(minute=0, second=0, microsecond=0), event.client, event.tool, event.kind)
        raw[key] = raw.get(key, 0) + 1
    return counted == raw


def test_ingesting_the_same_lines_twice_adds_nothing():
    first = ingest(*EVENTS)
    second = ingest(*EVENTS)

    assert (first.lines, first.events, first.new, first.duplicates) == (5, 5, 5, 0)
    assert (second.lines, second.events, second.new, second.duplicates) == (5, 5, 0, 5)
    assert stored() == 5
    assert AppStatusHourlyCount.objects.aggregate(total=Sum("count")) == {"total": 5}
    assert hourly_matches_events()


def test_an_event_keeps_every_field_of_its_line():
    ingest(*EVENTS)

    app_data = AppStatusEvent.objects.get(kind="app_data")
    assert (app_data.delivery, app_data.raw_bytes, app_data.encoded_chars, app_data.result_chars) == (
        "inline",
        93_000,
        41_000,
        44_000,
    )
    assert (app_data.original_points, app_data.points, app_data.max_error_m) == (20_571, 14_065, 2.0)
    failed = AppStatusEvent.objects.get(kind="failed")
    assert (failed.client, failed.tool, failed.source, failed.stage, failed.duration_ms, failed.error) == (
        "cursor-vscode",
        "tomtom-routing",
        "none",
        "result",
        20.0,
        "no app data",
    )
    assert (failed.user_agent, failed.request_id, failed.time) == (
        "claude-ai/1.0",
        "req-1",
        datetime(2026, 11, 2, 10, 30, 1, tzinfo=UTC),
    )
    assert failed.replica and failed.pid
    assert failed.raw == ""  # the columns hold the whole line
    dropped = AppStatusEvent.objects.get(kind="host_dropped")
    assert (dropped.source, dropped.reason) == ("inline", "host_dropped")
    retired = AppStatusEvent.objects.get(kind="retired_tool")
    assert (retired.tool, retired.replaced_by) == ("tomtom-fuzzy-search", "tomtom-geocode, tomtom-poi-search")


NOT_HELD = {  # fields of an app-status line its columns cannot hold
    "unknown field": {"cache": "hit"},
    "wrong type": {"duration_ms": "slow"},
    "out of range": {"features": 2**70},
    "unknown simplification field": {"simplification": {"points": 3, "x": 1}},
    "simplification type": {"simplification": {"points": "3"}},
    "comma in a name": {"replaced_by": ["a, b"]},
    "no names": {"replaced_by": []},
    "empty text": {"source": ""},
    "NUL": {"error": "a\u0000b"},
}


@pytest.mark.parametrize("fields", NOT_HELD.values(), ids=NOT_HELD.keys())
def test_an_event_line_is_stored_whole_when_its_columns_cannot_hold_it(fields):
    held = line(Drawn, "2026-11-02T10:00:00", source="inline")
    not_held = line(Drawn, "2026-11-02T10:00:01", **{"source": "inline", **fields})
    unknown_message = held.replace('"App drawn"', '"App drawn twice"')

    ingest(held, not_held, unknown_message)

    assert sorted(AppStatusEvent.objects.values_list("raw", flat=True)) == sorted(["", not_held, unknown_message])


def test_gzip_and_plain_copies_of_a_log_are_the_same_events(tmp_path):
    plain, packed = tmp_path / "app.log", tmp_path / "app.log.1.gz"
    plain.write_bytes(log(*EVENTS))
    packed.write_bytes(gzip.compress(log(*EVENTS)))

    reports = []
    for path in (packed, plain):
        with log_open(str(path)) as stream:
            reports.append(events_ingest(log_lines(stream)))

    assert [(report.events, report.new) for report in reports] == [(5, 5), (5, 0)]
    assert stored() == 5


def test_lines_that_are_neither_app_status_nor_tool_call_events_are_skipped():
    report = ingest(TOOL_CALL, EVENTS[1], "", '{"level":"warning","message":"Not Found: /favicon.ico"}')

    assert (report.lines, report.events, report.tool_calls, report.skipped, report.malformed) == (4, 1, 1, 2, 0)
    assert stored() == 1


def test_malformed_lines_are_reported_with_their_line_numbers_and_the_events_around_them_kept():
    no_client = EVENTS[1].replace('"client":"claude-ai",', "")
    naive_time = EVENTS[1].replace("+00:00", "")
    lines = [EVENTS[0], "not json", EVENTS[1], "[1, 2]", no_client, naive_time, EVENTS[2]]

    report = ingest(*lines)

    assert report.malformed_lines == [
        (2, "not JSON (a partial line?)"),
        (4, "not a JSON object"),
        (5, "app-status event without a text 'client'"),
        (6, "'time' has no UTC offset"),
    ]
    assert (report.lines, report.events, report.new, report.malformed) == (7, 3, 3, 4)
    assert stored() == 3


@pytest.mark.parametrize(
    "written", ["2026-11-02T12:00:02.000+02:00", "2026-11-02T05:00:02-05:00", "2026-11-02T10:00:02Z"]
)
def test_a_time_with_any_utc_offset_is_stored_and_counted_in_its_utc_hour(written):
    assert '"time":"2026-11-02T10:00:02.000+00:00"' in EVENTS[1]
    report = ingest(EVENTS[1].replace("2026-11-02T10:00:02.000+00:00", written))

    assert (report.new, report.malformed) == (1, 0)
    assert AppStatusEvent.objects.get().time == datetime(2026, 11, 2, 10, 0, 2, tzinfo=UTC)
    assert list(AppStatusHourlyCount.objects.values_list("hour", "count")) == [
        (datetime(2026, 11, 2, 10, tzinfo=UTC), 1)
    ]


def test_a_partial_last_line_is_malformed_until_the_line_is_complete():
    complete = log(*EVENTS)
    cut = complete[: -len(EVENTS[-1]) // 2 - 1]  # the last line half written, no newline

    first = events_ingest(log_lines(io.BytesIO(cut)))
    later = events_ingest(log_lines(io.BytesIO(complete)))

    assert (first.events, first.malformed_lines) == (4, [(5, "not JSON (a partial line?)")])
    assert (later.events, later.new, later.malformed) == (5, 1, 0)
    assert stored() == 5


@pytest.mark.parametrize("read_bytes", [7, 1000, 1 << 20])
def test_lines_are_the_same_whatever_reads_they_span_and_a_too_long_line_is_malformed(monkeypatch, read_bytes):
    monkeypatch.setattr(sources, "READ_BYTES", read_bytes)
    monkeypatch.setattr(sources, "MAX_LINE_BYTES", 2_000)
    too_long = '{"event":"app_status","message":"' + "x" * 5_000 + '"}'
    data = log(EVENTS[0], too_long, EVENTS[1], "", EVENTS[2]) + EVENTS[3].encode()  # the last line has no newline

    report = events_ingest(log_lines(io.BytesIO(data)))

    assert (report.lines, report.events, report.new, report.skipped, report.malformed) == (6, 4, 4, 1, 1)
    assert [number for number, _ in report.malformed_lines] == [2]
    moments = ("10:00:01", "10:00:02", "10:30:00", "10:30:01")
    assert sorted(AppStatusEvent.objects.values_list("time", flat=True)) == [
        datetime.fromisoformat(f"2026-11-02T{moment}+00:00") for moment in moments
    ]


def test_a_truncated_gzip_file_keeps_the_lines_before_the_break(tmp_path):
    packed = gzip.compress(log(*EVENTS * 200))
    path = tmp_path / "cut.gz"
    path.write_bytes(packed[: len(packed) * 3 // 4])

    with log_open(str(path)) as stream:
        report = events_ingest(log_lines(stream))

    assert report.malformed == 1
    number, reason = report.malformed_lines[0]
    assert number == report.lines and reason.startswith("unreadable, the rest of the input is lost")
    assert stored() == 5  # the 200 copies are 5 events, and the first 5 lines were read


def distinct_events(count: int, start: int = 0) -> bytes:
    """`count` different app-status lines (one second apart), as a log."""
    seconds = range(start, start + count)
    return log(
        *(line(Drawn, f"2026-11-02T1{i // 3600}:{i // 60 % 60:02d}:{i % 60:02d}", source="inline") for i in seconds)
    )


def complete_lines_in(after: bytes) -> int:
    """How many whole lines zlib can decode from the start of `after` (0 for garbage)."""
    try:
        return zlib.decompressobj(wbits=31).decompress(after).count(b"\n")
    except zlib.error:
        return 0


@pytest.mark.parametrize(
    "after",
    [
        pytest.param(b"garbage that is not gzip" * 40, id="garbage"),
        pytest.param(
            gzip.compress(random.Random(0).randbytes(50_000).replace(b"\n", b" "))[:2_000], id="cut-off member"
        ),
        pytest.param(gzip.compress(distinct_events(200, start=1000))[:-100], id="cut-off member of lines"),
        pytest.param(gzip.compress(b"y" * 100)[:-4], id="member without its size"),
        pytest.param(b"\x1f", id="one stray byte"),
    ],
)
def test_a_break_after_a_complete_member_keeps_every_line_before_it(tmp_path, after):
    path = tmp_path / "broken.gz"
    path.write_bytes(gzip.compress(distinct_events(300)) + after)
    kept = 300 + complete_lines_in(after)

    with log_open(str(path)) as stream:
        report = events_ingest(log_lines(stream))

    assert (report.events, report.new, report.malformed) == (kept, kept, 1)
    assert stored() == kept
    assert report.malformed_lines == [(kept + 1, report.malformed_lines[0][1])]
    reason = report.malformed_lines[0][1]
    assert reason.startswith("unreadable, the rest of the input is lost")
    assert f"after line {kept}, byte" in reason


def test_a_message_the_contract_does_not_know_is_kept_as_kind_unknown():
    newer = EVENTS[1].replace('"message":"App drawn"', '"message":"App drawn twice"')

    report = ingest(newer)

    assert (report.events, report.unknown, report.new) == (1, 1, 1)
    event = AppStatusEvent.objects.get()
    assert (event.kind, event.tool, event.client) == ("unknown", "tomtom-routing", "claude-ai")


def test_no_event_is_lost_across_batches_duplicates_and_reruns():
    hours = [
        f"2026-11-{day:02d}T{hour:02d}:{minute:02d}:00" for day in (2, 3) for hour in (0, 9, 23) for minute in (0, 59)
    ]
    lines = [line(Drawn, at, client=f"host-{i % 3}", source="inline") for i, at in enumerate(hours)]
    doubled = [text for pair in zip(lines, lines, strict=True) for text in pair]

    report = ingest(*doubled, batch_size=5)
    again = ingest(*reversed(lines), batch_size=4)

    assert (report.events, report.new, again.new) == (24, 12, 0)
    assert stored() == 12
    assert hourly_matches_events()


def test_old_callers_are_counted_once_across_batches_duplicates_and_reruns():
    calls = [
        line(RetiredToolCalled, at, client=client, tool="tomtom-fuzzy-search", replaced_by=["tomtom-geocode"])
        for at, client in [
            ("2026-11-02T23:59:59.999", "goose"),
            ("2026-11-02T08:00:00", "goose"),
            ("2026-11-03T00:00:00", "goose"),
            ("2026-11-02T12:00:00", "cline"),
        ]
    ] + [
        line(
            OutdatedCall,
            "2026-11-03T07:00:00",
            client="ChatGPT",
            tool="tomtom-traffic",
            input="language",
            change="string_now_list",
        )
    ]
    doubled = [text for pair in zip(calls, calls, strict=True) for text in pair]

    ingest(*doubled[:2], batch_size=3)  # goose's last call of the day first
    ingest(*doubled, batch_size=3)  # its first call of the day is added to the stored row
    ingest(*reversed(calls), batch_size=2)

    def at(text: str) -> datetime:
        return datetime.fromisoformat(text).replace(tzinfo=UTC)

    rows = OldCallerDaily.objects.values_list(
        "day", "kind", "client", "tool", "replaced_by", "input", "change", "calls", "first_seen", "last_seen"
    )
    assert sorted(rows) == [
        (
            at("2026-11-02T00:00"),
            "retired_tool",
            "cline",
            "tomtom-fuzzy-search",
            "tomtom-geocode",
            "",
            "",
            1,
            at("2026-11-02T12:00"),
            at("2026-11-02T12:00"),
        ),
        (
            at("2026-11-02T00:00"),
            "retired_tool",
            "goose",
            "tomtom-fuzzy-search",
            "tomtom-geocode",
            "",
            "",
            2,
            at("2026-11-02T08:00"),
            at("2026-11-02T23:59:59.999"),
        ),
        (
            at("2026-11-03T00:00"),
            "outdated_call",
            "ChatGPT",
            "tomtom-traffic",
            "",
            "language",
            "string_now_list",
            1,
            at("2026-11-03T07:00"),
            at("2026-11-03T07:00"),
        ),
        (
            at("2026-11-03T00:00"),
            "retired_tool",
            "goose",
            "tomtom-fuzzy-search",
            "tomtom-geocode",
            "",
            "",
            1,
            at("2026-11-03T00:00"),
            at("2026-11-03T00:00"),
        ),
    ]


def test_a_batch_ends_at_its_byte_limit_before_its_event_count():
    lines = [text.encode() + b"\n" for text in (*EVENTS, TOOL_CALL, *EVENTS[:2])]
    longest = max(len(text) for text in lines)
    store = Store()

    by_bytes = [
        sum(part.count for part in batch)
        for batch in batches(lines, store, IngestReport(), size=100, max_bytes=2 * longest)
    ]
    report = events_ingest(lines, batch_size=100, batch_bytes=2 * longest)
    stored_by_bytes = stored_tables()
    truncate_all()
    by_count = [sum(part.count for part in batch) for batch in batches(lines, store, IngestReport(), size=100)]
    events_ingest(lines, batch_size=100)

    # A batch ends with the line that brings it to twice the longest line's length, long before
    # 100 events; in one batch of 100 the same lines store the same.
    assert (by_bytes, by_count) == ([3, 3, 2], [6])
    assert (report.events, report.new, report.tool_calls, report.tool_calls_new, report.batches) == (7, 5, 1, 1, 3)
    assert stored_by_bytes == stored_tables()


def test_a_chunk_for_the_workers_ends_at_its_byte_limit_or_its_line_count():
    lines = [b"x" * length for length in (5, 5, 30, 1, 1, 1, 1, 1, 12, 2)]

    cut = list(chunks(lines, 4, 10))

    assert [(before, [len(line) for line in chunk], broken) for before, chunk, broken in cut] == [
        (0, [5, 5], None),  # 10 bytes: the limit
        (2, [30], None),  # one line longer than the limit is a chunk of its own
        (3, [1, 1, 1, 1], None),  # 4 lines: the count
        (7, [1, 12], None),
        (9, [2], None),
    ]


def test_a_batch_that_fails_stores_neither_its_events_nor_its_counts(monkeypatch):
    # A rollup whose table the database has not: adding to it fails after the events were inserted.
    missing = Rollup(AppStatusHourlyCount, "hour", ("client",), ("no_such_column",))
    monkeypatch.setattr(store_module, "deltas", lambda family, rows: {missing: [(row.time, "x", 1) for row in rows]})
    with pytest.raises(DatabaseError):
        ingest(*EVENTS)
    monkeypatch.undo()
    assert (stored(), AppStatusHourlyCount.objects.count(), AppStatusDailyCount.objects.count()) == (0, 0, 0)

    report = ingest(*EVENTS)

    assert (report.new, stored()) == (5, 5)
    assert hourly_matches_events()
    assert list(AppStatusDailyCount.objects.values_list("kind", "count").order_by("kind")) == [
        ("app_data", 1),
        ("drawn", 1),
        ("failed", 1),
        ("host_dropped", 1),
        ("retired_tool", 1),
    ]


class Unaware(Store):
    """A store that sees nothing stored: as when another writer commits after the store looked."""

    def anything_stored(self, model, first, last):
        return False


def test_a_concurrent_writer_that_stored_some_events_first_costs_nothing():
    ingest(*EVENTS[:3])
    store, report = Unaware(), IngestReport()

    # The direct load meets the unique constraint and the batch goes through the staging table.
    for batch in batches([text.encode() for text in EVENTS], store, report):
        report.add_new(batch, store.write(batch))

    assert (report.events, report.new) == (5, 2)
    assert stored() == 5
    assert hourly_matches_events()


def test_the_command_reads_files_and_stdin_and_reports_malformed_lines(tmp_path, monkeypatch, capsys):
    path = tmp_path / "app.log.gz"
    path.write_bytes(gzip.compress(log(EVENTS[0], "{oops", TOOL_CALL)))
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(log(*EVENTS))))

    call_command("ingest_app_status", str(path), "-")

    out, err = capsys.readouterr()
    assert out.splitlines() == [
        f"{path}: 3 lines: 1 app-status events (1 new, 0 already stored, 0 of unknown kind), "
        "1 tool calls (1 new, 0 already stored, 0 with unknown fields), 0 other lines skipped, 1 malformed",
        "stdin: 5 lines: 5 app-status events (4 new, 1 already stored, 0 of unknown kind), "
        "0 tool calls (0 new, 0 already stored, 0 with unknown fields), 0 other lines skipped, 0 malformed",
    ]
    assert err.splitlines() == [f"{path}:2: not JSON (a partial line?)"]
    assert stored() == 5


def test_the_command_refuses_a_missing_file(tmp_path):
    with pytest.raises(CommandError, match=r"missing\.log: cannot open"):
        call_command("ingest_app_status", str(tmp_path / "missing.log"))


@pytest.mark.parametrize(
    ("option", "value", "message"),
    [
        ("--batch-size", "0", "Error: argument --batch-size: must be a whole number from 1 to 1,000,000, not '0'"),
        (
            "--batch-size",
            "2000000",
            "Error: argument --batch-size: must be a whole number from 1 to 1,000,000, not '2000000'",
        ),
        (
            "--batch-size",
            "many",
            "Error: argument --batch-size: must be a whole number from 1 to 1,000,000, not 'many'",
        ),
        ("--workers", "-1", "Error: argument --workers: must be a whole number from 0 to 64, not '-1'"),
        ("--workers", "65", "Error: argument --workers: must be a whole number from 0 to 64, not '65'"),
    ],
)
def test_the_command_refuses_a_batch_size_or_worker_count_out_of_range(tmp_path, option, value, message):
    path = tmp_path / "app.log"
    path.write_bytes(log(*EVENTS))

    with pytest.raises(CommandError) as refused:
        call_command("ingest_app_status", str(path), option, value)

    assert str(refused.value) == message
    assert stored() == 0


def test_the_command_reports_progress_on_stderr_unless_quiet(tmp_path, monkeypatch, capsys):
    from analytics.management.commands import ingest_app_status

    path = tmp_path / "app.log"
    path.write_bytes(log(*EVENTS, "{oops", TOOL_CALL))
    monkeypatch.setattr(ingest_app_status, "PROGRESS_EVERY", 0.0)  # after every batch

    call_command("ingest_app_status", str(path), "--batch-size", "2")
    progress = [text for text in capsys.readouterr().err.splitlines() if "so far" in text]
    call_command("ingest_app_status", str(path), "--batch-size", "2", "--quiet")
    quiet = [text for text in capsys.readouterr().err.splitlines() if "so far" in text]

    assert progress, "a progress line per batch"
    assert re.fullmatch(rf"{re.escape(str(path))}: [\d,]+ lines so far, [\d,]+ events/s, [01] malformed", progress[0])
    assert progress[-1].endswith("1 malformed")
    assert quiet == []


def ingested_tables() -> tuple[type, ...]:
    """Every table ingestion writes: the raw events and their rollups."""
    from analytics import models

    return (
        models.AppStatusEvent,
        models.AppStatusHourlyCount,
        models.AppStatusDailyCount,
        models.OldCallerDaily,
        models.ToolCallEvent,
        models.ToolCallHourly,
        models.ToolCallDaily,
    )


def stored_tables() -> dict[str, list[tuple]]:
    """Every stored event and rollup row, without surrogate ids, in a stable order."""
    tables = {}
    for model in ingested_tables():
        names = [f.name for f in model._meta.concrete_fields if f.name not in ("id", "pk")]
        tables[model.__name__] = sorted(model.objects.values_list(*names), key=repr)
    return tables


def truncate_all() -> None:
    for model in ingested_tables():
        model.objects.all().delete()


def mixed_lines() -> list[bytes]:
    """The known data set's app-status and tool-call lines, with repeats, an empty line, lines
    that are not events and lines that are malformed."""
    from tests.analytics.conftest import KNOWN_CALLS, KNOWN_DATA

    mixed = [
        *KNOWN_DATA[:9],
        "not json",
        *KNOWN_CALLS[:4],
        KNOWN_DATA[3],
        "",
        *KNOWN_DATA[9:],
        "[1]",
        *KNOWN_CALLS[4:],
        KNOWN_CALLS[0],
        '{"message":"Not Found: /favicon.ico"}',
    ]
    return [text.encode() for text in mixed]


@pytest.mark.skipif(connection.vendor != "postgresql", reason="worker processes parse for PostgreSQL only")
@pytest.mark.django_db(transaction=True)
def test_worker_processes_store_and_count_exactly_what_the_parser_thread_does():
    lines = mixed_lines()

    sequential = events_ingest(lines, batch_size=4)
    expected = stored_tables()
    truncate_all()
    # Every chunk to the workers, started afresh.
    parallel = events_ingest(lines, batch_size=4, workers=2, start_method="spawn", store_while_starting=False)
    in_parallel = stored_tables()
    truncate_all()
    mixed = events_ingest(lines, batch_size=4, workers=2)  # this process stores chunks until a worker starts
    mixed_tables = stored_tables()
    truncate_all()
    by_bytes = events_ingest(lines, batch_size=100, workers=2, batch_bytes=max(map(len, lines)) * 3)
    again = events_ingest(lines, batch_size=3, workers=2)

    def counts(report: IngestReport) -> IngestReport:
        return replace(report, batches=0, worker_batches=0)

    assert counts(parallel) == counts(mixed) == counts(by_bytes) == counts(sequential)
    assert mixed_tables == expected
    assert (parallel.malformed_lines, parallel.skipped) == (
        [(10, "not JSON (a partial line?)"), (29, "not a JSON object")],
        2,
    )
    assert in_parallel == stored_tables() == expected
    assert (again.new, again.tool_calls_new, again.events, again.tool_calls) == (0, 0, 22, 9)
    assert parallel.worker_batches == parallel.batches == 9  # worker processes stored every batch themselves
    assert sequential.worker_batches == 0


@pytest.mark.skipif(connection.vendor != "postgresql", reason="worker processes parse for PostgreSQL only")
@pytest.mark.django_db(transaction=True)
def test_the_commands_forked_workers_store_exactly_what_the_parser_thread_does(tmp_path):
    """The command runs no other thread, so its workers are forked (the test process may run
    threads, and then starts them afresh): run it as an operator does, in its own process."""
    lines = mixed_lines()
    sequential = events_ingest(lines, batch_size=4)
    expected = stored_tables()
    truncate_all()
    path = tmp_path / "server.log.gz"
    path.write_bytes(gzip.compress(b"\n".join(lines) + b"\n"))
    settings = connection.settings_dict
    database = (
        f"postgres://{settings['USER']}@{settings['HOST'] or '127.0.0.1'}:{settings['PORT'] or 5432}/{settings['NAME']}"
    )
    command = [sys.executable, "manage.py", "ingest_app_status", "--workers", "2", "--batch-size", "4", str(path)]
    env = {**os.environ, "DATABASE_URL": database, "DOTENV_PATH": "/nonexistent"}

    result = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=120, check=False)

    assert (result.returncode, result.stdout) == (
        0,
        f"{path}: 35 lines: 22 app-status events (21 new, 1 already stored, 1 of unknown kind), 9 tool calls "
        "(8 new, 1 already stored, 0 with unknown fields), 2 other lines skipped, 2 malformed\n",
    )
    assert (sequential.lines, sequential.events, sequential.new, sequential.tool_calls_new) == (35, 22, 21, 8)
    assert stored_tables() == expected


def test_workers_are_forked_where_this_process_runs_no_other_thread(monkeypatch):
    monkeypatch.setattr(sys, "platform", "linux")
    monkeypatch.setattr(threading, "active_count", lambda: 1)
    alone = worker_start_method()
    monkeypatch.setattr(threading, "active_count", lambda: 2)
    beside_a_thread = worker_start_method()
    monkeypatch.setattr(sys, "platform", "darwin")  # fork is unsafe there with system frameworks loaded
    monkeypatch.setattr(threading, "active_count", lambda: 1)

    assert (alone, beside_a_thread, worker_start_method()) == ("fork", "spawn", "spawn")


@pytest.mark.skipif(connection.vendor != "postgresql", reason="worker processes parse for PostgreSQL only")
@pytest.mark.django_db(transaction=True)
def test_worker_processes_keep_every_line_before_a_break(tmp_path):
    path = tmp_path / "broken.gz"
    path.write_bytes(gzip.compress(distinct_events(300)) + b"garbage that is not gzip" * 40)

    with log_open(str(path)) as stream:
        report = events_ingest(log_lines(stream), batch_size=70, workers=2)

    assert (report.lines, report.events, report.new, report.malformed) == (301, 300, 300, 1)
    number, reason = report.malformed_lines[0]
    assert number == 301 and reason.startswith("unreadable, the rest of the input is lost")
    assert stored() == 300


class Deadlocked(Store):
    """A store whose first `failures` writes PostgreSQL chose as a deadlock's victim (or that fail
    otherwise: `error`)."""

    def __init__(self, failures: int, error: Exception) -> None:
        super().__init__()
        self.failures, self.error, self.attempts = failures, error, 0

    def write(self, parts):
        self.attempts += 1
        if self.attempts <= self.failures:
            raise self.error
        return super().write(parts)


def test_a_worker_writes_a_batch_again_when_postgresql_chose_it_as_a_deadlocks_victim():
    victim = OperationalError("deadlock detected")
    victim.__cause__ = DeadlockDetected("deadlock detected")
    store = Deadlocked(1, victim)

    report = workers.store_chunk((0, [text.encode() for text in EVENTS], None), store, None)

    assert (store.attempts, report.events, report.new, stored()) == (2, 5, 5, 5)
    assert hourly_matches_events()


def test_a_worker_does_not_write_again_after_any_other_error():
    broken = OperationalError("server closed the connection")
    broken.__cause__ = OSError("connection reset")
    store = Deadlocked(3, broken)

    with pytest.raises(OperationalError, match="server closed"):
        workers.store_chunk((0, [text.encode() for text in EVENTS], None), store, None)

    assert (store.attempts, stored()) == (1, 0)
