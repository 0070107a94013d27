"""Governance at call time: deprecated tools, aliases, retired names and outdated inputs,
answered on every replica.

Each dispatcher holds a `Governance`: an immutable snapshot of the tool-surface tables, read from
the database when the dispatcher is built and again, lazily, on the first request after it is
`refresh_seconds` old, and judged on today's UTC day (a deprecation or alias whose retire-on
date has come is a retirement: `Surface.at`). Its hooks:

- `refresh_if_due()` (async): the freshness rule. A request that finds the snapshot stale
  waits for the new one (at most `REFRESH_WAIT_SECONDS`; one refresh runs at a time). The
  interceptors await it before every call; the MCP `tools/list` handler awaits it before
  listing, so a listing is never staler than a call. A refresh that finds a retire-on date come
  records the retirement (`services.scheduled_retirements_fire`, once, whichever replica is
  first) and logs it; only when the system clock agrees the date came: a rehearsal clock
  (`GOVERNANCE_CLOCK`) set ahead retires the name in this process's view and answers, never in
  the shared tables. A row that does not validate is left out of the snapshot and logged once
  per refresh (`Tool-surface rows skipped: they do not validate`, check tools.E120).
- `filter_listing` (a listing filter): a retired tool or an alias is never listed; a deprecated
  tool is listed with its description starting with the deprecation notice, which names only
  the replacements this caller is listed too.
- `resolve_alias` (an interceptor, before the tenant's terms): a call to an alias becomes a call
  to its target, with the arguments the alias renames under their new names (so the tenant's
  allow-list, the contract changes and the target's own input rules judge the target), and is
  logged as an alias call.
- `intercept` (an interceptor, before the dispatcher parses arguments): a call to a retired name
  is answered `retired`, naming the tools that replace it among those the caller is offered
  (`ToolCall.offered`; none: it has no replacement for this client); a call that still uses
  inputs as they were before a contract change is answered `invalid_arguments`, every outdated
  input at once, each with what changed and what to send `instead` (and, where that is
  mechanical, the arguments to `send`), and in the same answer every other problem the tool's
  input finds in the rest of the call (parsed, never run: one round, not two); a call to a
  deprecated tool goes through and is logged, its notice naming the replacements the caller is
  offered. Each is an app-status event with the client name and tenant (`replaced_by` as
  recorded: what replaced the tool, whoever asks).
- `annotate` (the innermost interceptor): every result of a deprecated tool or an alias carries
  the notice under `notice`, first in the text the model reads, before app data is fitted (so
  a result with a widget still stays within its size).

The bound (docs/adr/0030-tool-lifecycle.md): a change
saved in the admin, or a retire-on date that came, reaches every replica within
`refresh_seconds` plus one request.

Without its tables (no database, tables missing, access refused) a replica answers from the
committed fixture, `governance/fixtures/tool_surface.json`, the history this release ships with; a
replica that had read the tables keeps its last snapshot instead (it is newer). Either way it
logs one warning when the tables become unreadable and one line when they are back: governance
never breaks a call, and is never silently off.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import date

from django.db import connections

from core.app_status import AliasCalled, DeprecatedToolCalled, OutdatedCall, RetiredToolCalled
from core.errors import ErrorCode, ToolError, conflicting
from core.events import ERROR_TEXT_LENGTH, MAX_NAMES, TOOL_NAME_LENGTH, clip, log
from core.operations import (
    SurfaceReadableAgain,
    SurfaceRowsSkipped,
    SurfaceUnreadable,
    SurfaceUnreadableFromFixture,
    SurfaceUnreadableFromSnapshot,
)
from governance import fixtures, rules
from governance.snapshots import LazySnapshot, Rederived
from governance.surface import ChangeKind, Deprecation, InputChange, Retirement, Surface
from tools.context import CallContext
from tools.definition import Tool
from tools.dispatch import Next, ToolCall, ToolOutcome
from tools.registry import Registry

REFRESH_WAIT_SECONDS = 2.0
"""How long a call waits for a slow refresh before it is answered from the last snapshot."""
NOTICE_KEY = "notice"
"""The key of a result that carries the deprecation notice, first in the text the model reads."""

Loader = Callable[[], Surface]
Firer = Callable[[date], list[str]]
"""Records the retirements whose retire-on date has come by a day; returns the names retired."""


def read_tables() -> Surface:
    """The tables as a `Surface`, read on this (worker) thread's own connection, then closed."""
    from governance import selectors

    try:
        return selectors.tool_surface()
    finally:
        connections["default"].close()


