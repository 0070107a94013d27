"""`manage.py mcp_exec <tool> '<json>'`: run one tool through the dispatcher and print the result.

Same validation, errors and logging as MCP calls. Exit status 0 on success, 1 on a tool error,
2 when the JSON arguments cannot be read.
"""

from __future__ import annotations

import json
import sys
from argparse import ArgumentParser
from typing import Any

import anyio
from django.core.management.base import BaseCommand, CommandError

from governance.management.commands._options import DJANGO_OPTIONS, add_transport_options, cli_key, parse_backend
from protocol.config import server_config
from protocol.service import build_dispatcher
from tools.context import CallContext
from tools.tomtom.client import closing_shared_clients
from tools.tomtom.credentials import KeySources


class Command(BaseCommand):
    help = "Run one TomTom MCP tool and print its JSON result."
    requires_system_checks: list[str] = []
    suppressed_base_arguments = set(DJANGO_OPTIONS)

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("tool", help="Tool name, e.g. tomtom-geocode.")
        parser.add_argument("arguments", nargs="?", default="{}", help="The arguments as a JSON object.")
        add_transport_options(parser)

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            arguments = json.loads(options["arguments"])
        except ValueError as exc:
            raise CommandError(f"arguments are not JSON: {exc}", returncode=2) from None
        if not isinstance(arguments, dict):
            raise CommandError("arguments must be a JSON object", returncode=2)
        context = CallContext(
            config=server_config(),
            transport="exec",
            keys=KeySources(cli=cli_key(options)),
            backend=parse_backend(options["backend"]),
            client_name="mcp_exec",
        )
        outcome = anyio.run(closing_shared_clients, build_dispatcher().call(options["tool"], arguments, context))
        self.stdout.write(outcome.text)
        if outcome.is_error:
            sys.exit(1)
