"""MCP Apps on the wire: how tools name their widget, and how widgets are served.

A tool drawn by a widget lists `_meta.ui.resourceUri` (and the legacy flat `ui/resourceUri`
older hosts read); a tool only widgets call lists `_meta.ui.visibility: ["app"]`; a client
that is not offered widgets is listed neither (`declares_apps` reads a declaration). A widget is
a `ui://` resource of MIME type `text/html;profile=mcp-app` whose `_meta.ui` carries its CSP
and asks for the host's border. The names and the MIME type are the SDK's (`mcp.server.apps`).
"""

from __future__ import annotations

from typing import Any

import mcp_types as types
from mcp.server.apps import APP_MIME_TYPE, EXTENSION_ID, ResourceCsp

from tools.definition import Tool
from tools.widgets import Widget


def tool_meta(tool: Tool, *, widgets: bool = True) -> dict[str, Any] | None:
    """The `_meta` a tool lists: its widget, or that only widgets call it (None: neither, or a
    client that is not offered widgets)."""
    if not widgets:
        return None
    if tool.app_only:
        return {"ui": {"visibility": ["app"]}}
    if tool.widget is not None:
        return {"ui": {"resourceUri": tool.widget}, "ui/resourceUri": tool.widget}
    return None


def declares_apps(capabilities: Any) -> bool:
    """Whether client capabilities (a `ClientCapabilities`, or its JSON object) declare MCP Apps:
    `extensions["io.modelcontextprotocol/ui"].mimeTypes` lists `text/html;profile=mcp-app`."""
    extensions = (
        capabilities.get("extensions") if isinstance(capabilities, dict) else getattr(capabilities, "extensions", None)
    )
    settings = extensions.get(EXTENSION_ID) if isinstance(extensions, dict) else None
    mime_types = settings.get("mimeTypes") if isinstance(settings, dict) else None
    return isinstance(mime_types, list | tuple) and APP_MIME_TYPE in mime_types


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