def fire_due(day: date) -> list[str]:
    """Record the retirements whose retire-on date has come, on this (worker) thread's own
    connection, then closed."""
    from governance import services

    try:
        return services.scheduled_retirements_fire(day=day)
    finally:
        connections["default"].close()


def _today() -> date:
    from governance.clock import today

    return today()


def _system_today() -> date:
    from governance.clock import system_today

    return system_today()


def _clock_failure() -> str | None:
    """Why the governance clock fails now (asked afresh: a readiness probe may come between
    refreshes); None when it answers."""
    from governance import clock

    clock.now()
    return clock.failure()


@dataclass(frozen=True, eq=False)
class View:
    """What a replica answers from: a history as it stands on `day`, and the deprecated tools
    as listed (their notice first in the description), made once per view."""

    read: Surface
    """The history as read (the tables, or the committed fixture)."""
    day: date
    surface: Surface = field(init=False)
    """`read` on `day`: deprecations and aliases whose retire-on date has come are retirements."""
    hidden: frozenset[str] = field(init=False)
    _listed: dict[tuple[str, tuple[str, ...]], Tool] = field(default_factory=dict)

    def __post_init__(self) -> None:
        surface = self.read.at(self.day)
        object.__setattr__(self, "surface", surface)
        object.__setattr__(self, "hidden", frozenset((*surface.retired_by_name, *surface.aliases_by_name)))

    def listed(self, tool: Tool, offered: Collection[str] | None = None) -> Tool:
        """The tool as listed: a deprecated one with the notice at the start of its description,
        naming the replacements among `offered` (the names this caller is listed; None: all)."""
        deprecation = self.surface.deprecated_by_name.get(tool.name)
        if deprecation is None:
            return tool
        named = rules.listed_replacements(deprecation.replaced_by, offered)
        noticed = self._listed.get((tool.name, named))
        if noticed is None or noticed.input_model is not tool.input_model:
            notice = rules.deprecation_notice(named, deprecation.retire_on)
            noticed = self._listed[tool.name, named] = tool.with_notice(notice)
        return noticed


