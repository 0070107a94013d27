"""`manage.py apply_tool_surface`: bring the database to the committed fixture.

The other direction of `export_tool_surface`, for a change made in a pull request (merge ->
deploy -> `migrate` -> `apply_tool_surface`). Idempotent: a second run changes nothing. It adds
and updates rows, refuses (and changes nothing) when the fixture lacks a ledger name the
database has, since ledger rows are never deleted or renamed, and keeps a retirement or contract
change the fixture does not have (an admin edit not yet exported) unless `--prune` is given.
The fixture must first pass the code-and-fixture checks (tools.E001-E017; warnings are shown).
A retire-on date that has come is recorded first, as a replica would on its next request.
"""

from __future__ import annotations

from argparse import ArgumentParser
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from governance import checks, fixtures, services
from governance.fixtures import ApplyReport, LedgerConflict


class Command(BaseCommand):
    help = "Apply governance/fixtures/tool_surface.json to the tool-surface tables (adds and updates; never deletes)."
    requires_system_checks: list[str] = []

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument(
            "--input", type=Path, default=None, help="The fixture to apply (default: the committed one)."
        )
        parser.add_argument(
            "--prune",
            action="store_true",
            help="Also delete retirements and contract changes the fixture does not have.",
        )
        parser.add_argument("--dry-run", action="store_true", help="Report what would change; change nothing.")

    def handle(self, *args: Any, **options: Any) -> None:
        path = options["input"] or fixtures.FIXTURE_PATH
        try:
            surface = fixtures.read_fixture(path)
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise CommandError(f"{path} cannot be read: {type(exc).__name__}: {exc}") from None
        issues = checks.surface_issues(surface, checks.selectors.registered_tools())
        problems = [issue for issue in issues if issue.is_serious()]
        for warning in (issue for issue in issues if not issue.is_serious()):
            self.stderr.write(f"Warning: {warning.obj}: ({warning.id}) {warning.msg}")
        if problems:
            listed = "\n".join(f"  {issue.obj}: ({issue.id}) {issue.msg}" for issue in problems)
            raise CommandError(f"{path} does not pass the tool-surface checks; nothing applied:\n{listed}")
        if not options["dry_run"]:
            for name in services.scheduled_retirements_fire():
                self.stdout.write(f"Retired {name}: its retire-on date came.")
        try:
            report = fixtures.apply_surface(surface, prune=options["prune"], dry_run=options["dry_run"])
        except LedgerConflict as exc:
            raise CommandError(f"Refused (tools.LedgerConflict): {exc}") from None
        self.stdout.write(describe(report, dry_run=options["dry_run"]))


def describe(report: ApplyReport, *, dry_run: bool) -> str:
    lines = []
    for verb, bucket in (("added", report.added), ("updated", report.updated), ("deleted", report.deleted)):
        for section, keys in bucket.items():
            lines.append(f"{'Would have ' + verb if dry_run else verb.capitalize()} ({section}): {', '.join(keys)}")
    for section, keys in report.kept.items():
        lines.append(f"Kept, not in the fixture ({section}): {', '.join(keys)}; export them, or rerun with --prune")
    if not report.changed:
        lines.insert(0, "The tables already tell the fixture's history: nothing to apply.")
    return "\n".join(lines)
