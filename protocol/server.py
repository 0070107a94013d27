"""The MCP server: the SDK's low-level `Server`, answering from the dispatcher.

`build_server(dispatcher, make_context, widgets)` wires `tools/list` and `tools/call` to the
dispatcher; the widgets' `ui://` resources and the reference data (protocol.resources) to
`resources/list`, `resources/templates/list` and `resources/read`; the workflow prompts
(protocol.prompts) to `prompts/list` and `prompts/get`. Prompts and resources that need a tool are
offered only to callers offered that tool. Completion is not served (so not advertised): the
one worth having, category names, would cost a TomTom request per keystroke.
`make_context(request_context)` is the transport's own way to say who is calling; the handlers
never look at HTTP or stdio details. The `CallToolResult` envelope is built here only.

The listing is shaped to the caller by the dispatcher (`Dispatcher.listing`): its backend,
whether it is offered widgets, the tools its client rule hides (governance.client_surface), and the
listing filters. Whether it is offered widgets comes from the capabilities the session knows
(stdio, in-process, and the 2026-07-28 per-request capabilities), else from what the transport
read (`CallContext.apps_declared`: over HTTP, the signed session id), and the operator's rules.
Each tool's listings (per backend, widgets or not) are built once, and each wire listing
(protocol version, widgets or not, backend, the tools listed) is serialised by the SDK once and
then reused (`listing_once`): a listing costs what deciding which tools it holds costs, and is a
pure function of the request.
"""

from __future__ import annotations

import base64
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import mcp_types as types
from mcp.server import Server
from mcp.server.apps import client_supports_apps
from mcp.server.context import CallNext, ServerRequestContext
from mcp.shared.exceptions import MCPError
from opentelemetry import context as otel_context
from opentelemetry import propagate, trace
from opentelemetry.trace import SpanKind, StatusCode
from pydantic import ValidationError
from starlette.requests import Request

from core.events import SHORT_TEXT_LENGTH, TOOL_NAME_LENGTH, clip
from core.version import SERVER_NAME, version
from governance.client_surface import ClientSurfaces, default_client_surfaces
from protocol import mcp_apps
from protocol.config import default_widgets
from protocol.prompts import PromptArgumentError, offered_prompts
from protocol.resources import RESOURCES, TEMPLATES, ReadError, Reference
from protocol.resources import read as read_reference
from tools import tracing
from tools.context import CallContext
from tools.definition import Tool
from tools.dispatch import Dispatcher
from tools.tomtom.backends import Backend
from tools.widgets import Widget

INSTRUCTIONS = (
    "TomTom Maps tools: geocode addresses, search places, plan routes and read live traffic "
    "anywhere TomTom covers. Coordinates are always [longitude, latitude]. response_detail: "
    "compact (default) answers the user; geometry adds GeoJSON lines and areas to draw (on the tools "
    "that have geometry); full is TomTom's untrimmed answer, many times larger."
)

ContextFactory = Callable[[ServerRequestContext[Any]], CallContext]
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


JSON = "application/json"
READ_ERROR_CODES = {"invalid_arguments": types.INVALID_PARAMS}
"""The JSON-RPC code of a resource read that failed, by the closed-set code of its error (the
error itself travels in `data.error`); any other failure is -32603."""


def reference_resource(reference: Reference) -> types.Resource:
    return types.Resource(
        uri=reference.uri,
        name=reference.name,
        title=reference.title,
        description=reference.description,
        mime_type=reference.mime_type,
    )


def reference_template(reference: Reference) -> types.ResourceTemplate:
    return types.ResourceTemplate(
        uri_template=reference.uri,
        name=reference.name,
        title=reference.title,
        description=reference.description,
        mime_type=reference.mime_type,
    )


def mcp_tool(tool: Tool, *, backend: Backend, widgets: bool = True) -> types.Tool:
    """The tool as listed to a caller on `backend` offered widgets, or (`widgets=False`) to one
    that is not: then without `show_ui` and without `_meta.ui` (`Tool.listing`)."""
    listing = tool.listing(backend, widgets)
    return types.Tool(
        name=tool.name,
        title=tool.title,
        description=listing.description,
        input_schema=dict(listing.input_schema),
        annotations=types.ToolAnnotations(**_annotation_kwargs(tool)),
        _meta=mcp_apps.tool_meta(tool, widgets=widgets),
    )


def declared_apps(ctx: ServerRequestContext[Any], context: CallContext) -> bool | None:
    """Whether the client declared MCP Apps: from the capabilities the session knows, else
    from what the transport read (None: not known)."""
    if ctx.session.client_capabilities is not None:
        return client_supports_apps(ctx)
    return context.apps_declared


def _annotation_kwargs(tool: Tool) -> dict[str, bool]:
    """The hints a host reads, without the ones the specification makes meaningless or default:
    `idempotentHint` means something only for a tool that writes (`readOnlyHint: false`), and
    `openWorldHint` is true unless said otherwise. `destructiveHint` is always said, since some
    hosts ask before a call that does not."""
    hints = tool.annotations
    kwargs = {"read_only_hint": hints.read_only, "destructive_hint": hints.destructive}
    if not hints.read_only:
        kwargs["idempotent_hint"] = hints.idempotent
    if not hints.open_world:
        kwargs["open_world_hint"] = False
    return kwargs


