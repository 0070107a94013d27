"""Benchmark analytics on PostgreSQL: ingestion speed and memory, report latency.

    .venv/bin/python bench/bench_analytics.py [--events 1000000] [--tool-calls N] [--database-url URL]

Writes `--events` realistic app-status lines (bench/app_status_lines.py) and `--tool-calls`
(default: as many) `Tool call` lines (bench/tool_call_lines.py), fixed seeds, over 30 days into
temporary gzip files, creates a scratch database beside DATABASE_URL's (default
postgres://postgres@127.0.0.1:5432/test), migrates it, and measures:

- the machine's speed: a fixed loop in one process (orjson, SHA-256 and `fromisoformat` of the
  tool-call file's first 200,000 lines), so that tables from different machines compare;
- ingestion (`analytics.ingest.pipeline.ingest`, as `manage.py ingest_app_status` runs it) in a fresh process
  each time: events/s and peak RSS, for a tenth of the app-status file and for all of it
  (bounded memory: the two peaks match), and for the tool-call file (every caller with an API
  key, `"tenant": null`; at the end, again with 30 % of the calls from three tenants), and last
  4,000 lines of 200 kB each (memory with long lines: a batch is also bounded by bytes);
- the app-status file again (idempotent: nothing new);
- the stored size of the raw events (every partition and index);
- the 30-day reports (median of 7): the widget dashboard's table and chart from the hourly
  counts, the whole page, the API's hourly rows, the table from the raw events instead (why
  the rollups exist); the tool-call totals by family and tool, by backend, the chart's series,
  and the whole tool-call page, all from the tool-call rollup.

Prints a markdown table, then drops the scratch database and the files. Not a test.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import psycopg

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
END = datetime(2026, 11, 30, tzinfo=UTC)
DAYS = 30


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--tool-calls", type=int, default=None, help="Tool-call lines (default: --events).")
    parser.add_argument(
        "--quick", action="store_true", help="Skip the tenth-size run and the idempotent re-run (for large --events)."
    )
    parser.add_argument(
        "--no-join-keys",
        action="store_true",
        help="Widget reports without `delivery_request_id`, as widgets before the funnel sent them.",
    )
    parser.add_argument(
        "--database-url", default=os.environ.get("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/test")
    )
    parser.add_argument(
        "--keep-database",
        action="store_true",
        help="Keep the scratch database (its name is printed) for --reports-on; with --reports-on, keep it again.",
    )
    parser.add_argument(
        "--reports-on",
        metavar="NAME",
        help="Only time the reports, on a database a --keep-database run left (then drop it).",
    )
    parser.add_argument("--ingest-child", metavar="FILE", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.ingest_child:
        ingest_child(args.ingest_child)
        return
    if not args.database_url.startswith("postgres"):
        parser.error("the benchmark needs PostgreSQL")
    if args.reports_on:
        reports_only(args.database_url, args.reports_on, keep=args.keep_database)
        return

    scratch = f"analytics_bench_{os.getpid()}"
    admin_url = args.database_url
    bench_url = admin_url.rsplit("/", 1)[0] + "/" + scratch
    with tempfile.TemporaryDirectory() as tmp:
        full, tenth = Path(tmp) / "app-status.jsonl.gz", Path(tmp) / "app-status-tenth.jsonl.gz"
        calls, call_count = Path(tmp) / "tool-calls.jsonl.gz", args.tool_calls or args.events
        print(f"writing {args.events:,} app-status and {call_count:,} tool-call lines ...", file=sys.stderr)
        write_log(full, args.events, join_keys=not args.no_join_keys)
        if not args.quick:
            write_log(tenth, args.events // 10, join_keys=not args.no_join_keys)
        write_log(calls, call_count, tool_calls=True)
        if not args.quick:
            write_log(Path(tmp) / "tool-calls-tenants.jsonl.gz", call_count, tool_calls=True, tenants=True)
            write_long_lines(Path(tmp) / "long-lines.jsonl.gz")
        print(f"{full.stat().st_size / 1e6:.1f} MB gzip; creating database {scratch}", file=sys.stderr)
        with psycopg.connect(admin_url, autocommit=True) as admin:
            admin.execute(f"CREATE DATABASE {scratch}")
        try:
            os.environ["DATABASE_URL"] = bench_url
            rows = run(full, None if args.quick else tenth, args.events, calls, call_count)
        finally:
            close_django()
            if args.keep_database:
                print(f"kept database {scratch}: --reports-on {scratch}", file=sys.stderr)
            else:
                with psycopg.connect(admin_url, autocommit=True) as admin:
                    admin.execute(f"DROP DATABASE IF EXISTS {scratch} WITH (FORCE)")
    print_table(rows)


def reports_only(admin_url: str, name: str, *, keep: bool = False) -> None:
    """The report latencies again on a kept database (at a quieter moment, say); then drop it,
    unless `keep` (to measure a change to the reports on the same data)."""
    import django

    os.environ["DATABASE_URL"] = admin_url.rsplit("/", 1)[0] + "/" + name
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tomtom_mcp.settings")
    django.setup()
    try:
        rows = [
            ("load average (1, 5, 15 min) at the start", ", ".join(f"{x:.1f}" for x in os.getloadavg())),
            *report_latencies(),
            ("load average (1, 5, 15 min) at the end", ", ".join(f"{x:.1f}" for x in os.getloadavg())),
        ]
    finally:
        close_django()
        if not keep:
            with psycopg.connect(admin_url, autocommit=True) as admin:
                admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
    print_table(rows)


def write_log(
    path: Path, count: int, *, tool_calls: bool = False, tenants: bool = False, join_keys: bool = True
) -> None:
    from app_status_lines import app_status_lines  # beside this file
    from tool_call_lines import tool_call_lines

    if tool_calls:
        lines = tool_call_lines(count, end=END, days=DAYS, tenants=tenants)
    else:
        lines = app_status_lines(count, end=END, days=DAYS, join_keys=join_keys)
    with gzip.open(path, "wt", encoding="utf-8", compresslevel=1) as out:
        for line in lines:
            out.write(line + "\n")


LONG_LINES, LONG_LINE_BYTES = 4_000, 200_000


def write_long_lines(path: Path) -> None:
    """Tool-call lines of about LONG_LINE_BYTES each, from a newer server (a field this version
    does not know): 800 MB of lines, which batches of 25,000 lines would hold all at once were
    batches not also bounded by bytes (ADR 20)."""
    with gzip.open(path, "wt", encoding="utf-8", compresslevel=1) as out:
        for number in range(LONG_LINES):
            moment = END - timedelta(days=1) + timedelta(seconds=number)
            line = {
                "time": moment.isoformat(timespec="milliseconds"),
                "level": "info",
                "logger": "tools.calls",
                "message": "Tool call",
                "tool": "tomtom-routing",
                "client": "claude-ai",
                "outcome": "ok",
                "total_ms": 12.5,
                "request_id": f"{number:016x}",
                "trace": "x" * LONG_LINE_BYTES,
            }
            out.write(json.dumps(line) + "\n")


def run(full: Path, tenth: Path | None, events: int, calls: Path, call_count: int) -> list[tuple[str, str]]:
    """Every measurement as (name, result); without `tenth`, no small run and no re-run."""
    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tomtom_mcp.settings")
    django.setup()
    from django.core.management import call_command
    from django.db import connection

    call_command("migrate", verbosity=0)
    tenant_calls = calls.with_name("tool-calls-tenants.jsonl.gz")
    with connection.cursor() as cursor:
        cursor.execute("SHOW server_version")
        (version,) = cursor.fetchone()
    rows = [
        ("machine", f"PostgreSQL {version}, Python {sys.version.split()[0]}, {os.cpu_count()} CPUs"),
        (
            "machine speed: orjson, SHA-256 and `fromisoformat` of 200,000 tool-call lines, one process",
            machine_reference(calls),
        ),
    ]
    if tenth is not None:
        small = ingest(tenth)
        rows.append((f"ingest {events // 10:,} app-status events (gzip), fresh process", describe(small)))
        truncate()
    first = ingest(full)
    assert first["new"] == events, first
    rows.append((f"ingest {events:,} app-status events (gzip), fresh process", describe(first)))
    with_calls = ingest(calls)
    assert with_calls["new"] == call_count, with_calls
    rows.append((f"ingest {call_count:,} tool-call events (gzip), fresh process", describe(with_calls)))
    rows.append(("stored size of the events, with their indexes (app-status / tool-call)", stored_sizes()))
    if tenth is not None:
        again = ingest(full)
        assert again["new"] == 0, again
        rows.append(("ingest the app-status file again (idempotent: 0 new)", describe(again)))
    rows.extend(report_latencies())
    if tenant_calls.exists():  # more rollup rows: a tenant is one more dimension of them
        truncate()
        with_tenants = ingest(tenant_calls)
        assert with_tenants["new"] == call_count, with_tenants
        rows.append(
            (
                f"ingest {call_count:,} tool-call events, 30 % from 3 tenants (gzip), fresh process",
                describe(with_tenants),
            )
        )
    long_lines = calls.with_name("long-lines.jsonl.gz")
    if long_lines.exists():  # memory, not speed: about 84 of these lines fill a batch's 16 MiB
        truncate()
        result = ingest(long_lines)
        assert result["new"] == LONG_LINES, result
        rows.append(
            (
                f"ingest {LONG_LINES:,} tool-call lines of {LONG_LINE_BYTES // 1000:,} kB each (a field this "
                "version does not know: stored whole), fresh process",
                describe(result),
            )
        )
    rows.append(("load average (1, 5, 15 min) at the end", ", ".join(f"{load:.1f}" for load in os.getloadavg())))
    return rows


def machine_reference(calls: Path) -> str:
    """CPU time per line of a fixed loop over the tool-call file's first 200,000 lines, best of 3:
    the same work on any machine, so tables from different days can be compared (ADR 20). The
    machines this benchmark runs on have differed by more than twice in a week."""
    import hashlib
    import itertools

    import orjson

    with gzip.open(calls, "rb") as stream:
        lines = [line.rstrip(b"\n") for line in itertools.islice(stream, 200_000)]
    best = float("inf")
    for _ in range(3):
        started = time.process_time()
        for line in lines:
            hashlib.sha256(line).digest()
            datetime.fromisoformat(orjson.loads(line)["time"])
        best = min(best, time.process_time() - started)
    return f"**{best / len(lines) * 1e6:.2f} µs** per line (CPU time, best of 3)"


def ingest(path: Path) -> dict[str, float]:
    """Run the ingestion in a fresh process; its own peak RSS is what we want to see."""
    result = subprocess.run(
        [sys.executable, __file__, "--ingest-child", str(path)],
        check=True,
        capture_output=True,
        text=True,
        env=os.environ,
    )
    return json.loads(result.stdout.splitlines()[-1])


def ingest_child(path: str) -> None:
    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tomtom_mcp.settings")
    django.setup()
    from analytics.ingest.pipeline import ingest
    from analytics.ingest.sources import log_lines, log_open
    from analytics.management.commands.ingest_app_status import WORKERS

    baseline = peak_rss_kb()
    cpu_before = _cpu_seconds()
    started = time.perf_counter()
    with log_open(path) as stream:
        report = ingest(log_lines(stream), workers=WORKERS)  # as the command runs it
    seconds = time.perf_counter() - started
    cpu_s = _cpu_seconds() - cpu_before  # this process and its workers (once they ended), not PostgreSQL
    peak = peak_rss_kb()
    events, new = report.events + report.tool_calls, report.new + report.tool_calls_new
    workers_peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss  # the largest worker's, once they ended
    print(
        json.dumps(
            {
                "events": events,
                "new": new,
                "seconds": seconds,
                "peak_kb": peak,
                "baseline_kb": baseline,
                "workers_peak_kb": workers_peak,
                "cpu_s": cpu_s,
            }
        )
    )


def _cpu_seconds() -> float:
    """User and system CPU of this process and of its children that ended (the workers)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def peak_rss_kb() -> int:
    """This process's peak resident size in kB, since it started its program: `VmHWM` where Linux
    has it. `ru_maxrss` keeps the high-water mark of the process it was forked from, so a child
    of this benchmark's (by then larger) process would report the parent's size."""
    try:
        with open("/proc/self/status") as status:
            for row in status:
                if row.startswith("VmHWM:"):
                    return int(row.split()[1])
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def describe(result: dict[str, float]) -> str:
    rate = result["events"] / result["seconds"]
    cpu_us = result["cpu_s"] / result["events"] * 1e6
    print(
        f"  {result['events']:,} events in {result['seconds']:.1f} s: {rate:,.0f} events/s, "
        f"{cpu_us:.1f} µs CPU per event outside PostgreSQL",
        file=sys.stderr,
    )
    return (
        f"{result['seconds']:.1f} s, **{rate:,.0f} events/s**, {cpu_us:.1f} µs of CPU per event outside "
        f"PostgreSQL, peak RSS {result['peak_kb'] / 1024:.0f} MB "
        f"({result['baseline_kb'] / 1024:.0f} MB before reading), each worker at most "
        f"{result['workers_peak_kb'] / 1024:.0f} MB"
    )


