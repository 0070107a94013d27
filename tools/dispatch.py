"""The dispatcher: one way to call a tool, whatever the transport.

    interceptors (outermost first) -> find the tool -> its backend -> parse its input -> tool.run(input, context)

What a caller is offered (`list_tools`) is a pure function of its call context: the tools
that serve its backend and, without widgets, only those offered without them, less the tools
its client rule hides, then the listing filters (governance, a tenant's allow-list). Errors
name only what was offered: an unknown tool's answer lists the offered tools, an unknown
argument's the inputs the caller was listed (its backend's, without `show_ui` when it has no
widgets). A call to a tool its backend cannot serve is `unsupported`, naming what to do instead.

An interceptor is `async (call, next) -> ToolOutcome`; it can observe, reject or change a call
(the call log, tool-surface governance and the protocol layer's app-data delivery plug in
here). Errors come back as a `ToolOutcome` with `is_error` set and the closed-set JSON shape;
nothing raises out of `call`. The dispatcher knows no tool by name and no input by name: what
a tool's input means is the tool's own declaration (tools.inputs).
"""

from __future__ import annotations

import difflib
import time
import traceback
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import orjson
from opentelemetry.trace import SpanKind, StatusCode

from core.calls import ARGUMENT_PATH_LENGTH, MAX_ARGUMENT_PATHS, ToolCallFailed
from core.calls import ToolCall as ToolCallEvent
from core.errors import ErrorCode, ToolError
from core.events import ERROR_TEXT_LENGTH, MAX_NAMES, TOOL_NAME_LENGTH, TRACEBACK_LENGTH, clip, log
from tools import tracing
from tools.context import CallContext
from tools.definition import Answer, Image, Tool
from tools.registry import Registry


def dumps(data: Any) -> str:
    """The one JSON encoding of every result text: compact, UTF-8 (orjson: a `full` route is
    hundreds of kilobytes, and the standard library takes ten times longer to write it)."""
    return orjson.dumps(data).decode()


@dataclass(slots=True)
class ToolCall:
    name: str
    arguments: dict[str, Any]
    context: CallContext
    tool: Tool | None = None
    offered: Callable[[], list[str]] = list
    """The names of the tools this caller is offered (for an answer that lists them)."""
    notice: str = ""
    """What the server tells the caller besides the answer (a deprecation): governance sets it,
    and every result of the call carries it under `notice`, in the text the model reads."""
    delivered: bool = False
    """Whether the call's result was logged as delivered to a widget (`App data`): the protocol
    layer's app-data interceptor sets it, so a result refused afterwards is not delivered twice."""


@dataclass(slots=True)
class ToolOutcome:
    """How a call ended: the data the caller reads (or the error), and the result's `_meta`.

    `answer` is what a tool drawn by a widget answered, until the protocol layer delivers it
    (its interceptor sets `data`, `meta` and the text); `data` is then the answer's data.
    """

    data: dict[str, Any]
    is_error: bool = False
    meta: dict[str, Any] | None = None
    answer: Answer | None = None
    image: Image | None = None
    """A picture sent beside the text (`Answer.image`), kept by every interceptor."""
    _text: str | None = field(default=None, repr=False)

    @property
    def code(self) -> str:
        return self.data["error"]["code"] if self.is_error else "ok"

    @property
    def text(self) -> str:
        """The result text the caller receives, encoded once and kept."""
        if self._text is None:
            self._text = dumps(self.data)
        return self._text

    @property
    def size(self) -> int:
        """The result text's length in UTF-8 bytes, without encoding it again when it is ASCII
        (`str.isascii` reads a flag the string already carries; orjson writes non-ASCII as is)."""
        text = self.text
        return len(text) if text.isascii() else len(text.encode())

    @classmethod
    def from_error(cls, error: ToolError) -> ToolOutcome:
        return cls(error.as_dict(), is_error=True)


Next = Callable[[ToolCall], Awaitable[ToolOutcome]]
Interceptor = Callable[[ToolCall, Next], Awaitable[ToolOutcome]]
ListingFilter = Callable[[Sequence[Tool], CallContext], Sequence[Tool]]
Refresher = Callable[[], Awaitable[None]]
"""Awaited before a listing, so a listing is never staler than a call (governance's refresh)."""
Probe = Callable[[], Awaitable[tuple[bool, str]]]
"""Whether a part of the dispatcher is ready to serve, and why (governance's rules; `/readyz`)."""


