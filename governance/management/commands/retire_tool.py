"""`manage.py retire_tool NAME [--replaced-by TOOL ...] [--message TEXT] [--kill-switch]`: retire
a ledger name now. A deprecated tool or an alias keeps its replacements and reason unless the
options say otherwise. Retiring a live tool is the kill switch and needs `--kill-switch`, as the
admin asks for a confirmation (docs/governance.md)."""

from __future__ import annotations

from argparse import ArgumentParser
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from governance import selectors, services
from governance.management.commands._lifecycle import actor, add_actor_option, bound, day, through_services
from governance.models import DeprecatedTool, ToolAlias


class Command(BaseCommand):
    help = "Retire a tool name now: never listed, every call answered `retired` naming its replacements."

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("name")
        parser.add_argument(
            "--replaced-by",
            action="append",
            default=None,
            metavar="TOOL",
            help="A live tool that replaces it; repeat, in order.",
        )
        parser.add_argument("--message", help="Added to the answer: what to do instead.")
        parser.add_argument("--since", type=day, help="The day it was retired (default today).")
        parser.add_argument("--release", default="", help="The release that retired it.")
        parser.add_argument(
            "--kill-switch", action="store_true", help="Confirm retiring a tool that is live in this release."
        )
        add_actor_option(parser)

    def handle(self, *args: Any, **options: Any) -> None:
        name = options["name"]
        if selectors.ledger_statuses().get(name) in ("live", "deprecated") and not options["kill_switch"]:
            raise CommandError(
                f"{name} is live in this release: retiring it is the kill switch ({bound()}). "
                "Add --kill-switch to confirm."
            )
        scheduled = DeprecatedTool.objects.filter(tool__name=name).first()
        previous = scheduled.as_deprecation() if scheduled else None
        alias = ToolAlias.objects.filter(tool__name=name).first()
        before = previous or (alias.as_alias() if alias else None)
        replaced_by = options["replaced_by"]
        if replaced_by is None:
            replaced_by = list(before.replaced_by) if before else []
        message = options["message"] if options["message"] is not None else (before.reason if before else "")
        through_services(
            lambda: services.retired_tool_create(
                name=name,
                replaced_by=replaced_by,
                message=message,
                since=options["since"],
                release=options["release"],
                by=actor(options["by"]),
                via="retire_tool",
            )
        )
        use = f"; callers are told to use {' or '.join(replaced_by)}" if replaced_by else ""
        self.stdout.write(f"{name} is retired{use}; {bound()}.")