def stored_sizes() -> str:
    """The raw event tables' size on disk, all partitions and indexes, per kind."""
    from django.db import connection

    from analytics.models import AppStatusEvent, ToolCallEvent

    sizes = []
    with connection.cursor() as cursor:
        for model in (AppStatusEvent, ToolCallEvent):
            cursor.execute(
                "SELECT coalesce(sum(pg_total_relation_size(inhrelid)), 0) + pg_total_relation_size(%s::regclass) "
                "FROM pg_inherits WHERE inhparent = %s::regclass",
                [model._meta.db_table, model._meta.db_table],
            )
            sizes.append(f"{float(cursor.fetchone()[0]) / 1e6:,.0f} MB")
    return " / ".join(sizes)


def truncate() -> None:
    from django.db import connection

    from analytics import models

    tables = [
        model._meta.db_table
        for model in (
            models.AppStatusEvent,
            models.AppStatusHourlyCount,
            models.AppStatusDailyCount,
            models.OldCallerDaily,
            models.ToolCallEvent,
            models.ToolCallHourly,
            models.ToolCallDaily,
        )
    ]
    with connection.cursor() as cursor:
        cursor.execute(f"TRUNCATE {', '.join(tables)}")


def report_latencies() -> list[tuple[str, str]]:
    from django.conf import settings
    from django.contrib.auth.models import User
    from django.db import connection
    from django.db.models import Count, Q
    from django.test import RequestFactory, override_settings

    from analytics.models import AppStatusEvent
    from analytics.selectors import ReportQuery, failure_counts
    from analytics.stats import COUNT_STATS
    from analytics.tool_stats import tool_call_stats
    from analytics.views import dashboard, overview_page, tool_calls_page

    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE")
    end = (END - timedelta(days=1)).date()
    days = ReportQuery(start=end - timedelta(days=DAYS - 1), end=end)
    hours = ReportQuery(start=days.start, end=end, bucket="hour")
    by_family = ReportQuery(start=days.start, end=end, group="family")
    filters = {"start": days.start.isoformat(), "end": end.isoformat()}
    request = RequestFactory().get("/analytics/", filters)
    calls_request = RequestFactory().get("/analytics/tool-calls/", {**filters, "group": "family"})
    request.user = calls_request.user = User(username="bench", is_staff=True, is_superuser=True, is_active=True)
    # The overview's presets end with the current hour; the data ends at END, so the windows are
    # given as the preset would make them then (`since`, `until`), and one ending ten hours into a
    # day (so both edges are read from the hourly rollups).
    overview_requests = {}
    for label, span, end_at in (
        ("last 24 hours", timedelta(hours=24), END),
        ("last 7 days", timedelta(days=7), END),
        ("last 30 days", timedelta(days=30), END),
        ("30 days ending 10:00", timedelta(days=30), END - timedelta(hours=14)),
    ):
        overview_requests[label] = RequestFactory().get(
            "/analytics/", {"since": (end_at - span).isoformat(), "until": end_at.isoformat()}
        )
        overview_requests[label].user = request.user

    def raw_totals() -> list[object]:
        counts = {stat.name: Count("id", filter=Q(kind=stat.kind)) for stat in COUNT_STATS}
        return list(
            AppStatusEvent.objects.filter(time__gte=days.start_time, time__lt=days.end_time)
            .values("client", "tool")
            .annotate(**counts)
        )

    def table() -> object:
        return failure_counts(days, by=("client", "tool"))

    def chart() -> object:
        return failure_counts(days, by=("bucket", "client"))

    def hourly() -> object:
        return failure_counts(hours, by=("bucket", "client", "tool"))

    # The pages link their static files by name only: no collectstatic manifest is needed.
    plain_static = {
        **settings.STORAGES,
        "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
    }
    with override_settings(STORAGES=plain_static):
        return [
            ("30-day totals by host and tool (dashboard table)", median_ms(table)),
            ("30-day daily failure rate by host (dashboard chart)", median_ms(chart)),
            ("whole 30-day dashboard page (every query and the HTML)", median_ms(lambda: dashboard(request))),
            (f"30-day hourly rows by host and tool (API, {len(hourly()):,} rows)", median_ms(hourly)),
            ("30-day totals by host and tool from the raw events (no rollup)", median_ms(raw_totals)),
            (
                "30-day tool-call totals by host family and tool",
                median_ms(lambda: tool_call_stats(by_family, by=("client", "tool"))),
            ),
            ("30-day tool-call totals by backend", median_ms(lambda: tool_call_stats(by_family, by=("backend",)))),
            (
                "30-day daily tool-call error rate by host family (chart)",
                median_ms(lambda: tool_call_stats(by_family, by=("bucket", "client"), figures="counts")),
            ),
            (
                "whole 30-day tool-call page (every query and the HTML)",
                median_ms(lambda: tool_calls_page(calls_request)),
            ),
            *(
                (
                    f"whole overview page, {label} and the window before (rollups only; every query and the HTML)",
                    median_ms(lambda r=r: overview_page(r), cpu=True),
                )
                for label, r in overview_requests.items()
            ),
        ]


