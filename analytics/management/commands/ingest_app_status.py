"""`manage.py ingest_app_status [FILE ...|-]`: store the app-status events of JSON-lines server logs.

Files may be plain or gzip (recognised by their first bytes); `-`, or no FILE, reads stdin.
Running it again on the same lines adds nothing. One summary line per input goes to stdout,
and each malformed line to stderr as `NAME:LINE: reason`. Exit status 0 when every input was
read (malformed lines included), 1 when a file cannot be opened.
"""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from analytics.services import BATCH_SIZE, IngestReport, events_ingest, log_lines, log_open


class Command(BaseCommand):
    help = "Ingest app-status events from JSON-lines server logs (plain or gzip; '-' for stdin)."

    def add_arguments(self, parser):
        parser.add_argument("files", nargs="*", default=["-"], metavar="FILE", help="Log files; '-' is stdin.")
        parser.add_argument(
            "--batch-size", type=int, default=BATCH_SIZE, help=f"Events per transaction (default {BATCH_SIZE})."
        )

    def handle(self, *args, **options):
        for path in options["files"]:
            name = "stdin" if path == "-" else path
            try:
                with log_open(path) as stream:
                    report = events_ingest(log_lines(stream), batch_size=options["batch_size"])
            except OSError as error:  # reading errors are reported per line; this is opening
                raise CommandError(f"{name}: cannot open: {error.strerror or error}") from None
            self._print(name, report)

    def _print(self, name: str, report: IngestReport) -> None:
        self.stdout.write(
            f"{name}: {report.lines:,} lines: {report.events:,} app-status events ({report.new:,} new, "
            f"{report.duplicates:,} already stored, {report.unknown:,} of unknown kind), "
            f"{report.skipped:,} other lines skipped, {report.malformed:,} malformed"
        )
        for number, reason in report.malformed_lines:
            self.stderr.write(f"{name}:{number}: {reason}")
        if unlisted := report.malformed - len(report.malformed_lines):
            self.stderr.write(f"{name}: {unlisted:,} more malformed lines not listed")