class Governance:
    def __init__(
        self,
        *,
        refresh_seconds: float,
        load: Loader = read_tables,
        fallback: Loader = fixtures.read_fixture,
        clock: Callable[[], float] = time.monotonic,
        today: Callable[[], date] = _today,
        system_today: Callable[[], date] = _system_today,
        fire: Firer | None = None,
        tools: Mapping[str, Tool] | None = None,
    ) -> None:
        """`today` says the UTC day retire-on dates are judged on (governance.clock);
        `fire` records the retirements a refresh finds due by `system_today` too (None: leave
        them to another process): one only `today` finds due (a rehearsal clock set ahead) is
        applied in this process's view, never written; `tools` finds an alias's target (the
        dispatcher's registry)."""
        self._load = load
        self._fallback = fallback
        self._clock = clock
        self._today = today
        self._system_today = system_today
        self._fire = fire
        self._tools: Mapping[str, Tool] = tools or {}
        self._unreadable = False
        # The view, and whether it came from the tables (not the committed fixture).
        self._state: LazySnapshot[tuple[View, bool]] = LazySnapshot(
            (View(Surface(), date.min), False),
            read=self._attempt,
            refresh_seconds=refresh_seconds,
            wait_seconds=REFRESH_WAIT_SECONDS,
            thread_name="governance",
            clock=clock,
        )

    @property
    def view(self) -> View:
        return self._state.value[0]

    @property
    def snapshot(self) -> Surface:
        """The history this replica answers from, on the day it was last read."""
        return self.view.surface

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
        view, from_tables = self._state.value
        bound = self._state.refresh_seconds
        read_at = self._state.read_at
        if not from_tables:
            return False, "the tool-surface tables are unreadable: answering from the committed fixture"
        if bound is None or read_at is None:
            return True, "rules read from the tables" + self._warnings(view)
        age = self._clock() - read_at
        if age > bound + REFRESH_WAIT_SECONDS:
            return False, f"rules read {age:.0f} s ago: the tables could not be read again"
        return True, f"rules read from the tables {age:.1f} s ago" + self._warnings(view)

    @staticmethod
    def _warnings(view: View) -> str:
        """What readiness says but does not fail on: rows left out (every replica reads the same
        tables, so failing them would take every replica out for one row) and a failing clock
        (the system clock answers instead, the time every replica would be judged on anyway)."""
        said = ""
        if skipped := view.read.skipped:
            names = ", ".join(sorted({row.name or row.table for row in skipped})[:5])
            rows = f"{len(skipped)} row{'s' if len(skipped) != 1 else ''}"
            said += f"; warning: {rows} left out, not valid ({names}; check tools.E120)"
        if (failure := _clock_failure()) is not None:
            said += f"; warning: dates judged by the system clock, {failure}"
        return said

    def filter_listing(self, tools: Sequence[Tool], context: CallContext) -> list[Tool]:
        """Hide retired tools and aliases; list a deprecated tool with its notice. `Dispatcher.listing`
        awaits `refresh_if_due()` first (the tools/list handler); a caller that did not still
        starts the refresh, so the next request sees it."""
        self._state.start_if_due()
        view = self.view
        shown = [tool for tool in tools if tool.name not in view.hidden]
        offered = frozenset(tool.name for tool in shown)
        return [view.listed(tool, offered) for tool in shown]

    async def resolve_alias(self, call: ToolCall, next_: Next) -> ToolOutcome:
        """A call to an alias goes on as a call to its target (see the module docstring)."""
        await self.refresh_if_due()
        alias = self.view.surface.aliases_by_name.get(call.name)
        target = self._tools.get(alias.target) if alias is not None else None
        if alias is None or target is None:  # not an alias; or its target left (tools.E012): unknown
            return await next_(call)
        context = call.context
        log(AliasCalled(**context.caller(call.name), tenant=context.tenant, replaced_by=[alias.target]))
        notice = rules.alias_notice(alias)
        arguments, both = rules.map_arguments(alias, call.arguments)
        if both:
            names = [name for pair in both for name in pair]
            error = conflicting(
                *names,
                message=f"send each once, under the name {alias.target} takes: "
                + ", ".join(f"{new} (not {old})" for old, new in both),
            )
            return with_notice(ToolOutcome.from_error(error), notice)
        forwarded = ToolCall(
            name=alias.target, arguments=arguments, context=context, tool=target, offered=call.offered, notice=notice
        )
        return await next_(forwarded)

    async def intercept(self, call: ToolCall, next_: Next) -> ToolOutcome:
        await self.refresh_if_due()
        surface = self.view.surface
        context = call.context
        retirement = surface.retired_by_name.get(call.name)
        if retirement is not None:
            log(
                RetiredToolCalled(
                    **context.caller(call.name), tenant=context.tenant, replaced_by=list(retirement.replaced_by)
                )
            )
            return ToolOutcome.from_error(retired_error(retirement, call.offered()))
        deprecation = surface.deprecated_by_name.get(call.name)
        if deprecation is not None:
            log(
                DeprecatedToolCalled(
                    **context.caller(call.name), tenant=context.tenant, replaced_by=list(deprecation.replaced_by)
                )
            )
            offered = call.offered() if deprecation.replaced_by else ()
            call.notice = " ".join(filter(None, (call.notice, deprecated_notice(deprecation, offered))))
        changes = outdated_changes(surface.changes_by_tool.get(call.name, ()), call.arguments)
        if changes:
            for change in changes:
                log(
                    OutdatedCall(
                        **context.caller(call.name), tenant=context.tenant, input=change.input, change=change.kind.value
                    )
                )
            others = self._other_problems(call, changes)
            return with_notice(ToolOutcome.from_error(outdated_error(changes, call.arguments, others)), call.notice)
        return await next_(call)

    def _other_problems(self, call: ToolCall, changes: Sequence[InputChange]) -> Problems:
        """What else is wrong with a call that still sends the outdated inputs `changes` name:
        the call's arguments as they would be sent now (`other_problems`), parsed by its tool's
        input, for this caller's backend and widgets, as the dispatcher parses them."""
        tool = call.tool
        backend = call.context.effective_backend
        if tool is None or not tool.serves(backend):
            return Problems()
        offered = [self._tools[name] for name in call.offered() if name in self._tools]
        hints = Registry.hints(offered)

        def parse(arguments: Mapping[str, object]) -> None:
            tool.parse(arguments, hints, backend=backend, widgets=call.context.widgets)

        return other_problems(changes, call.arguments, parse)

    async def annotate(self, call: ToolCall, next_: Next) -> ToolOutcome:
        """Innermost: the notice `intercept` or `resolve_alias` set goes first into the result."""
        outcome = await next_(call)
        return with_notice(outcome, call.notice) if call.notice else outcome

    def _attempt(self) -> tuple[View, bool] | Rederived[tuple[View, bool]]:
        """Read the tables (worker thread) and judge them on today: the view and True; or, when
        they cannot be read, the last view read from them judged again on today (not a fresh
        read: `/readyz` still counts the snapshot's age from the last read), else the committed
        fixture and False. Records retirements whose date came. Logs only when readability
        changes."""
        day = self._today()
        try:
            surface = self._load()
        except Exception as exc:
            error = f"{type(exc).__name__}: {exc}"
            current, from_tables = self._state.value
            if from_tables:
                self._warn_unreadable(SurfaceUnreadableFromSnapshot, error, current.read)
                return Rederived((View(current.read, day), True))
            try:
                fallback = self._fallback()
            except Exception as fixture_exc:  # a broken checkout: tools.E011 says so at check time
                fallback = Surface()
                error += f"; fixture: {type(fixture_exc).__name__}: {fixture_exc}"
            self._warn_unreadable(SurfaceUnreadableFromFixture, error, fallback)
            return View(fallback, day), False
        if self._unreadable:
            self._unreadable = False
            log(SurfaceReadableAgain())
        written = min(day, self._system_today())  # what a rehearsal clock alone finds due stays in memory
        if self._fire is not None and surface.due(written):
            try:
                if self._fire(written):
                    surface = self._load()
            except Exception:  # e.g. a read-only replica: the view retires them anyway, the next refresh retries
                pass
        if surface.skipped:
            self._log_skipped(surface)
        return View(surface, day), True

    @staticmethod
    def _log_skipped(surface: Surface) -> None:
        """One line per refresh that left rows out, naming them and what is wrong with each."""
        skipped = surface.skipped
        problems = "; ".join(f"{row.table} {row.name}: {row.problem}" for row in skipped)
        names = list(dict.fromkeys(clip(row.name or row.table, TOOL_NAME_LENGTH) for row in skipped))
        log(SurfaceRowsSkipped(rows=len(skipped), tools=names[:MAX_NAMES], error=clip(problems, ERROR_TEXT_LENGTH)))

    def _warn_unreadable(
        self,
        event: type[SurfaceUnreadable],
        error: str,
        answering: Surface,
    ) -> None:
        if self._unreadable:
            return
        self._unreadable = True
        log(
            event(
                error=clip(error, ERROR_TEXT_LENGTH),
                retired=len(answering.retired),
                contract_changes=len(answering.changes),
            )
        )