def median_ms(report: Callable[[], object], *, cpu: bool = False) -> str:
    """Median (min, max) of 7 runs; with `cpu`, also the server's CPU time per run: this process's
    (Django: the queries' building, the figures, the HTML; median) and the PostgreSQL backend's
    serving its connection (from /proc, in clock ticks: the mean of the 7 runs). CPU time holds on a
    shared machine, where the wall time grows with the load average."""
    timings, cpu_times = [], []
    backend_started = _backend_cpu_ms() if cpu else 0.0
    for _ in range(7):
        started, started_cpu = time.perf_counter(), time.process_time()
        report()
        timings.append((time.perf_counter() - started) * 1000)
        cpu_times.append((time.process_time() - started_cpu) * 1000)
    text = f"median **{statistics.median(timings):.0f} ms** (min {min(timings):.0f}, max {max(timings):.0f})"
    if not cpu:
        return text
    database = (_backend_cpu_ms() - backend_started) / 7
    django_cpu = statistics.median(cpu_times)
    return text + (
        f"; server CPU **{django_cpu + database:.0f} ms** ({django_cpu:.0f} ms Django, {database:.0f} ms PostgreSQL)"
    )


def _backend_cpu_ms() -> float:
    """CPU time (user + system) the PostgreSQL backend of this connection has used, in ms."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        (pid,) = cursor.fetchone()
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) * 1000 / os.sysconf("SC_CLK_TCK")


def close_django() -> None:
    if "django.db" in sys.modules:
        from django.db import connections

        connections.close_all()


def print_table(rows: list[tuple[str, str]]) -> None:
    print("| measurement | result |")
    print("| --- | --- |")
    for name, value in rows:
        print(f"| {name} | {value} |")


if __name__ == "__main__":
    main()
