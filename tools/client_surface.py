"""The tool surface each client is offered: widgets or not, and which tools are hidden.

Two inputs decide it. What the client declared (`CallContext.apps_declared`: MCP Apps support
in its capabilities; None when not known) and the operator's rules, edited in the Django admin
(`tools.models.ClientSurface`): for client names matching a pattern, whether widgets are
offered (`declared`, `always`, `never`) and which tools are not listed. The first rule whose
pattern matches the client name applies (lowest `position` first); without one, widgets follow
the declaration, and an unknown declaration keeps them (what every client saw before clients
were told apart).

A client without widgets is listed no app-only or widget-only tool, no `show_ui` and no `ui`
metadata (tools.mcp.server); a hidden tool is not listed but still answers calls, and
governance (retired tools, contract changes) answers before either: hiding is about what a
conversation pays for, not access.

Every replica reads the rules from the database and again, on the first request after the
snapshot is `refresh_seconds` old (GOVERNANCE_REFRESH_SECONDS); that request waits for the new
rules (at most `REFRESH_WAIT_SECONDS`), so a saved rule is in force everywhere within the
refresh time. A read that fails keeps the last rules (none at first) and logs why.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from enum import StrEnum
from fnmatch import fnmatchcase

from tomtom_mcp.logging import log_event

logger = logging.getLogger("tools.client_surface")

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

    from tools.models import ClientSurface

    try:
        return tuple(
            ClientRule(pattern=row.pattern, widgets=WidgetOffer(row.widgets), hidden_tools=frozenset(row.hidden_tools))
            for row in ClientSurface.objects.all()
        )
    finally:
        connections["default"].close()


class ClientSurfaces:
    """The operator's rules on one process, refreshed every `refresh_seconds`."""

    def __init__(
        self,
        rules: Sequence[ClientRule] = (),
        *,
        refresh_seconds: float | None = None,
        load: Loader = read_rules,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """`refresh_seconds` None: the given `rules` for ever (tests, in-process servers)."""
        self._rules = tuple(rules)
        self.refresh_seconds = refresh_seconds
        self._load = load
        self._clock = clock
        self._due_at = 0.0
        self._refresh: asyncio.Task[None] | None = None

    @property
    def rules(self) -> tuple[ClientRule, ...]:
        return self._rules

    def prime(self) -> None:
        """Read the rules now, before serving (on a worker thread: safe inside an event loop)."""
        if self.refresh_seconds is None:
            return
        self._due_at = self._clock() + self.refresh_seconds
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="client-surface") as pool:
            self._apply(pool.submit(self._attempt).result())

    async def shape_for(self, client_name: str, apps_declared: bool | None) -> Shape:
        """The surface for this client, from rules at most `refresh_seconds` old."""
        refresh = self._start_refresh_if_due()
        if refresh is not None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(refresh), REFRESH_WAIT_SECONDS)
        return shape(self._rules, client_name, apps_declared)

    def _start_refresh_if_due(self) -> asyncio.Task[None] | None:
        if self.refresh_seconds is None:
            return None
        loop = asyncio.get_running_loop()
        running = self._refresh is not None and not self._refresh.done() and self._refresh.get_loop() is loop
        if running:
            return self._refresh
        if self._clock() < self._due_at:
            return None
        self._due_at = self._clock() + self.refresh_seconds
        self._refresh = loop.create_task(self._run_refresh())
        return self._refresh

    async def _run_refresh(self) -> None:
        self._apply(await asyncio.to_thread(self._attempt))

    def _attempt(self) -> tuple[ClientRule, ...] | None:
        try:
            return self._load()
        except Exception as exc:
            log_event(
                logger,
                logging.WARNING,
                "Client surface rules unreadable: shaping by the last rules",
                error=f"{type(exc).__name__}: {exc}",
                rules=len(self._rules),
            )
            return None

    def _apply(self, rules: tuple[ClientRule, ...] | None) -> None:
        if rules is not None:
            self._rules = rules


def default_client_surfaces() -> ClientSurfaces:
    """The process's rules, primed from the database (GOVERNANCE_REFRESH_SECONDS is the bound)."""
    from django.conf import settings

    surfaces = ClientSurfaces(refresh_seconds=settings.GOVERNANCE_REFRESH_SECONDS)
    surfaces.prime()
    return surfaces