def with_notice(outcome: ToolOutcome, notice: str) -> ToolOutcome:
    """`outcome` with `notice` first in its data (and in the answer a widget is drawn from)."""
    if not notice:
        return outcome
    data = {NOTICE_KEY: notice, **outcome.data}
    answer = outcome.answer
    if answer is not None:
        answer = replace(answer, data={NOTICE_KEY: notice, **answer.data})
    return ToolOutcome(data, is_error=outcome.is_error, meta=outcome.meta, answer=answer, image=outcome.image)


def deprecated_notice(deprecation: Deprecation, offered: Collection[str] | None = None) -> str:
    """The notice every result of a deprecated tool carries, naming the replacements among
    `offered` (None: every one)."""
    named = rules.listed_replacements(deprecation.replaced_by, offered)
    return rules.deprecation_notice(named, deprecation.retire_on, name=deprecation.name)


def outdated_changes(changes: Sequence[InputChange], arguments: Mapping[str, object]) -> list[InputChange]:
    """The contract changes a call with `arguments` still runs into, in the order it sent them."""
    by_input = {change.input: change for change in changes if rules.is_outdated(change, arguments)}
    return [by_input[name] for name in arguments if name in by_input]


def retired_error(retirement: Retirement, offered: Collection[str] | None = None) -> ToolError:
    """The answer to a call to a retired name: the replacements among `offered` (the names the
    caller is listed; None: every one), in the recorded order, in the message and in
    `replaced_by`. When none of them is listed to the caller it has no replacement for this
    client; the recorded message is kept unless it names a replacement the caller is not listed."""
    since = retirement.since.isoformat() + (f" ({retirement.release})" if retirement.release else "")
    named = rules.listed_replacements(retirement.replaced_by, offered)
    if named:
        text = f"{retirement.name} was retired on {since}; use {' or '.join(named)} instead."
    elif retirement.replaced_by:
        text = f"{retirement.name} was retired on {since} and has no replacement for this client."
    else:
        text = f"{retirement.name} was retired on {since} and has no replacement."
    unlisted = set(retirement.replaced_by) - set(named)
    if retirement.message and not rules.names_any(retirement.message, unlisted):
        text += f" {retirement.message}"
    return ToolError(ErrorCode.RETIRED, text, replaced_by=list(named))


