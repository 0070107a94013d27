"""The MCP server: the SDK's low-level `Server`, answering from the dispatcher.

`build_server(dispatcher, make_context, widgets)` wires `tools/list` and `tools/call` to the
dispatcher (protocol/handlers/tools.py); the widgets' `ui://` resources and the reference data
(protocol.resources) to `resources/list`, `resources/templates/list` and `resources/read`
(protocol/handlers/resources.py); the workflow prompts (protocol.prompts) to `prompts/list` and
`prompts/get` (protocol/handlers/prompts.py). Prompts and resources that need a tool are
offered only to callers offered that tool. Completion is not served (so not advertised): the
one worth having, category names, would cost a TomTom request per keystroke.
`make_context(request_context)` is the transport's own way to say who is calling; the handlers
never look at HTTP or stdio details, and shape it to the caller (protocol/handlers/callers.py).

The listing is shaped to the caller by the dispatcher (`Dispatcher.listing`), each tool's wire
forms built once and each wire listing serialised by the SDK once and then reused
(`ToolHandlers.listing_once`): a listing costs what deciding which tools it holds costs. The
SDK middleware, outermost first: `traced` (protocol/spans.py), `logged` (protocol/evidence.py:
`Session started`, `MCP request refused`), `name_invalid_params` (here), `listing_once` (which
also writes `Tools listed`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import mcp_types as types
from mcp.server import Server
from mcp.server.context import CallNext, ServerRequestContext
from mcp.shared.exceptions import MCPError
from pydantic import ValidationError

from core.events import log
from core.operations import ServerStarted
from core.version import SERVER_NAME, version
from governance.client_surface import ClientSurfaces, default_client_surfaces
from protocol.config import default_widgets
from protocol.evidence import ExchangeLog
from protocol.handlers.callers import Callers, ContextFactory
from protocol.handlers.prompts import PromptHandlers
from protocol.handlers.resources import ResourceHandlers
from protocol.handlers.tools import ToolHandlers
from protocol.spans import ServerSpans
from tools.dispatch import Dispatcher
from tools.geometry.compiled import simplifier
from tools.widgets import Widget

INSTRUCTIONS = (
    "TomTom Maps tools: geocode addresses, search places, plan routes and read live traffic "
    "anywhere TomTom covers. Coordinates are always [longitude, latitude]. response_detail: "
    "compact (default) answers the user; geometry adds GeoJSON lines and areas to draw (on the tools "
    "that have geometry); full is TomTom's untrimmed answer, many times larger."
)


def build_server(
    dispatcher: Dispatcher,
    make_context: ContextFactory,
    widgets: Sequence[Widget] | None = None,
    surfaces: ClientSurfaces | None = None,
) -> Server[Any]:
    """`widgets` default to the process's (protocol.config.default_widgets), `surfaces` to the
    operator's rules (governance.client_surface.default_client_surfaces)."""
    callers = Callers(dispatcher, make_context, default_client_surfaces() if surfaces is None else surfaces)
    tools = ToolHandlers(callers)
    resources = ResourceHandlers(callers, default_widgets() if widgets is None else widgets)
    prompts = PromptHandlers(callers)
    server: Server[Any] = Server(
        SERVER_NAME,
        version=version(),
        title="TomTom Maps",
        instructions=INSTRUCTIONS,
        on_list_tools=tools.list_tools,
        on_call_tool=tools.call_tool,
        on_list_resources=resources.list_resources,
        on_list_resource_templates=resources.list_resource_templates,
        on_read_resource=resources.read_resource,
        on_list_prompts=prompts.list_prompts,
        on_get_prompt=prompts.get_prompt,
    )
    # The SDK's OpenTelemetry middleware is not free on every request even without an exporter,
    # and knows nothing of the caller: `traced` makes this server's spans (tools/tracing.py).
    # `logged` is outside `name_invalid_params`, so a refusal is logged with the code it is answered with.
    middleware = [ServerSpans(tools.known).traced, ExchangeLog(make_context).logged]
    server.middleware[:] = [*middleware, name_invalid_params, tools.listing_once]
    return server


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


def log_server_started(transport: Literal["stdio", "http"]) -> None:
    """`Server started`: this process serves, with this version and this simplifier."""
    log(ServerStarted(version=version(), transport=transport, simplifier=simplifier()))