def client_name_from_handshake(ctx: ServerRequestContext[Any]) -> str | None:
    """The `clientInfo.name` the session knows (stdio, in-process, and 2026-07-28 `_meta`)."""
    params = ctx.session.client_params
    if params is not None and params.client_info is not None:
        return params.client_info.name
    return None


async def name_invalid_params(ctx: ServerRequestContext[Any], call_next: CallNext) -> Any:
    """Middleware: a -32602 error says which parameter is wrong (the SDK's says only "Invalid")."""
    try:
        return await call_next(ctx)
    except ValidationError as exc:
        problem = exc.errors()[0]
        parts = [str(part) for part in problem["loc"]]
        path = ".".join(parts if parts[:1] == ["params"] else ["params", *parts])
        raise MCPError(
            code=types.INVALID_PARAMS, message=f"Invalid params: {path}: {problem['msg']}", data={"path": path}
        ) from None


ListingKey = tuple[str, bool, Backend, tuple[tuple[str, str], ...]]
"""A wire listing's key: the protocol version, widgets or not, the backend, and each listed tool's
name and description (a deprecated tool's starts with its notice, which governance may change)."""


class WireListings:
    """The last `size` wire `tools/list` results, by `ListingKey`.

    A listing is a pure function of its key, so any replica may keep its own copy; nothing a
    request depends on lives here."""

    def __init__(self, size: int = 64) -> None:
        self.size = size
        self._results: OrderedDict[ListingKey, Mapping[str, Any]] = OrderedDict()

    def get(self, key: ListingKey) -> Mapping[str, Any] | None:
        result = self._results.get(key)
        if result is not None:
            self._results.move_to_end(key)
        return result

    def keep(self, key: ListingKey, result: Mapping[str, Any]) -> None:
        self._results[key] = result
        while len(self._results) > self.size:
            self._results.popitem(last=False)


