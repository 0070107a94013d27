"""Governance at call time: retired names and outdated inputs, answered on every replica.

Each dispatcher holds a `Governance`: an immutable snapshot of the tool-surface tables, read from
the database when the dispatcher is built and again, lazily, on the first request after it is
`refresh_seconds` old. Its hooks:

- `refresh_if_due()` (async): the freshness rule. A request that finds the snapshot stale
  waits for the new one (at most `REFRESH_WAIT_SECONDS`; one refresh runs at a time). `intercept`
  awaits it before every call; the MCP `tools/list` handler awaits it before listing, so a
  listing is never staler than a call.
- `filter_listing` (a listing filter): a retired tool is never listed.
- `intercept` (an interceptor that runs before the dispatcher parses arguments): a call to a
  retired name is answered `retired`, naming the tools that replace it; a call that still uses
  an input as it was before a contract change is answered `invalid_arguments` with what changed
  and what to send `instead` (and, where that is mechanical, the arguments to `send`). Both are
  logged as app-status events.

The bound (docs/adr/0006-tool-surface-governance.md): a change saved in the admin reaches every
replica within `refresh_seconds` plus one request.

Without its tables (no database, tables missing, access refused) a replica answers from the
committed fixture, `tools/fixtures/tool_surface.json`, the history this release ships with; a
replica that had read the tables keeps its last snapshot instead (it is newer). Either way it
logs one warning when the tables become unreadable and one line when they are back: governance
never breaks a call, and is never silently off.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence

from django.db import connections

from core.app_status import OutdatedCall, RetiredToolCalled
from core.errors import ErrorCode, ToolError
from core.events import ERROR_TEXT_LENGTH, clip, log
from core.operations import (
    SurfaceReadableAgain,
    SurfaceUnreadable,
    SurfaceUnreadableFromFixture,
    SurfaceUnreadableFromSnapshot,
)
from tools.context import CallContext
from tools.definition import Tool
from tools.dispatch import Next, ToolCall, ToolOutcome
from tools.governance import fixtures, rules
from tools.governance.surface import ChangeKind, InputChange, Retirement, Surface
from tools.snapshots import LazySnapshot

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
        fallback: Loader = fixtures.read_fixture,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._load = load
        self._fallback = fallback
        self._clock = clock
        self._unreadable = False
        # The surface, and whether it came from the tables (not the committed fixture).
        self._state: LazySnapshot[tuple[Surface, bool]] = LazySnapshot(
            (Surface(), False),
            read=self._attempt,
            refresh_seconds=refresh_seconds,
            wait_seconds=REFRESH_WAIT_SECONDS,
            thread_name="governance",
            clock=clock,
        )

    @property
    def snapshot(self) -> Surface:
        return self._state.value[0]

    def prime(self) -> None:
        """Read the first snapshot now, before serving (on a worker thread, so this is safe
        inside or outside an event loop, and never touches the caller's connection)."""
        self._state.prime()

    async def refresh_if_due(self) -> None:
        """The freshness rule, for calls and listings alike: when the snapshot is older than
        `refresh_seconds`, reread the tables (one read at a time) and wait for the result, at
        most `REFRESH_WAIT_SECONDS`; a slower read is answered from the current snapshot."""
        await self._state.fresh()

    async def readiness(self) -> tuple[bool, str]:
        """Whether this process governs calls by fresh rules: refreshed when due (as a call
        would), then read from the tables within `refresh_seconds` plus the wait. A replica
        answering from the committed fixture, or from a snapshot the tables no longer refresh,
        is not ready (`/readyz`)."""
        await self.refresh_if_due()
        _surface, from_tables = self._state.value
        bound = self._state.refresh_seconds
        read_at = self._state.read_at
        if not from_tables:
            return False, "the tool-surface tables are unreadable: answering from the committed fixture"
        if bound is None or read_at is None:
            return True, "rules read from the tables"
        age = self._clock() - read_at
        if age > bound + REFRESH_WAIT_SECONDS:
            return False, f"rules read {age:.0f} s ago: the tables could not be read again"
        return True, f"rules read from the tables {age:.1f} s ago"

    def filter_listing(self, tools: Sequence[Tool], context: CallContext) -> list[Tool]:
        """Hide retired tools. `Dispatcher.listing` awaits `refresh_if_due()` first (the tools/list
        handler); a caller that did not still starts the refresh, so the next request sees it."""
        self._state.start_if_due()
        retired = self.snapshot.retired_by_name
        return [tool for tool in tools if tool.name not in retired]

    async def intercept(self, call: ToolCall, next_: Next) -> ToolOutcome:
        await self.refresh_if_due()
        snapshot = self.snapshot
        retirement = snapshot.retired_by_name.get(call.name)
        if retirement is not None:
            log(RetiredToolCalled(**call.context.caller(call.name), replaced_by=list(retirement.replaced_by)))
            return ToolOutcome.from_error(retired_error(retirement))
        for change in snapshot.changes_by_tool.get(call.name, ()):
            if rules.is_outdated(change, call.arguments):
                log(OutdatedCall(**call.context.caller(call.name), input=change.input, change=change.kind.value))
                return ToolOutcome.from_error(outdated_error(change, call.arguments[change.input]))
        return await next_(call)

    def _attempt(self) -> tuple[Surface, bool] | None:
        """Read the tables (worker thread): the surface and True; or, when they cannot be read
        and no table snapshot is held, the committed fixture and False; None to keep the
        current snapshot. Logs only when readability changes."""
        try:
            surface = self._load()
        except Exception as exc:
            error = f"{type(exc).__name__}: {exc}"
            current, from_tables = self._state.value
            if from_tables:
                self._warn_unreadable(SurfaceUnreadableFromSnapshot, error, current)
                return None
            try:
                fallback = self._fallback()
            except Exception as fixture_exc:  # a broken checkout: tools.E011 says so at check time
                fallback = Surface()
                error += f"; fixture: {type(fixture_exc).__name__}: {fixture_exc}"
            self._warn_unreadable(SurfaceUnreadableFromFixture, error, fallback)
            return fallback, False
        if self._unreadable:
            self._unreadable = False
            log(SurfaceReadableAgain())
        return surface, True

    def _warn_unreadable(
        self,
        event: type[SurfaceUnreadable],
        error: str,
        answering: Surface,
    ) -> None:
        if self._unreadable:
            return
        self._unreadable = True
        log(event(error=clip(error, ERROR_TEXT_LENGTH), retired=len(answering.retired),
                  contract_changes=len(answering.changes)))  # fmt: skip


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


def outdated_error(change: InputChange, value: object = None) -> ToolError:
    """The answer to a call that still sends `{change.input: value}`: what changed, in words,
    the recorded advice, and the arguments to send instead where the translation is mechanical."""
    since, tool, old, new = change.since.isoformat(), change.tool, change.input, change.current_input
    fields: dict[str, object] = {}
    if change.kind is ChangeKind.REMOVED:
        what = f"removed from {tool} on {since}"
    elif change.kind is ChangeKind.RENAMED:
        what = f"renamed to {new} in {tool} on {since}; send the same value as {new}"
    elif change.kind is ChangeKind.UNIT_CHANGED:
        what = f"replaced by {new} in {tool} on {since}: the value is now in {change.now}, not {change.was}"
        fields |= {"was": change.was, "now": change.now}
    else:
        was, now = rules.describe(change.was), rules.describe(change.now)
        renamed = f"replaced by {new}, " if new != old else ""
        what = f"{renamed}{now} since {since} in {tool}, not {was}"
        fields |= {"was": was, "now": now}
    if new != old:
        fields["new_argument"] = new
    send = rules.translate(change, value)
    text = f"{old}: {what}."
    if change.instead:
        text += f" {change.instead}"
    if send is not None:
        fields["send"] = send
        text += " Send " + ", ".join(f"{name}: {json.dumps(v)}" for name, v in send.items()) + "."
    return ToolError(
        ErrorCode.INVALID_ARGUMENTS,
        text,
        argument=old,
        change=change.kind.value,
        instead=change.instead,
        **fields,
    )


def build_governance() -> Governance:
    """The governance of one dispatcher, primed from the database (settings decide the bound)."""
    from django.conf import settings

    governance = Governance(refresh_seconds=settings.GOVERNANCE_REFRESH_SECONDS)
    governance.prime()
    return governance
