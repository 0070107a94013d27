"""The catalog: the tools this server offers, and one way to call them.

`Catalog(tools, interceptors=...)` is built once per process from the tool modules listed in
`default_tools()`. Every call, whatever the transport, goes through `Catalog.call`:

    interceptors (outermost first) -> find the tool -> validate arguments -> tool.run

An interceptor is `async (call, next) -> ToolOutcome`; it can observe, reject or change a call
(logging, client identity and governance plug in here). Errors come back as a `ToolOutcome`
with `is_error` set and the closed-set JSON shape; nothing raises out of `call`.
"""

from __future__ import annotations

import asyncio
import logging
import time
import traceback
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import orjson

from tomtom_mcp.logging import log_event
from tools.app_status import AppStatus, emit
from tools.context import CallContext
from tools.definition import Answer, Tool, ToolDefinitionError
from tools.errors import ErrorCode, ToolError, invalid
from tools.schema import validate_arguments
from tools.shaping.appdata import deliver
from tools.widgets import Widget

logger = logging.getLogger("tools.calls")


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


@dataclass(slots=True)
class ToolOutcome:
    data: dict[str, Any]
    is_error: bool = False
    meta: dict[str, Any] | None = None
    _text: str | None = field(default=None, repr=False)

    @property
    def code(self) -> str:
        return self.data["error"]["code"] if self.is_error else "ok"

    @property
    def text(self) -> str:
        if self._text is None:
            self._text = dumps(self.data)
        return self._text

    @classmethod
    def from_error(cls, error: ToolError) -> ToolOutcome:
        return cls(error.as_dict(), is_error=True)


Next = Callable[[ToolCall], Awaitable[ToolOutcome]]
Interceptor = Callable[[ToolCall, Next], Awaitable[ToolOutcome]]
ListingFilter = Callable[[Sequence[Tool], CallContext], Sequence[Tool]]


class Catalog:
    def __init__(
        self,
        tools: Iterable[Tool],
        *,
        interceptors: Sequence[Interceptor] = (),
        listing_filters: Sequence[ListingFilter] = (),
        services: frozenset[str] = frozenset({"tomtom"}),
        widgets: Iterable[Widget] = (),
    ) -> None:
        self._tools: dict[str, Tool] = {}
        for tool in tools:
            if tool.name in self._tools:
                raise ToolDefinitionError(f"two tools are named {tool.name!r}")
            if tool.requires <= services:
                self._tools[tool.name] = tool
        self.widgets: dict[str, Widget] = {widget.uri: widget for widget in widgets}
        """The widgets the tools link to (`_meta.ui.resourceUri`), by URI, served as resources."""
        self.interceptors = tuple(interceptors)
        self.listing_filters = tuple(listing_filters)
        chain: Next = self._invoke
        for interceptor in reversed(self.interceptors):
            chain = _bind(interceptor, chain)
        self._chain = chain

    @property
    def names(self) -> list[str]:
        return list(self._tools)

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    def list_tools_unfiltered(self) -> list[Tool]:
        """Every registered tool, before listing filters (for building definitions once)."""
        return list(self._tools.values())

    def list_tools(self, context: CallContext) -> list[Tool]:
        tools: Sequence[Tool] = list(self._tools.values())
        for listing_filter in self.listing_filters:
            tools = listing_filter(tools, context)
        return list(tools)

    async def call(self, name: str, arguments: dict[str, Any] | None, context: CallContext) -> ToolOutcome:
        call = ToolCall(name=name, arguments=dict(arguments or {}), context=context, tool=self._tools.get(name))
        try:
            return await self._chain(call)
        except ToolError as error:
            return ToolOutcome.from_error(error)
        except Exception:
            return _internal_error(call)

    async def _invoke(self, call: ToolCall) -> ToolOutcome:
        tool = call.tool
        if tool is None:
            names = [t.name for t in self.list_tools(call.context)]
            return ToolOutcome.from_error(
                ToolError(
                    ErrorCode.UNKNOWN_TOOL,
                    f"No tool is named {call.name!r}. Valid tools: {', '.join(names)}.",
                    tools=names,
                )
            )
        try:
            if call.arguments.get("response_detail") == "geometry" and not has_geometry(tool):
                geometry_tools = ", ".join(t.name for t in self._tools.values() if has_geometry(t))
                raise invalid(
                    "response_detail",
                    f"{tool.name} returns points only, so it has no 'geometry'; use compact or full. "
                    f"Tools with geometry: {geometry_tools}",
                )
            assert tool.validator is not None
            validate_arguments(tool.validator, call.arguments)
            result = await tool.run(call.arguments, call.context)
            return await _delivered(call, result) if isinstance(result, Answer) else ToolOutcome(result)
        except ToolError as error:
            return ToolOutcome.from_error(error)
        except Exception:
            return _internal_error(call)


