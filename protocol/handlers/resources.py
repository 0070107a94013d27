"""`resources/list`, `resources/templates/list` and `resources/read`: the widgets' `ui://`
resources and the reference data (protocol.resources).

Widgets are served to every caller; a reference resource that needs a tool is offered only to
callers offered that tool.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.shared.exceptions import MCPError

from protocol import mcp_apps
from protocol.handlers.callers import Callers
from protocol.resources import RESOURCES, TEMPLATES, ReadError, Reference
from protocol.resources import read as read_reference
from tools.widgets import Widget

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


class ResourceHandlers:
    """The resource handlers, over the widgets this server serves (by `ui://` URI)."""

    __slots__ = ("callers", "served")

    def __init__(self, callers: Callers, widgets: Sequence[Widget]) -> None:
        self.callers = callers
        self.served = {widget.uri: widget for widget in widgets}

    async def list_resources(
        self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        _, offered = await self.callers.offered_tools(ctx)
        references = [reference_resource(r) for r in RESOURCES if r.offered_to(offered)]
        widgets = (mcp_apps.resource(w) for w in self.served.values())
        return types.ListResourcesResult(resources=[*widgets, *references])

    async def list_resource_templates(
        self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        _, offered = await self.callers.offered_tools(ctx)
        templates = [reference_template(t) for t in TEMPLATES if t.offered_to(offered)]
        return types.ListResourceTemplatesResult(resource_templates=templates)

    async def read_resource(
        self, ctx: ServerRequestContext[Any], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        uri = str(params.uri)
        widget = self.served.get(uri)
        if widget is not None:
            return types.ReadResourceResult(contents=[mcp_apps.contents(widget)])
        context, offered = await self.callers.offered_tools(ctx)
        try:
            text = await read_reference(uri, self.callers.dispatcher, context, offered)
        except ReadError as error:
            raise MCPError(
                code=READ_ERROR_CODES.get(error.code, types.INTERNAL_ERROR),
                message=str(error),
                data={"uri": uri, "error": error.error},
            ) from None
        if text is None:
            known = [
                *self.served,
                *(r.uri for r in RESOURCES if r.offered_to(offered)),
                *(t.uri for t in TEMPLATES if t.offered_to(offered)),
            ]
            message = f"Unknown resource {uri[:256]}; known: {', '.join(known)}"
            raise MCPError(code=types.INVALID_PARAMS, message=message, data={"uri": uri[:256]})
        return types.ReadResourceResult(contents=[types.TextResourceContents(uri=uri, mime_type=JSON, text=text)])