@dataclass(frozen=True)
class Problems:
    """What a tool's input finds wrong in a call besides its outdated inputs, as `tools.inputs`
    lists problems (each with its `argument` or `arguments`, its `message` and any data), up to
    its cap; `more` counts the ones left out."""

    listed: tuple[dict[str, object], ...] = ()
    more: int = 0

    def __bool__(self) -> bool:
        return bool(self.listed)

    @property
    def total(self) -> int:
        return len(self.listed) + self.more

    def names(self) -> list[str]:
        """Every argument the problems name, in their order, once."""
        names = [name for problem in self.listed for name in _problem_names(problem)]
        return list(dict.fromkeys(names))


def other_problems(
    changes: Sequence[InputChange], arguments: Mapping[str, object], parse: Callable[[Mapping[str, object]], object]
) -> Problems:
    """The problems of a call that runs into `changes`, besides them: the call as it would be
    sent now (its outdated inputs left out, what to `send` in their place added unless the call
    sent that too) given to `parse` (the tool's input; it raises the `invalid_arguments` or
    `unsupported` error that names every problem). A problem naming an outdated input's new
    name while the call gives nothing to send under it (it is missing, or a rule misses it) is
    what the change's own answer says, and is left out. Nothing runs: a call that is current
    once changed is answered by the tool."""
    outdated = {change.input for change in changes}
    now = {name: value for name, value in arguments.items() if name not in outdated}
    for change in changes:
        for name, value in (rules.translate(change, arguments[change.input]) or {}).items():
            now.setdefault(name, value)
    answered = {change.current_input for change in changes} - set(now)
    try:
        parse(now)
    except ToolError as error:
        problems, more = _listed_problems(error)
    except Exception:  # a validator's own bug: the dispatcher answers it once the call is current
        return Problems()
    else:
        return Problems()
    kept = tuple(p for p in problems if not answered & {_input_of(name) for name in _problem_names(p)})
    return Problems(kept, more)


