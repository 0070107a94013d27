"""The MCP server: the SDK's low-level `Server`, answering from the catalog.

`build_server(catalog, make_context)` wires `tools/list`, `tools/call` (and, when the catalog
carries widgets, the resources) to the catalog. `make_context(request_context)` is the
transport's own way to say who is calling; the handlers never look at HTTP or stdio details.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import mcp_types as types
from mcp.server import Server
from mcp.server.context import CallNext, ServerRequestContext
from mcp.shared.exceptions import MCPError
from pydantic import ValidationError

from tomtom_mcp import SERVER_NAME, version
from tools.catalog import Catalog
from tools.context import CallContext
from tools.definition import Tool
from tools.widgets import Widget

INSTRUCTIONS = (
    "TomTom Maps tools: geocode addresses, search places, plan routes and read live traffic "
    "anywhere TomTom covers. Coordinates are always [longitude, latitude]; answers are compact "
    "by default, and response_detail asks for drawable geometry or TomTom's full answer."
)

ContextFactory = Callable[[ServerRequestContext[Any]], CallContext]


def mcp_tool(tool: Tool) -> types.Tool:
    return types.Tool(
        name=tool.name,
        title=tool.title,
        description=tool.description,
        input_schema=dict(tool.input_schema),
        annotations=types.ToolAnnotations(title=tool.title, **_annotation_kwargs(tool)),
        _meta=dict(tool.meta) or None,
    )


def _annotation_kwargs(tool: Tool) -> dict[str, bool]:
    hints = tool.annotations
    return {
        "read_only_hint": hints.read_only,
        "destructive_hint": hints.destructive,
        "idempotent_hint": hints.idempotent,
        "open_world_hint": hints.open_world,
    }


def mcp_resource(widget: Widget) -> types.Resource:
    return types.Resource(
        uri=widget.uri,
        name=widget.name,
        title=widget.title,
        description=widget.description,
        mime_type=widget.mime_type,
        _meta=widget.meta,
    )


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


def build_server(catalog: Catalog, make_context: ContextFactory) -> Server[Any]:
    listed: dict[str, types.Tool] = {tool.name: mcp_tool(tool) for tool in catalog.list_tools_unfiltered()}

    async def list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        context = make_context(ctx)
        return types.ListToolsResult(tools=[listed[t.name] for t in catalog.list_tools(context)])

    async def call_tool(ctx: ServerRequestContext[Any], params: types.CallToolRequestParams) -> types.CallToolResult:
        context = make_context(ctx)
        outcome = await catalog.call(params.name, params.arguments, context)
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=outcome.text)],
            is_error=outcome.is_error,
            _meta=outcome.meta,
        )

    async def list_resources(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        return types.ListResourcesResult(resources=[mcp_resource(w) for w in catalog.widgets.values()])

    async def read_resource(
        ctx: ServerRequestContext[Any], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        widget = catalog.widgets.get(str(params.uri))
        if widget is None:
            known = ", ".join(catalog.widgets) or "none"
            raise MCPError(code=types.INVALID_PARAMS, message=f"Unknown resource {params.uri}; known: {known}",
                           data={"uri": str(params.uri)})  # fmt: skip
        content = types.TextResourceContents(
            uri=widget.uri, mime_type=widget.mime_type, text=widget.html, _meta=widget.meta
        )
        return types.ReadResourceResult(contents=[content])

    widgets = bool(catalog.widgets)
    server: Server[Any] = Server(
        SERVER_NAME,
        version=version(),
        title="TomTom Maps",
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_resources=list_resources if widgets else None,
        on_read_resource=read_resource if widgets else None,
    )
    # The SDK's OpenTelemetry middleware is a no-op without an exporter, but not free on every
    # request; this server exports no spans, so the list holds only our own middleware.
    server.middleware[:] = [name_invalid_params]
    return server
