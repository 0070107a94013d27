"""`manage.py mcp_stdio`: serve MCP over stdin/stdout for desktop clients."""

from __future__ import annotations

from argparse import ArgumentParser
from typing import Any

import anyio
from django.core.management.base import BaseCommand

from governance.management.commands._options import DJANGO_OPTIONS, add_transport_options, cli_key, parse_backend
from protocol.config import server_config
from protocol.service import build_dispatcher
from protocol.stdio import serve_stdio
from tools.tomtom.client import closing_shared_clients


class Command(BaseCommand):
    help = "Serve the TomTom MCP tools over stdio (stdout carries only JSON-RPC)."
    requires_system_checks: list[str] = []
    suppressed_base_arguments = set(DJANGO_OPTIONS)

    def add_arguments(self, parser: ArgumentParser) -> None:
        add_transport_options(parser)

    def handle(self, *args: Any, **options: Any) -> None:
        backend = parse_backend(options["backend"])
        serve = serve_stdio(build_dispatcher(), server_config(), api_key=cli_key(options), backend=backend)
        anyio.run(closing_shared_clients, serve)
