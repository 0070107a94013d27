"""`manage.py unretire_tool NAME --reason TEXT`: undo a retirement, saying why. A name this
release registers is listed and callable again (docs/governance.md)."""

from __future__ import annotations

from argparse import ArgumentParser
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from governance import services
from governance.management.commands._lifecycle import actor, add_actor_option, bound, through_services
from governance.models import RetiredTool


class Command(BaseCommand):
    help = "Un-retire a tool name (with the reason the governance history keeps)."

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("name")
        parser.add_argument("--reason", required=True, help="Why; kept in the governance history.")
        add_actor_option(parser)

    def handle(self, *args: Any, **options: Any) -> None:
        name = options["name"]
        retired = RetiredTool.objects.filter(tool__name=name).first()
        if retired is None:
            raise CommandError(f"{name} is not retired.")
        through_services(
            lambda: services.retired_tool_unretire(
                retired=retired, reason=options["reason"], by=actor(options["by"]), via="unretire_tool"
            )
        )
        self.stdout.write(f"{name} is no longer retired; {bound()}.")
