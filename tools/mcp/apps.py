"""MCP Apps on the wire: how tools name their widget, and how widgets are served.

A tool drawn by a widget lists `_meta.ui.resourceUri` (and the legacy flat `ui/resourceUri`
older hosts read); a tool only widgets call lists `_meta.ui.visibility: ["app"]`. A widget is
a `ui://` resource of MIME type `text/html;profile=mcp-app` whose `_meta.ui` carries its CSP
and asks for the host's border. The names and the MIME type are the SDK's (`mcp.server.apps`).
"""

from __future__ import annotations

from typing import Any

import mcp_types as types
from mcp.server.apps import APP_MIME_TYPE, ResourceCsp

from tools.definition import Tool
from tools.widgets import Widget


def tool_meta(tool: Tool) -> dict[str, Any] | None:
    """The `_meta` a tool lists: its widget, or that only widgets call it (None: neither)."""
    if tool.app_only:
        return {"ui": {"visibility": ["app"]}}
    if tool.widget is not None:
        return {"ui": {"resourceUri": tool.widget}, "ui/resourceUri": tool.widget}
    return None


def resource_meta(widget: Widget) -> dict[str, Any]:
    """A widget resource's `_meta.ui`: its CSP, and a request for the host's border."""
    csp = ResourceCsp(connect_domains=list(widget.connect_domains), resource_domains=list(widget.resource_domains))
    return {"ui": {"csp": csp.model_dump(by_alias=True, exclude_none=True), "prefersBorder": True}}


def resource(widget: Widget) -> types.Resource:
    return types.Resource(
        uri=widget.uri,
        name=widget.name,
        title=widget.title,
        description=widget.description,
        mime_type=APP_MIME_TYPE,
        _meta=resource_meta(widget),
    )


def contents(widget: Widget) -> types.TextResourceContents:
    return types.TextResourceContents(
        uri=widget.uri, mime_type=APP_MIME_TYPE, text=widget.html, _meta=resource_meta(widget)
    )