class Dispatcher:
    def __init__(
        self,
        registry: Registry,
        *,
        interceptors: Sequence[Interceptor] = (),
        listing_filters: Sequence[ListingFilter] = (),
        refreshers: Sequence[Refresher] = (),
        probes: dict[str, Probe] | None = None,
    ) -> None:
        self.registry = registry
        self.interceptors = tuple(interceptors)
        self.listing_filters = tuple(listing_filters)
        self.refreshers = tuple(refreshers)
        self.probes = dict(probes or {})
        """Named readiness checks of what the dispatcher depends on (`/readyz` reports each)."""
        chain: Next = self._invoke
        for interceptor in reversed(self.interceptors):
            chain = _bind(interceptor, chain)
        self._chain = chain

    def get(self, name: str) -> Tool | None:
        return self.registry.get(name)

    async def listing(self, context: CallContext) -> list[Tool]:
        """The tools this caller is offered now: refreshed first, then filtered (`tools/list`)."""
        for refresh in self.refreshers:
            await refresh()
        return self.list_tools(context)

    def list_tools(self, context: CallContext) -> list[Tool]:
        """The tools this caller is offered by the filters as they stand (no refresh)."""
        backend, widgets, hidden = context.effective_backend, context.widgets, context.hidden_tools
        tools: Sequence[Tool] = [t for t in self.registry if t.offered_to(backend, widgets) and t.name not in hidden]
        for listing_filter in self.listing_filters:
            tools = listing_filter(tools, context)
        return list(tools)

    def offered_names(self, context: CallContext) -> list[str]:
        return [tool.name for tool in self.list_tools(context)]

    async def call(self, name: str, arguments: dict[str, Any] | None, context: CallContext) -> ToolOutcome:
        call = ToolCall(
            name=name,
            arguments=dict(arguments or {}),
            context=context,
            tool=self.registry.get(name),
            offered=lambda: self.offered_names(context),
        )
        try:
            return await self._chain(call)
        except ToolError as error:
            return ToolOutcome.from_error(error)
        except Exception:
            return _internal_error(call)

    async def _invoke(self, call: ToolCall) -> ToolOutcome:
        tool, context = call.tool, call.context
        if tool is None:
            return ToolOutcome.from_error(unknown_tool(call.name, call.offered(), "No tool is named {name}."))
        backend = context.effective_backend
        if not tool.serves(backend):
            return ToolOutcome.from_error(
                ToolError(ErrorCode.UNSUPPORTED, tool.unavailable(backend), backend=backend.value)
            )
        hints = _LazyHints(lambda: self.registry.hints(self.list_tools(context)))
        try:
            parsed = tool.parse(call.arguments, hints, backend=backend, widgets=context.widgets)
            result = await tool.run(parsed, context)
        except ToolError as error:
            return ToolOutcome.from_error(error)
        except Exception:
            return _internal_error(call)
        if isinstance(result, Answer):
            return ToolOutcome(result.data, answer=result, image=result.image)
        return ToolOutcome(result)


def closest_tool(name: str, names: Sequence[str]) -> str | None:
    """The tool name in `names` most like `name` (difflib's ratio, at least 0.6), else None: what
    an agent that misnamed a tool most likely meant."""
    found = difflib.get_close_matches(clip(name, TOOL_NAME_LENGTH), names, n=1)
    return found[0] if found else None


def unknown_tool(name: str, offered: list[str], lead: str) -> ToolError:
    """An `unknown_tool` error for a call of `name`: `lead` (its `{name}` is the name as called,
    quoted and cut), then the offered tool closest to it, if any ("Did you mean ...?", and as
    `closest`), then every offered tool (`tools`)."""
    closest = closest_tool(name, offered)
    text = lead.format(name=repr(clip(name, TOOL_NAME_LENGTH)))
    if closest is not None:
        text += f" Did you mean {closest}?"
    data: dict[str, Any] = {"tools": offered}
    if closest is not None:
        data["closest"] = closest
    return ToolError(ErrorCode.UNKNOWN_TOOL, f"{text} Valid tools: {', '.join(offered)}.", **data)


class _LazyHints(Mapping[str, str]):
    """The registry's hints for the tools this caller is offered, worked out only when an error
    reads them (a valid call never lists the tools)."""

    def __init__(self, make: Callable[[], dict[str, str]]) -> None:
        self._make = make
        self._hints: dict[str, str] | None = None

    def _all(self) -> dict[str, str]:
        if self._hints is None:
            self._hints = self._make()
        return self._hints

    def __getitem__(self, kind: str) -> str:
        return self._all()[kind]

    def __iter__(self) -> Iterator[str]:
        return iter(self._all())

    def __len__(self) -> int:
        return len(self._all())


def _bind(interceptor: Interceptor, next_: Next) -> Next:
    async def bound(call: ToolCall) -> ToolOutcome:
        return await interceptor(call, next_)

    return bound


def _internal_error(call: ToolCall) -> ToolOutcome:
    request_id = call.context.request_id
    details = traceback.format_exc()
    for secret in call.context.secrets():
        details = details.replace(secret, "***")
    log(
        ToolCallFailed(
            tool=clip(call.name, TOOL_NAME_LENGTH), request_id=request_id, exception=details[-TRACEBACK_LENGTH:]
        )
    )
    return ToolOutcome.from_error(
        ToolError(
            ErrorCode.INTERNAL,
            f"Something went wrong on our side; the server log has the details (request {request_id}).",
            request_id=request_id,
        )
    )


