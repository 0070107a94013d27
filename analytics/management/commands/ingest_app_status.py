"""`manage.py ingest_app_status [FILE ...|-]`: store the app-status, tool-call and exchange events of
JSON-lines server logs.

Files may be plain or gzip (recognised by their first bytes); `-`, or no FILE, reads stdin.
`--follow FILE` reads a log still being written, and each line appended to it, across rotations,
until the command is stopped (SIGINT or SIGTERM), then prints its summary like any input.
Running it again on the same lines adds nothing. One summary line per input goes to stdout,
and each malformed line to stderr as `NAME:LINE: reason`. While an input is read, a progress
line goes to stderr every few seconds (lines so far, events per second, malformed so far),
TTY or not; `--quiet` leaves it out. On PostgreSQL `--workers` processes parse and store the
lines (the events and counts are the same as with `--workers 0`). Exit status 0 when every
input was read (malformed lines included), 1 when a file cannot be opened, 2 when an option is
out of its range (`--batch-size` 1 to 1,000,000, `--workers` 0 to 64, `--poll` 0.01 to 3,600 s).
"""

from __future__ import annotations

import argparse
import signal
import threading
import time
from collections.abc import Callable, Iterable
from types import FrameType

from django.core.management.base import BaseCommand, CommandError

from analytics.ingest.batches import BATCH_BYTES, BATCH_SIZE, IngestReport
from analytics.ingest.pipeline import ingest
from analytics.ingest.sources import Idle, follow, log_lines, log_open

PROGRESS_EVERY = 5.0
"""Seconds between progress lines."""
WORKERS = 2
"""Processes parsing and storing on PostgreSQL: on two cores, two of them beside PostgreSQL's
own work measured faster than one (docs/adr/0027-ingestion.md)."""
POLL = 1.0
"""Seconds between looks at a followed log that has caught up."""
MAX_BATCH_SIZE = 1_000_000
MAX_WORKERS = 64


def seconds(low: float, high: float) -> Callable[[str], float]:
    """An argparse type: a number of seconds from `low` to `high`, else the option's error names both."""

    def parse(text: str) -> float:
        try:
            number = float(text)
        except ValueError:
            number = None
        if number is None or not low <= number <= high:
            raise argparse.ArgumentTypeError(f"must be a number of seconds from {low:g} to {high:,g}, not {text!r}")
        return number

    return parse


def whole_number(low: int, high: int) -> Callable[[str], int]:
    """An argparse type: a whole number from `low` to `high`, else the option's error names both."""

    def parse(text: str) -> int:
        try:
            number = int(text)
        except ValueError:
            number = None
        if number is None or not low <= number <= high:
            raise argparse.ArgumentTypeError(f"must be a whole number from {low:,} to {high:,}, not {text!r}")
        return number

    return parse


class Command(BaseCommand):
    help = "Ingest app-status and tool-call events from JSON-lines server logs (plain or gzip; '-' for stdin)."

    def add_arguments(self, parser):
        parser.add_argument("files", nargs="*", default=["-"], metavar="FILE", help="Log files; '-' is stdin.")
        parser.add_argument(
            "--batch-size",
            type=whole_number(1, MAX_BATCH_SIZE),
            default=BATCH_SIZE,
            help=f"Events per transaction (default {BATCH_SIZE:,}; fewer once their lines reach "
            f"{BATCH_BYTES // 2**20} MiB).",
        )
        parser.add_argument("--quiet", action="store_true", help="No progress lines on stderr.")
        parser.add_argument(
            "--follow",
            action="store_true",
            help="Read one plain log still being written, then each line appended to it (across rotations), "
            "until stopped with SIGINT or SIGTERM; in this process, a batch at most every --poll seconds.",
        )
        parser.add_argument(
            "--poll",
            type=seconds(0.01, 3600),
            default=POLL,
            help=f"With --follow: seconds between looks at a log that has caught up (default {POLL:g}).",
        )
        parser.add_argument(
            "--workers",
            type=whole_number(0, MAX_WORKERS),
            default=WORKERS,
            help=f"Processes parsing and storing the lines, on PostgreSQL (default {WORKERS}; 0: this process).",
        )

    def handle(self, *args, **options):
        if options["follow"]:
            self._follow(options)
            return
        for path in options["files"]:
            name = "stdin" if path == "-" else path
            try:
                with log_open(path) as stream:
                    report = self._ingest(log_lines(stream), name, options, options["workers"])
            except OSError as error:  # reading errors are reported per line; this is opening
                raise CommandError(f"{name}: cannot open: {error.strerror or error}") from None
            self._print(name, report)

    def _follow(self, options: dict) -> None:
        """One growing log until SIGINT or SIGTERM; the summary then, as for a file."""
        if len(options["files"]) != 1 or options["files"][0] == "-":
            raise CommandError("--follow takes exactly one log file (not '-')")
        path, stop = options["files"][0], threading.Event()

        def stopped(number: int, frame: FrameType | None) -> None:
            stop.set()

        previous = {number: signal.signal(number, stopped) for number in (signal.SIGINT, signal.SIGTERM)}
        if not options["quiet"]:
            self.stderr.write(f"{path}: following the log; SIGINT or SIGTERM stops it")
        try:
            report = self._ingest(follow(path, poll=options["poll"], stop=stop), path, options, workers=0)
        finally:
            for number, handler in previous.items():
                signal.signal(number, handler)
        self._print(path, report)

    def _ingest(self, lines: Iterable[bytes | Idle], name: str, options: dict, workers: int) -> IngestReport:
        started, shown = time.monotonic(), -1

        def progress(report: IngestReport) -> None:
            nonlocal shown
            if report.lines == shown:  # a followed log with nothing new: say nothing
                return
            shown = report.lines
            rate = (report.events + report.tool_calls) / max(time.monotonic() - started, 1e-9)
            self.stderr.write(
                f"{name}: {report.lines:,} lines so far, {rate:,.0f} events/s, {report.malformed:,} malformed"
            )

        return ingest(
            lines,
            batch_size=options["batch_size"],
            progress=None if options["quiet"] else progress,
            progress_every=PROGRESS_EVERY,
            workers=workers,
        )

    def _print(self, name: str, report: IngestReport) -> None:
        self.stdout.write(
            f"{name}: {report.lines:,} lines: {report.events:,} app-status events ({report.new:,} new, "
            f"{report.duplicates:,} already stored, {report.unknown:,} of unknown kind), "
            f"{report.tool_calls:,} tool calls ({report.tool_calls_new:,} new, {report.tool_call_duplicates:,} "
            f"already stored, {report.unknown_fields:,} with unknown fields), "
            + (
                f"{report.exchange:,} exchange lines ({report.exchange_new:,} new, "
                f"{report.exchange_duplicates:,} already stored), "
                if report.exchange
                else ""
            )
            + f"{report.skipped:,} other lines skipped, {report.malformed:,} malformed"
            + (
                f", {expired:,} events before the retention horizon not stored"
                if (expired := report.expired + report.tool_calls_expired + report.exchange_expired)
                else ""
            )
        )
        for number, reason in report.malformed_lines:
            self.stderr.write(f"{name}:{number}: {reason}")
        if unlisted := report.malformed - len(report.malformed_lines):
            self.stderr.write(f"{name}: {unlisted:,} more malformed lines not listed")
