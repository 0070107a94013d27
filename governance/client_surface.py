"""The tool surface each client is offered: widgets or not, and which tools are hidden.

Two inputs decide it. What the client declared (`CallContext.apps_declared`: MCP Apps support
in its capabilities; None when not known) and the operator's rules, edited in the Django admin
(`governance.models.ClientSurface`): for client names matching a pattern, whether widgets are
offered (`declared`, `always`, `never`) and which tools are not listed. The first rule whose
pattern matches the client name applies (lowest `position` first); without one, widgets follow
the declaration, and an unknown declaration keeps them (what every client saw before clients
were told apart).

A client without widgets is listed no app-only or widget-only tool, no `show_ui` and no `ui`
metadata (protocol.handlers.tools); a hidden tool is not listed but still answers calls, and
governance (retired tools, contract changes) answers before either: hiding is about what a
conversation pays for, not access.

Every replica reads the rules from the database and again, on the first request after the
snapshot is `refresh_seconds` old (GOVERNANCE_REFRESH_SECONDS); that request waits for the new
rules (at most `REFRESH_WAIT_SECONDS`), so a saved rule is in force everywhere within the
refresh time. A read that fails keeps the last rules (none at first) and logs why.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from fnmatch import fnmatchcase

from core.events import ERROR_TEXT_LENGTH, clip, log
from core.operations import ClientSurfaceRulesUnreadable
from governance.snapshots import LazySnapshot

REFRESH_WAIT_SECONDS = 2.0
"""How long a request waits for a slow read of the rules before it is shaped by the last ones."""


class WidgetOffer(StrEnum):
    DECLARED = "declared"
    """Widgets when the client declares MCP Apps support (or its declaration is not known)."""
    ALWAYS = "always"
    """Widgets whatever the client declares (a host that renders MCP Apps without saying so)."""
    NEVER = "never"
    """No widgets, whatever the client declares (a text-only agent fleet)."""


@dataclass(frozen=True, slots=True)
class ClientRule:
    """One operator rule: for client names matching `pattern` (shell-style, case-insensitive:
    `*` any characters, `?` one), the widget offer and the tools not listed."""

    pattern: str
    widgets: WidgetOffer = WidgetOffer.DECLARED
    hidden_tools: frozenset[str] = frozenset()

    def matches(self, client_name: str) -> bool:
        return fnmatchcase(client_name.casefold(), self.pattern.casefold())


@dataclass(frozen=True, slots=True)
class Shape:
    """The surface one request is offered."""

    widgets: bool
    hidden_tools: frozenset[str] = frozenset()


def shape(rules: Sequence[ClientRule], client_name: str, apps_declared: bool | None) -> Shape:
    """The surface for `client_name`: the first matching rule, else what the client declared."""
    declared = apps_declared is not False
    rule = next((r for r in rules if r.matches(client_name)), None)
    if rule is None:
        return Shape(widgets=declared)
    widgets = {WidgetOffer.ALWAYS: True, WidgetOffer.NEVER: False}.get(rule.widgets, declared)
    return Shape(widgets=widgets, hidden_tools=rule.hidden_tools)


Loader = Callable[[], tuple[ClientRule, ...]]


def read_rules() -> tuple[ClientRule, ...]:
    """The rules in the order they are tried, read on this (worker) thread's own connection."""
    from django.db import connections

    from governance.models import ClientSurface

    try:
        return tuple(
            ClientRule(pattern=row.pattern, widgets=WidgetOffer(row.widgets), hidden_tools=frozenset(row.hidden_tools))
            for row in ClientSurface.objects.all()
        )
    finally:
        connections["default"].close()


class ClientSurfaces:
    """The operator's rules on one process, refreshed every `refresh_seconds` (governance/snapshots.py)."""

    def __init__(
        self,
        rules: Sequence[ClientRule] = (),
        *,
        refresh_seconds: float | None = None,
        load: Loader = read_rules,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """`refresh_seconds` None: the given `rules` for ever (tests, in-process servers)."""
        self._load = load
        self._rules = LazySnapshot(
            tuple(rules),
            read=self._attempt,
            refresh_seconds=refresh_seconds,
            wait_seconds=REFRESH_WAIT_SECONDS,
            thread_name="client-surface",
            clock=clock,
        )

    @property
    def rules(self) -> tuple[ClientRule, ...]:
        return self._rules.value

    def prime(self) -> None:
        """Read the rules now, before serving (on a worker thread: safe inside an event loop)."""
        self._rules.prime()

    async def shape_for(self, client_name: str, apps_declared: bool | None) -> Shape:
        """The surface for this client, from rules at most `refresh_seconds` old."""
        return shape(await self._rules.fresh(), client_name, apps_declared)

    def _attempt(self) -> tuple[ClientRule, ...] | None:
        try:
            return self._load()
        except Exception as exc:
            error = clip(f"{type(exc).__name__}: {exc}", ERROR_TEXT_LENGTH)
            log(ClientSurfaceRulesUnreadable(error=error, rules=len(self._rules.value)))
            return None


def default_client_surfaces() -> ClientSurfaces:
    """The process's rules, primed from the database (GOVERNANCE_REFRESH_SECONDS is the bound)."""
    from django.conf import settings

    surfaces = ClientSurfaces(refresh_seconds=settings.GOVERNANCE_REFRESH_SECONDS)
    surfaces.prime()
    return surfaces
