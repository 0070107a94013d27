"""`manage.py alias_tool NAME TARGET [--argument OLD=NEW ...] [--retire-on DATE] [--reason TEXT]`.

Makes a ledger name an alias: its calls reach TARGET, a live tool, with the arguments renamed
(`--argument old=` leaves one out), and answer as TARGET does with a notice. Run again to change
it; `--remove --reason TEXT` ends it. The same service as the admin's *Aliases* page.
"""

from __future__ import annotations

from argparse import ArgumentParser
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from governance import selectors, services
from governance.management.commands._lifecycle import actor, add_actor_option, bound, day, through_services
from governance.models import ToolAlias

VIA = "alias_tool"


def mapping(pairs: list[str]) -> dict[str, str | None]:
    arguments: dict[str, str | None] = {}
    for pair in pairs:
        old, equals, new = pair.partition("=")
        if not equals or not old.strip():
            raise CommandError(f"--argument {pair!r}: write OLD=NEW (or OLD= to leave the argument out).")
        arguments[old.strip()] = new.strip() or None
    return arguments


class Command(BaseCommand):
    help = "Make an old tool name an alias: its calls reach another tool, with arguments renamed, and a notice."

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("name")
        parser.add_argument("target", nargs="?", help="The live tool its calls reach.")
        parser.add_argument(
            "--argument",
            action="append",
            default=[],
            metavar="OLD=NEW",
            help="An argument the old name took under another name; repeat.",
        )
        parser.add_argument("--retire-on", type=day, help="The UTC day the old name is retired (after today).")
        parser.add_argument("--reason", help="Why; the retired answer's message later.")
        parser.add_argument("--remove", action="store_true", help="End the alias (needs --reason).")
        parser.add_argument(
            "--redirect",
            action="store_true",
            help="Confirm making a name that is live in this release an alias: its own code stops answering.",
        )
        add_actor_option(parser)

    def handle(self, *args: Any, **options: Any) -> None:
        name, by = options["name"], actor(options["by"])
        stored = ToolAlias.objects.filter(tool__name=name).first()
        if options["remove"]:
            if stored is None:
                raise CommandError(f"{name} is not an alias.")
            reason = options["reason"] or ""
            through_services(lambda: services.alias_remove(alias=stored, reason=reason, by=by, via=VIA))
            self.stdout.write(f"{name} is no longer an alias; {bound()}.")
            return
        if stored is None:
            if not options["target"]:
                raise CommandError("Name the TARGET tool the alias calls.")
            if selectors.ledger_statuses().get(name) in ("live", "deprecated") and not options["redirect"]:
                raise CommandError(
                    f"{name} is live in this release: its calls would reach {options['target']} instead of its own "
                    f"code ({bound()}). Add --redirect to confirm."
                )
            row = through_services(
                lambda: services.alias_create(
                    name=name,
                    target=options["target"],
                    arguments=mapping(options["argument"]),
                    reason=options["reason"] or "",
                    retire_on=options["retire_on"],
                    by=by,
                    via=VIA,
                )
            )
        else:
            row = through_services(
                lambda: services.alias_update(
                    alias=stored,
                    target=options["target"] or stored.target_id,
                    arguments=mapping(options["argument"]) if options["argument"] else stored.arguments,
                    reason=stored.reason if options["reason"] is None else options["reason"],
                    retire_on=options["retire_on"] or stored.retire_on,
                    since=stored.since,
                    by=by,
                    via=VIA,
                )
            )
        when = f", until {row.retire_on.isoformat()}" if row.retire_on else ""
        self.stdout.write(f"{name} is an alias of {row.target_id}{when}; {bound()}.")
