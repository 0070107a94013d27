"""`manage.py export_tool_surface`: write the tool-surface tables back to the committed fixture.

The file is deterministic (sorted rows, fixed key order), so an admin edit shows up as a small
diff to review and commit. `--output` writes elsewhere (e.g. to compare before overwriting).
A retire-on date that has come is recorded first (the retirement every replica already
answers), so the file never holds a deprecation or alias past its date.
"""

from __future__ import annotations

from argparse import ArgumentParser
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand

from governance import fixtures, selectors, services


class Command(BaseCommand):
    help = (
        "Write the tool name ledger, deprecated tools, aliases, retired tools and contract changes to "
        "governance/fixtures/tool_surface.json."
    )
    requires_system_checks: list[str] = []

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("--output", type=Path, default=fixtures.FIXTURE_PATH, help="Where to write the JSON.")

    def handle(self, *args: Any, **options: Any) -> None:
        for name in services.scheduled_retirements_fire():
            self.stdout.write(f"Retired {name}: its retire-on date came.")
        surface = selectors.tool_surface()
        for row in surface.skipped:  # written around the services: never exported (check tools.E120)
            self.stderr.write(f"Left out a row of the {row.table} table ({row.name}): {row.problem}.")
        fixtures.write_fixture(surface, options["output"])
        self.stdout.write(
            f"Wrote {len(surface.ledger)} ledger names, {len(surface.deprecated)} deprecated tools, "
            f"{len(surface.aliases)} aliases, {len(surface.retired)} retired tools and "
            f"{len(surface.changes)} contract changes to {options['output']}."
        )
