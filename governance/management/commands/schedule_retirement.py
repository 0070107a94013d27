"""`manage.py schedule_retirement NAME DATE`: set or move the retire-on date of a deprecated tool
or an alias. On that UTC day every replica answers it as retired, with no deploy and no one at
the admin, and the first replica records the retirement (docs/governance.md)."""

from __future__ import annotations

from argparse import ArgumentParser
from typing import Any

from django.core.management.base import BaseCommand

from governance import services
from governance.management.commands._lifecycle import actor, add_actor_option, day, through_services


class Command(BaseCommand):
    help = "Set the UTC day a deprecated tool or an alias is retired."

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("name")
        parser.add_argument("retire_on", type=day, metavar="DATE", help="YYYY-MM-DD, after today (UTC).")
        add_actor_option(parser)

    def handle(self, *args: Any, **options: Any) -> None:
        name, retire_on = options["name"], options["retire_on"]
        through_services(
            lambda: services.retirement_schedule(
                name=name, retire_on=retire_on, by=actor(options["by"]), via="schedule_retirement"
            )
        )
        self.stdout.write(f"{name} is retired on every replica from {retire_on.isoformat()} 00:00 UTC.")
