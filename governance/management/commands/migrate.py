"""`manage.py migrate`, whose pre-flight system checks leave out the tool-surface checks.

Those checks judge data that `migrate` itself repairs (it adds newly registered tool names to
the ledger) or that only the admin can fix once the schema is current, so they must not stop
it. Run `manage.py check --database default` after migrating; docs/governance.md.
"""

from __future__ import annotations

from typing import Any

from django.core.management.commands import migrate

from governance.checks import surface_checks_paused


class Command(migrate.Command):
    def check(self, *args: Any, **kwargs: Any) -> None:
        with surface_checks_paused():
            super().check(*args, **kwargs)