def _listed_problems(error: ToolError) -> tuple[list[dict[str, object]], int]:
    """The problems of a `tools.inputs` error, one dict each, and how many it left out."""
    data = error.data
    if isinstance(data.get("problems"), list):
        listed = [dict(problem) for problem in data["problems"]]
        return listed, int(data.get("total", len(listed))) - len(listed)
    names: dict[str, object] = {key: data[key] for key in ("argument", "arguments") if key in data}
    rest = {key: value for key, value in data.items() if key not in names}
    return [{**names, "message": error.message, **rest}], 0


def _problem_names(problem: Mapping[str, object]) -> list[str]:
    named = problem.get("arguments")
    if isinstance(named, list):
        return [str(name) for name in named]
    argument = problem.get("argument")
    return [str(argument)] if argument is not None else []


def _input_of(path: str) -> str:
    """The input an argument path starts in: `locations` of `locations[1][0]`."""
    return path.split("[", 1)[0].split(".", 1)[0]


def outdated_error(
    changes: Sequence[InputChange], arguments: Mapping[str, object], others: Problems | None = None
) -> ToolError:
    """The one answer to a call that still sends inputs as they were before `changes`: for one,
    what changed in words, the recorded advice and (where the translation is mechanical) the
    arguments to `send`, as `argument`, `change`, `instead`...; for several, every one of them in
    the message and in `changes`, with `arguments` naming them and `send` merging what to send.
    With `others` (what else is wrong with the call), the same, and the message says them too,
    `arguments` names every offending argument (the outdated ones first) and `problems` lists
    the others as an input error does (with `total`, `returned`, `truncated`)."""
    described = [_outdated(change, arguments[change.input]) for change in changes]
    if len(described) == 1:
        text, fields = described[0]
    else:
        tool = changes[0].tool
        text = f"{len(described)} inputs of {tool} changed: " + " ".join(text for text, _ in described)
        send: dict[str, object] = {}
        for _text, each in described:
            if isinstance(sent := each.get("send"), dict):
                send |= sent
        fields = {
            "arguments": [change.input for change in changes],
            "changes": [each for _text, each in described],
            **({"send": send} if send else {}),
        }
    if not others:
        return ToolError(ErrorCode.INVALID_ARGUMENTS, text, **fields)
    total = others.total
    said = "; ".join(str(problem["message"]) for problem in others.listed)
    more = f"; and {others.more} more" if others.more else ""
    text += f" Also {total} other problem{'s' if total != 1 else ''}: {said}{more}."
    named = [change.input for change in changes]
    fields["arguments"] = list(dict.fromkeys([*named, *others.names()]))
    fields["problems"] = list(others.listed)
    fields |= {"total": total, "returned": len(others.listed), "truncated": bool(others.more)}
    return ToolError(ErrorCode.INVALID_ARGUMENTS, text, **fields)


def _outdated(change: InputChange, value: object) -> tuple[str, dict[str, object]]:
    """One outdated input: the sentence that says what changed, and its fields."""
    since, tool, old, new = change.since.isoformat(), change.tool, change.input, change.current_input
    fields: dict[str, object] = {"argument": old, "change": change.kind.value, "instead": change.instead}
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
    return text, fields


def build_governance(tools: Mapping[str, Tool] | None = None) -> Governance:
    """The governance of one dispatcher, primed from the database (settings decide the bound);
    it records retirements whose date came, and passes alias calls to `tools`."""
    from django.conf import settings

    governance = Governance(refresh_seconds=settings.GOVERNANCE_REFRESH_SECONDS, fire=fire_due, tools=tools)
    governance.prime()
    return governance
