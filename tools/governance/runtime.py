"""Governance at call time: retired names and outdated inputs, answered on every replica.

Each dispatcher holds a `Governance`: an immutable snapshot of the tool-surface tables, read from
the database when the dispatcher is built and again, lazily, on the first request after it is
`refresh_seconds` old. Its two hooks plug into the dispatcher:

- `filter_listing` (a listing filter): a retired tool is never listed.
- `intercept` (an interceptor that runs before the dispatcher parses arguments): a call to a
  retired name is answered `retired`, naming the tools that replace it; a call that still sends
  a removed input, or a string where the input is now a list, is answered `invalid_arguments`
  with what changed and what to send `instead`. Both are logged as app-status events.

The bound (docs/adr/0006-tool-surface-governance.md): a change saved in the admin reaches every
replica within `refresh_seconds` plus one request. A call that finds the snapshot stale waits
for the new one (at most `REFRESH_WAIT_SECONDS`); a listing cannot wait, so it starts the
refresh and the next request sees it. One refresh runs at a time. A refresh that fails (no
database, tables missing, access refused) keeps the last snapshot, empty if there was none, and
logs why: governance never breaks a call.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor

from django.db import connections

from tomtom_mcp.logging import log_event
from tools.app_status import AppStatus, emit
from tools.context import CallContext
from tools.definition import Tool
from tools.dispatch import Next, ToolCall, ToolOutcome
from tools.errors import ErrorCode, ToolError
from tools.governance.surface import ChangeKind, InputChange, Retirement, Surface

logger = logging.getLogger("tools.governance")

REFRESH_WAIT_SECONDS = 2.0
"""How long a call waits for a slow refresh before it is answered from the last snapshot."""

Loader = Callable[[], Surface]


def read_tables() -> Surface:
    """The tables as a `Surface`, read on this (worker) thread's own connection, then closed."""
    from tools.governance import selectors

    try:
        return selectors.tool_surface()
    finally:
        connections["default"].close()


class Governance:
    def __init__(
        self,
        *,
        refresh_seconds: float,
        load: Loader = read_tables,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.refresh_seconds = refresh_seconds
        self._load = load
        self._clock = clock
        self._snapshot = Surface()
        self._due_at = 0.0
        self._refresh: asyncio.Task[None] | None = None

    @property
    def snapshot(self) -> Surface:
        return self._snapshot

    def prime(self) -> None:
        """Read the first snapshot now, before serving (on a worker thread, so this is safe
        inside or outside an event loop, and never touches the caller's connection)."""
        self._due_at = self._clock() + self.refresh_seconds
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="governance") as pool:
            self._apply(pool.submit(self._attempt).result())

    def filter_listing(self, tools: Sequence[Tool], context: CallContext) -> list[Tool]:
        self._start_refresh_if_due()
        retired = self._snapshot.retired_by_name
        return [tool for tool in tools if tool.name not in retired]

    async def intercept(self, call: ToolCall, next_: Next) -> ToolOutcome:
        refresh = self._start_refresh_if_due()
        if refresh is not None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(refresh), REFRESH_WAIT_SECONDS)
        snapshot = self._snapshot
        retirement = snapshot.retired_by_name.get(call.name)
        if retirement is not None:
            _log(AppStatus.RETIRED_TOOL, call, replaced_by=list(retirement.replaced_by))
            return ToolOutcome.from_error(retired_error(retirement))
        for change in snapshot.changes_by_tool.get(call.name, ()):
            if _still_uses(change, call.arguments):
                _log(AppStatus.OUTDATED_CALL, call, input=change.input, change=change.kind.value)
                return ToolOutcome.from_error(outdated_error(change))
        return await next_(call)

    def _start_refresh_if_due(self) -> asyncio.Task[None] | None:
        """Start a refresh when the snapshot is stale and none is running; return it."""
        if self._clock() < self._due_at:
            return None
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # a synchronous caller: the next request in a loop refreshes
            return None
        if self._refresh is not None and not self._refresh.done() and self._refresh.get_loop() is loop:
            return None
        self._due_at = self._clock() + self.refresh_seconds
        self._refresh = loop.create_task(self._run_refresh())
        return self._refresh

    async def _run_refresh(self) -> None:
        self._apply(await asyncio.to_thread(self._attempt))

    def _attempt(self) -> Surface | None:
        try:
            return self._load()
        except Exception as exc:
            log_event(
                logger,
                logging.WARNING,
                "Tool-surface tables unreadable: answering from the last snapshot",
                error=f"{type(exc).__name__}: {exc}",
                retired=len(self._snapshot.retired),
                contract_changes=len(self._snapshot.changes),
            )
            return None

    def _apply(self, surface: Surface | None) -> None:
        if surface is not None:
            self._snapshot = surface


def retired_error(retirement: Retirement) -> ToolError:
    since = retirement.since.isoformat() + (f" ({retirement.release})" if retirement.release else "")
    if retirement.replaced_by:
        use = " or ".join(retirement.replaced_by)
        text = f"{retirement.name} was retired on {since}; use {use} instead."
    else:
        text = f"{retirement.name} was retired on {since} and has no replacement."
    if retirement.message:
        text += f" {retirement.message}"
    return ToolError(ErrorCode.RETIRED, text, replaced_by=list(retirement.replaced_by))


def outdated_error(change: InputChange) -> ToolError:
    since = change.since.isoformat()
    if change.kind is ChangeKind.REMOVED:
        what = f"removed from {change.tool} on {since}"
    else:
        what = f"a list since {since}, not a string"
    return ToolError(
        ErrorCode.INVALID_ARGUMENTS,
        f"{change.input}: {what}. {change.instead}",
        argument=change.input,
        change=change.kind.value,
        instead=change.instead,
    )


def _still_uses(change: InputChange, arguments: dict[str, object]) -> bool:
    if change.input not in arguments:
        return False
    return change.kind is ChangeKind.REMOVED or isinstance(arguments[change.input], str)


def _log(status: AppStatus, call: ToolCall, **fields: object) -> None:
    context = call.context
    emit(
        status,
        tool=call.name,
        client=context.client_name,
        user_agent=context.user_agent,
        request_id=context.request_id,
        **fields,
    )


def build_governance() -> Governance:
    """The governance of one dispatcher, primed from the database (settings decide the bound)."""
    from django.conf import settings

    governance = Governance(refresh_seconds=settings.GOVERNANCE_REFRESH_SECONDS)
    governance.prime()
    return governance
