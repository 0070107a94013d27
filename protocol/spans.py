"""The MCP server span of each request, as OpenTelemetry's MCP conventions name it.

Over HTTP the `/mcp` edge starts it (protocol/http/endpoint.py), once the body is decoded; on
stdio or in process the `traced` SDK middleware does. Either way `traced` records how the
request ended on it (docs/adr/0035-traces.md).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import mcp_types as types
from mcp.server.context import CallNext, ServerRequestContext
from mcp.shared.exceptions import MCPError
from opentelemetry import context as otel_context
from opentelemetry import propagate, trace
from opentelemetry.trace import SpanKind, StatusCode
from starlette.requests import Request

from core.events import SHORT_TEXT_LENGTH, TOOL_NAME_LENGTH, clip
from tools import tracing

TRACE_SPAN = "tomtom_mcp.span"
"""Where the `/mcp` edge leaves the request's MCP server span in the ASGI scope's `state`."""


def request_span(
    method: str, params: Mapping[str, Any] | None, request_id: Any, known: Callable[[str], bool]
) -> tuple[str, dict[str, Any]]:
    """The MCP server span's name and attributes for one request or notification, as
    OpenTelemetry's MCP conventions name them (docs/adr/0035-traces.md). A tool name is in the
    span's name only when the registry knows it (span names stay few); as `gen_ai.tool.name`
    it is kept as called, cut to the log's length."""
    method = clip(method, SHORT_TEXT_LENGTH)
    attributes: dict[str, Any] = {"mcp.method.name": method}
    if request_id is not None:
        attributes["jsonrpc.request.id"] = clip(str(request_id), SHORT_TEXT_LENGTH)
    name = method
    tool = params.get("name") if method == "tools/call" and isinstance(params, Mapping) else None
    if method == "tools/call":
        attributes["gen_ai.operation.name"] = "execute_tool"
    if isinstance(tool, str):
        attributes["gen_ai.tool.name"] = clip(tool, TOOL_NAME_LENGTH)
        if known(tool):
            name = f"{method} {tool}"
    return name, attributes


def remote_parent(*carriers: Any) -> otel_context.Context | None:
    """The caller's trace context, from the first carrier holding a valid one: the request's
    `params._meta` (as the MCP conventions propagate it), then the HTTP headers; else None."""
    for carrier in carriers:
        if not isinstance(carrier, Mapping):
            continue
        try:
            context = propagate.extract(carrier)
        except (TypeError, ValueError):
            continue
        if trace.get_current_span(context).get_span_context().is_valid:
            return context
    return None


class ServerSpans:
    """The `traced` middleware; `known` says whether the registry knows a tool (`request_span`)."""

    __slots__ = ("known",)

    def __init__(self, known: Callable[[str], bool]) -> None:
        self.known = known

    async def traced(self, ctx: ServerRequestContext[Any], call_next: CallNext) -> Any:
        """Middleware: with traces on, the request's outcome on its MCP server span. Over HTTP the
        `/mcp` edge made the span, and it is current here on every path (the SDK's tasks inherit
        the request's context); on stdio or in process it starts here."""
        tracer = tracing.tracer()
        if tracer is None:
            return await call_next(ctx)
        state = ctx.request.scope.get("state", {}) if isinstance(ctx.request, Request) else {}
        span = state.get(TRACE_SPAN)
        if span is not None:
            return await _observed(span, ctx, call_next)
        name, attributes = request_span(ctx.method, ctx.params, ctx.request_id, self.known)
        attributes["mcp.protocol.version"] = ctx.protocol_version
        parent = remote_parent(ctx.params.get("_meta") if ctx.params else None)
        with tracer.start_as_current_span(
            name,
            context=parent,
            kind=SpanKind.SERVER,
            attributes=attributes,
            record_exception=False,
            set_status_on_exception=False,
        ) as span:
            return await _observed(span, ctx, call_next)


async def _observed(span: trace.Span, ctx: ServerRequestContext[Any], call_next: CallNext) -> Any:
    try:
        result = await call_next(ctx)
    except Exception as error:
        _record_outcome(span, error, ctx.method)
        raise
    _record_outcome(span, None, ctx.method, result)
    return result


def _record_outcome(span: trace.Span, error: BaseException | None, method: str, result: Any = None) -> None:
    """How a request ended, on its MCP server span: a JSON-RPC error's code, or `tool_error` for a
    tool result with `isError` (the conventions' `error.type` values)."""
    if isinstance(error, MCPError):
        code = str(error.error.code)
        span.set_attributes({"error.type": code, "rpc.response.status_code": code})
        span.set_status(StatusCode.ERROR, clip(error.error.message, SHORT_TEXT_LENGTH))
    elif error is not None:
        span.set_attribute("error.type", type(error).__qualname__)
        span.set_status(StatusCode.ERROR)
    elif method == "tools/call" and _is_error_result(result):
        span.set_attribute("error.type", "tool_error")
        span.set_status(StatusCode.ERROR)


def _is_error_result(result: Any) -> bool:
    match result:
        case types.CallToolResult(is_error=True) | {"isError": True}:
            return True
        case _:
            return False