def error_text(outcome: ToolOutcome, context: CallContext) -> str | None:
    """A failed call's error message as the call log and traces keep it: scrubbed of the call's
    keys and cut to `ERROR_TEXT_LENGTH`; None for a call that succeeded."""
    if not outcome.is_error:
        return None
    error = str(outcome.data["error"].get("message", ""))
    for secret in context.secrets():
        error = error.replace(secret, "***")
    return clip(error, ERROR_TEXT_LENGTH)


async def trace_calls(call: ToolCall, next_: Next) -> ToolOutcome:
    """Interceptor (the outermost): with traces on, one `execute_tool <tool>` span per call, the
    child of the MCP request's span and the parent of its TomTom requests' (tools/tracing.py).
    Off, it only passes the call on."""
    tracer = tracing.tracer()
    if tracer is None:
        return await next_(call)
    context = call.context
    name = clip(call.name, TOOL_NAME_LENGTH)
    with tracer.start_as_current_span(
        f"execute_tool {name}" if call.tool is not None else "execute_tool",
        kind=SpanKind.INTERNAL,
        attributes=tracing.attributes(
            gen_ai__operation__name="execute_tool",
            gen_ai__tool__name=name,
            tomtom_mcp__client__name=context.client_name,
            tomtom_mcp__tenant=context.tenant,
            tomtom_mcp__transport=context.transport,
            tomtom_mcp__backend=context.effective_backend.value,
            tomtom_mcp__request_id=context.request_id,
        ),
        record_exception=False,
        set_status_on_exception=False,
    ) as span:
        outcome = await next_(call)
        span.set_attribute("tomtom_mcp.outcome", outcome.code)
        span.set_attribute("tomtom_mcp.upstream_calls", context.stats.calls)
        if outcome.is_error:
            span.set_attribute("error.type", outcome.code)
            span.set_status(StatusCode.ERROR, error_text(outcome, context))
        return outcome


def suggested(outcome: ToolOutcome) -> list[str] | None:
    """The tools a failed call's answer pointed to (`ToolCall.suggested`): a retired tool's
    `replaced_by`, an unknown name's `closest`; None for any other outcome."""
    if not outcome.is_error:
        return None
    error = outcome.data["error"]
    if error.get("code") == ErrorCode.RETIRED:
        named = error.get("replaced_by")
    elif error.get("code") == ErrorCode.UNKNOWN_TOOL:
        named = [error.get("closest")]
    else:
        return None
    if not isinstance(named, list):
        return None
    names = [clip(name, TOOL_NAME_LENGTH) for name in named if isinstance(name, str)][:MAX_NAMES]
    return names or None


def argument_paths(outcome: ToolOutcome) -> list[str] | None:
    """The argument paths an `invalid_arguments` answer named (`ToolCall.argument_paths`): its
    `argument` or `arguments`, then each of its `problems`' (tools.inputs.describe), each once,
    cut to `ARGUMENT_PATH_LENGTH`, the first `MAX_ARGUMENT_PATHS`; None for any other outcome."""
    if not outcome.is_error:
        return None
    error = outcome.data["error"]
    if error.get("code") != ErrorCode.INVALID_ARGUMENTS:
        return None
    problems = error.get("problems")
    named: list[Any] = []
    for part in (error, *(problems if isinstance(problems, list) else ())):
        if isinstance(part, Mapping):
            arguments = part.get("arguments")
            named += [part.get("argument"), *(arguments if isinstance(arguments, list | tuple) else ())]
    paths = dict.fromkeys(clip(path, ARGUMENT_PATH_LENGTH) for path in named if isinstance(path, str) and path)
    return list(paths)[:MAX_ARGUMENT_PATHS] or None


async def log_calls(call: ToolCall, next_: Next) -> ToolOutcome:
    """Interceptor: one `Tool call` line per tool call (core/calls.py) with its identity,
    outcome, times and size; for a call that failed, the tools its answer pointed to and the
    arguments it named."""
    started = time.perf_counter()
    outcome = await next_(call)
    context = call.context
    error = error_text(outcome, context)
    log(
        ToolCallEvent(
            tool=clip(call.name, TOOL_NAME_LENGTH),
            client=context.client_name,
            user_agent=context.user_agent,
            transport=context.transport,
            tenant=context.tenant,
            backend=context.effective_backend.value,
            outcome=outcome.code,
            upstream_calls=context.stats.calls,
            upstream_rate_limited=context.stats.statuses.count(429),
            upstream_ms=round(context.stats.seconds * 1000, 1),
            total_ms=round((time.perf_counter() - started) * 1000, 1),
            bytes=outcome.size,
            request_id=context.request_id,
            session=context.session,
            error=error,
            protocol_version=context.protocol_version,
            suggested=suggested(outcome),
            argument_paths=argument_paths(outcome),
        )
    )
    return outcome