async def _delivered(call: ToolCall, answer: Answer) -> ToolOutcome:
    """The one place an `Answer` becomes a result: its text and its only `_meta`, the app data
    fitted into it (tools.shaping.appdata, on a worker thread: fitting a long route is CPU work),
    and the app-status lines that say how (docs/app-status.md)."""
    fitting = answer.show_ui and answer.app_data is not None
    delivery = await asyncio.to_thread(deliver, call.name, answer) if fitting else deliver(call.name, answer)
    fitted = delivery.fitted
    if fitted is not None:
        context = call.context
        who = {"tool": call.name, "client": context.client_name, "user_agent": context.user_agent,
               "request_id": context.request_id}  # fmt: skip
        simplification = fitted.simplification.as_dict() if fitted.simplification else None
        emit(AppStatus.APP_DATA, **who, delivery=delivery.meta["delivery"], raw_bytes=fitted.raw_bytes,
             encoded_chars=len(fitted.encoded) if fitted.encoded else None, result_chars=delivery.result_chars,
             simplification=simplification)  # fmt: skip
        if not delivery.inline and not answer.refetchable:
            emit(AppStatus.TOO_LARGE, **who, raw_bytes=fitted.raw_bytes, result_chars=delivery.result_chars)
    return ToolOutcome(delivery.data, meta=delivery.meta, _text=delivery.text)


def has_geometry(tool: Tool) -> bool:
    """Whether the tool offers `response_detail: "geometry"`."""
    detail = tool.input_schema.get("properties", {}).get("response_detail", {})
    return "geometry" in detail.get("enum", ())


def _bind(interceptor: Interceptor, next_: Next) -> Next:
    async def bound(call: ToolCall) -> ToolOutcome:
        return await interceptor(call, next_)

    return bound


def _internal_error(call: ToolCall) -> ToolOutcome:
    request_id = call.context.request_id
    details = traceback.format_exc()
    for secret in call.context.secrets():
        details = details.replace(secret, "***")
    log_event(
        logger, logging.ERROR, "Tool call failed unexpectedly", tool=call.name, request_id=request_id, exception=details
    )
    return ToolOutcome.from_error(
        ToolError(
            ErrorCode.INTERNAL,
            f"Something went wrong on our side; the server log has the details (request {request_id}).",
            request_id=request_id,
        )
    )


async def log_calls(call: ToolCall, next_: Next) -> ToolOutcome:
    """Interceptor: one JSON line per tool call with its identity, outcome, times and size."""
    started = time.perf_counter()
    outcome = await next_(call)
    context = call.context
    log_event(
        logger,
        logging.INFO if not outcome.is_error or outcome.code != "internal" else logging.ERROR,
        "Tool call",
        tool=call.name,
        client=context.client_name,
        user_agent=context.user_agent,
        transport=context.transport,
        backend=context.effective_backend.value,
        outcome=outcome.code,
        upstream_calls=context.stats.calls,
        upstream_ms=round(context.stats.seconds * 1000, 1),
        total_ms=round((time.perf_counter() - started) * 1000, 1),
        bytes=len(outcome.text.encode()),
        request_id=context.request_id,
    )
    return outcome


def default_tools() -> list[Tool]:
    """Every tool module's `TOOL`, in listing order. Register a new tool here (one line)."""
    from tools.definitions import (
        area_search,
        data_viz,
        dynamic_map,
        ev_routing,
        ev_search,
        fuzzy_search,
        geocode,
        get_app_data,
        get_map_key,
        nearby,
        poi_categories,
        poi_search,
        reachable_range,
        report_app_status,
        reverse_geocode,
        routing,
        search_along_route,
        traffic,
    )

    return [
        geocode.TOOL,
        reverse_geocode.TOOL,
        fuzzy_search.TOOL,
        poi_search.TOOL,
        nearby.TOOL,
        poi_categories.TOOL,
        ev_search.TOOL,
        area_search.TOOL,
        search_along_route.TOOL,
        routing.TOOL,
        ev_routing.TOOL,
        reachable_range.TOOL,
        traffic.TOOL,
        dynamic_map.TOOL,
        data_viz.TOOL,
        get_app_data.TOOL,
        get_map_key.TOOL,
        report_app_status.TOOL,
    ]


def build_catalog(extra_interceptors: Sequence[Interceptor] = ()) -> Catalog:
    """The process's catalog: every tool, logged, behind tool-surface governance (retired names
    and outdated inputs are answered before arguments are validated; see tools.governance)."""
    from tools.governance.runtime import build_governance
    from tools.widgets import default_widgets

    governance = build_governance()
    return Catalog(
        default_tools(),
        interceptors=(log_calls, governance.intercept, *extra_interceptors),
        listing_filters=(governance.filter_listing,),
        widgets=default_widgets(),
    )
