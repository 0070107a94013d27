"""`manage.py tomtom_canary [--backend B] [--json]`: check that TomTom still answers as our tools read.

Calls every tool that reaches TomTom once per backend (tools/canary.py: one small input per
tool, the tool's own request building and decoders) with the server's `TOMTOM_API_KEY`, prints
one row per check, stores the findings for /analytics/metrics (analytics/canary.py: the
`CanaryDrift` and `CanaryNotRun` alerts) and exits:

- 0: every check ok;
- 1: drift found (a shape we cannot read, a path, version or header TomTom refused), whatever
  else happened;
- 2: no drift, but a check could not reach TomTom, or the key is missing or refused.

It lives in the MCP edge, not the analytics app, because it needs the tool catalogue and the
server's configuration, which analytics never imports (pyproject.toml, import-linter). Run it
daily (deploy/tomtom-mcp-canary.timer, docs/deploy.md); each run costs one TomTom request per
check (a few more for the tools that compose several: along-route, optimize, ev-search).
"""

from __future__ import annotations

import json
from argparse import ArgumentParser
from typing import Any

import anyio
from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from analytics.canary import record
from protocol.config import server_config
from tools import canary
from tools.tomtom.backends import Backend
from tools.tomtom.client import closing_shared_clients

COLUMNS = ("tool", "backend", "version", "status", "latency", "drift")


class Command(BaseCommand):
    help = "Call every tool once per backend against TomTom and report any change to what it answers."
    requires_system_checks: list[str] = []

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument(
            "--backend",
            choices=[backend.value for backend in Backend],
            help="Check one backend only (default: both).",
        )
        parser.add_argument("--json", action="store_true", help="Print the checks as JSON, one object per check.")

    def handle(self, *args: Any, **options: Any) -> None:
        key = (settings.TOMTOM_API_KEY or "").strip()
        if not key:
            raise CommandError("No TomTom key: set TOMTOM_API_KEY for the canary to call TomTom with.", returncode=2)
        backends = [Backend(options["backend"])] if options["backend"] else list(Backend)
        checks = anyio.run(closing_shared_clients, canary.run(server_config(), key, backends))
        record(checks, [backend.value for backend in backends])
        if options["json"]:
            self.stdout.write(json.dumps({"checks": [check.as_dict() for check in checks]}, indent=1))
        else:
            self.stdout.write(table(checks))
        code = canary.exit_code(checks)
        if code == canary.EXIT_DRIFT:
            drifted = sorted({check.tool for check in checks if check.status is canary.Status.DRIFT})
            raise CommandError(f"TomTom drifted for {', '.join(drifted)}.", returncode=code)
        if code == canary.EXIT_UNREACHABLE:
            raise CommandError("Some checks learned nothing: TomTom unreachable, or the key refused.", returncode=code)


def table(checks: list[canary.Check]) -> str:
    """The checks as aligned text columns, one line each (the drift column: what went wrong)."""
    rows = [COLUMNS] + [
        (
            check.tool,
            check.backend,
            check.version or "-",
            check.status.value,
            "-" if check.latency_ms is None else f"{check.latency_ms:.0f} ms",
            check.detail or "-",
        )
        for check in checks
    ]
    widths = [max(len(row[i]) for row in rows) for i in range(len(COLUMNS) - 1)]
    return "\n".join(
        "  ".join(cell.ljust(width) for cell, width in zip(row[:-1], widths, strict=True)) + "  " + row[-1]
        for row in rows
    )
