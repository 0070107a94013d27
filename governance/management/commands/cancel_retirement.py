"""`manage.py cancel_retirement NAME`: clear the retire-on date of a deprecated tool or an alias;
it stays deprecated (docs/governance.md)."""

from __future__ import annotations

from argparse import ArgumentParser
from typing import Any

from django.core.management.base import BaseCommand

from governance import services
from governance.management.commands._lifecycle import actor, add_actor_option, bound, through_services


class Command(BaseCommand):
    help = "Cancel the scheduled retirement of a deprecated tool or an alias."

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("name")
        add_actor_option(parser)

    def handle(self, *args: Any, **options: Any) -> None:
        name = options["name"]
        through_services(
            lambda: services.retirement_cancel(name=name, by=actor(options["by"]), via="cancel_retirement")
        )
        self.stdout.write(f"{name} is still deprecated, with no retire-on date; {bound()}.")