def build_server(
    dispatcher: Dispatcher,
    make_context: ContextFactory,
    widgets: Sequence[Widget] | None = None,
    surfaces: ClientSurfaces | None = None,
) -> Server[Any]:
    """`widgets` default to the process's (protocol.config.default_widgets), `surfaces` to the
    operator's rules (governance.client_surface.default_client_surfaces)."""
    listed = {
        (tool.name, backend, offered, tool.description): mcp_tool(tool, backend=backend, widgets=offered)
        for tool in dispatcher.registry
        for backend in Backend
        for offered in (True, False)
    }
    registered = len(listed)

    def as_listed(tool: Tool, backend: Backend, widgets: bool) -> types.Tool:
        """The wire form of `tool`, made once per description (governance may prefix a notice)."""
        key = (tool.name, backend, widgets, tool.description)
        wire = listed.get(key)
        if wire is None:
            if len(listed) > 2 * registered:  # notices come and go: forget the old ones
                for stale in list(listed)[registered:]:
                    del listed[stale]
            wire = listed[key] = mcp_tool(tool, backend=backend, widgets=widgets)
        return wire

    served = {widget.uri: widget for widget in (default_widgets() if widgets is None else widgets)}
    rules = default_client_surfaces() if surfaces is None else surfaces
    wire_listings = WireListings()

    async def shaped_context(ctx: ServerRequestContext[Any]) -> CallContext:
        context = make_context(ctx)
        context.apps_declared = declared_apps(ctx, context)
        shape = await rules.shape_for(context.client_name, context.apps_declared)
        context.widgets, context.hidden_tools = shape.widgets, shape.hidden_tools
        return context

    async def list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        context = await shaped_context(ctx)
        backend, widgets = context.effective_backend, context.widgets
        tools = await dispatcher.listing(context)
        return types.ListToolsResult(tools=[as_listed(tool, backend, widgets) for tool in tools])

    async def listing_once(ctx: ServerRequestContext[Any], call_next: CallNext) -> Any:
        """Middleware: a `tools/list` without params answers the wire listing the SDK serialised
        for the same version, widgets and tools (the handler and the SDK's per-version shaping
        run on a miss only). Anything else, params included, takes the whole path."""
        if ctx.method != "tools/list" or ctx.params:
            return await call_next(ctx)
        context = await shaped_context(ctx)
        tools = tuple((t.name, t.description) for t in await dispatcher.listing(context))
        key = (ctx.protocol_version, context.widgets, context.effective_backend, tools)
        wire = wire_listings.get(key)
        if wire is None:
            served = await call_next(ctx)
            if not isinstance(served, dict):  # not the SDK's wire dict: passed on, not kept
                return served
            # Kept only if the handler listed the same tools (governance may refresh in between).
            if tuple(t.get("name") for t in served.get("tools", ())) == tuple(name for name, _ in tools):
                wire_listings.keep(key, served)
            wire = served
        return dict(wire)

    async def call_tool(ctx: ServerRequestContext[Any], params: types.CallToolRequestParams) -> types.CallToolResult:
        context = await shaped_context(ctx)
        outcome = await dispatcher.call(params.name, params.arguments, context)
        content: list[types.ContentBlock] = [types.TextContent(type="text", text=outcome.text)]
        if outcome.image is not None:
            encoded = base64.b64encode(outcome.image.data).decode("ascii")
            content.append(types.ImageContent(type="image", data=encoded, mime_type=outcome.image.mime_type))
        return types.CallToolResult(
            content=content,
            is_error=outcome.is_error,
            _meta=outcome.meta,
        )

    async def offered_tools(ctx: ServerRequestContext[Any]) -> tuple[CallContext, set[str]]:
        context = await shaped_context(ctx)
        return context, {tool.name for tool in await dispatcher.listing(context)}

    async def list_resources(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        _, offered = await offered_tools(ctx)
        references = [reference_resource(r) for r in RESOURCES if r.offered_to(offered)]
        return types.ListResourcesResult(resources=[*(mcp_apps.resource(w) for w in served.values()), *references])

    async def list_resource_templates(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        _, offered = await offered_tools(ctx)
        templates = [reference_template(t) for t in TEMPLATES if t.offered_to(offered)]
        return types.ListResourceTemplatesResult(resource_templates=templates)

    async def read_resource(
        ctx: ServerRequestContext[Any], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        uri = str(params.uri)
        widget = served.get(uri)
        if widget is not None:
            return types.ReadResourceResult(contents=[mcp_apps.contents(widget)])
        context, offered = await offered_tools(ctx)
        try:
            text = await read_reference(uri, dispatcher, context, offered)
        except ReadError as error:
            raise MCPError(
                code=READ_ERROR_CODES.get(error.code, types.INTERNAL_ERROR),
                message=str(error),
                data={"uri": uri, "error": error.error},
            ) from None
        if text is None:
            known = [
                *served,
                *(r.uri for r in RESOURCES if r.offered_to(offered)),
                *(t.uri for t in TEMPLATES if t.offered_to(offered)),
            ]
            message = f"Unknown resource {uri[:256]}; known: {', '.join(known)}"
            raise MCPError(code=types.INVALID_PARAMS, message=message, data={"uri": uri[:256]})
        return types.ReadResourceResult(contents=[types.TextResourceContents(uri=uri, mime_type=JSON, text=text)])

    async def list_prompts(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListPromptsResult:
        _, offered = await offered_tools(ctx)
        return types.ListPromptsResult(
            prompts=[
                types.Prompt(
                    name=p.name,
                    title=p.title,
                    description=p.description,
                    arguments=[
                        types.PromptArgument(name=a.name, description=a.description, required=a.required)
                        for a in p.arguments
                    ],
                )
                for p in offered_prompts(offered)
            ]
        )

    async def get_prompt(ctx: ServerRequestContext[Any], params: types.GetPromptRequestParams) -> types.GetPromptResult:
        _, offered = await offered_tools(ctx)
        prompts = {prompt.name: prompt for prompt in offered_prompts(offered)}
        prompt = prompts.get(params.name)
        if prompt is None:
            raise MCPError(
                code=types.INVALID_PARAMS,
                message=f"Unknown prompt {params.name[:128]!r}; known: {', '.join(prompts) or 'none'}",
                data={"prompts": list(prompts)},
            )
        try:
            text = prompt.text(params.arguments, offered)
        except PromptArgumentError as error:
            raise MCPError(
                code=types.INVALID_PARAMS,
                message=f"Invalid arguments for {prompt.name}: {error}",
                data={"prompt": prompt.name},
            ) from None
        message = types.PromptMessage(role="user", content=types.TextContent(type="text", text=text))
        return types.GetPromptResult(description=prompt.description, messages=[message])

    def known(name: str) -> bool:
        return dispatcher.get(name) is not None

    async def traced(ctx: ServerRequestContext[Any], call_next: CallNext) -> Any:
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
        name, attributes = request_span(ctx.method, ctx.params, ctx.request_id, known)
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

    server: Server[Any] = Server(
        SERVER_NAME,
        version=version(),
        title="TomTom Maps",
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_resources=list_resources,
        on_list_resource_templates=list_resource_templates,
        on_read_resource=read_resource,
        on_list_prompts=list_prompts,
        on_get_prompt=get_prompt,
    )
    # The SDK's OpenTelemetry middleware is not free on every request even without an exporter,
    # and knows nothing of the caller: `traced` makes this server's spans (tools/tracing.py).
    server.middleware[:] = [traced, name_invalid_params, listing_once]
    return server


async def _observed(span: trace.Span, ctx: ServerRequestContext[Any], call_next: CallNext) -> Any:
    try:
        result = await call_next(ctx)
    except Exception as error:
        _record_outcome(span, error, ctx.method)
        raise
    _record_outcome(span, None, ctx.method, result)
    return result
