"""`manage.py deprecate_tool NAME --replaced-by TOOL ... [--retire-on DATE] [--reason TEXT]`.

Deprecates a live tool, or changes its deprecation (the options given replace what is stored);
`--withdraw --reason TEXT` makes it plainly live again. The same service as the admin's
*Deprecated tools* page (docs/governance.md).
"""

from __future__ import annotations

from argparse import ArgumentParser
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from governance import services
from governance.management.commands._lifecycle import actor, add_actor_option, bound, day, through_services
from governance.models import DeprecatedTool

VIA = "deprecate_tool"


class Command(BaseCommand):
    help = "Deprecate a live tool: still listed and answered, with a notice naming its replacements and retire-on date."

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("name")
        parser.add_argument(
            "--replaced-by",
            action="append",
            default=None,
            metavar="TOOL",
            help="A live tool that replaces it; repeat, in the order callers should try them.",
        )
        parser.add_argument("--retire-on", type=day, help="The UTC day it is retired (YYYY-MM-DD, after today).")
        parser.add_argument("--no-retire-on", action="store_true", help="Clear the retire-on date.")
        parser.add_argument("--reason", help="Why, and what to do instead; the retired answer's message later.")
        parser.add_argument("--withdraw", action="store_true", help="Withdraw the deprecation (needs --reason).")
        add_actor_option(parser)

    def handle(self, *args: Any, **options: Any) -> None:
        name, by = options["name"], actor(options["by"])
        stored = DeprecatedTool.objects.filter(tool__name=name).first()
        if options["withdraw"]:
            if stored is None:
                raise CommandError(f"{name} is not deprecated.")
            through_services(
                lambda: services.deprecation_withdraw(
                    deprecation=stored, reason=options["reason"] or "", by=by, via=VIA
                )
            )
            self.stdout.write(f"{name} is no longer deprecated; {bound()}.")
            return
        retire_on = None if options["no_retire_on"] else options["retire_on"]
        if stored is None:
            row = through_services(
                lambda: services.deprecation_create(
                    name=name,
                    replaced_by=options["replaced_by"] or [],
                    reason=options["reason"] or "",
                    retire_on=retire_on,
                    by=by,
                    via=VIA,
                )
            )
        else:
            replaced_by = stored.replaced_by if options["replaced_by"] is None else options["replaced_by"]
            keep_date = options["retire_on"] is None and not options["no_retire_on"]
            row = through_services(
                lambda: services.deprecation_update(
                    deprecation=stored,
                    replaced_by=replaced_by,
                    reason=stored.reason if options["reason"] is None else options["reason"],
                    retire_on=stored.retire_on if keep_date else retire_on,
                    since=stored.since,
                    by=by,
                    via=VIA,
                )
            )
        when = f", retired on {row.retire_on.isoformat()}" if row.retire_on else ", with no retire-on date"
        use = f"; callers are told to use {' or '.join(row.replaced_by)}" if row.replaced_by else ""
        self.stdout.write(f"{name} is deprecated{when}{use}; {bound()}.")
