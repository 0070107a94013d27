"""The Django views of the HTTP transport and the URLconf regexes that route to them.

`mcp_view` answers `MCP_PATH` (tomtom_mcp/urls.py; tomtom_mcp/asgi.py routes the same regex to
its own middleware stack); `protected_resource_view` answers RFC 9728's well-known paths.
"""

from __future__ import annotations

import re

from django.http import HttpRequest, HttpResponse
from django.views.decorators.csrf import csrf_exempt

from protocol.http.app import mcp_endpoint
from protocol.oauth import METADATA_PATH


def protected_resource_view(request: HttpRequest) -> HttpResponse:
    """RFC 9728 metadata: this resource and its authorization servers; 404 when sign-in is off."""
    sign_in = mcp_endpoint().settings.sign_in
    if sign_in is None:
        return HttpResponse(status=404)
    if request.method == "OPTIONS":
        response = HttpResponse(status=204)
        response["Access-Control-Allow-Methods"] = "GET, OPTIONS"
        response["Access-Control-Allow-Headers"] = "Mcp-Protocol-Version"
    elif request.method in ("GET", "HEAD"):
        response = HttpResponse(sign_in.resource_server.metadata_json(), content_type="application/json")
        response["Cache-Control"] = "public, max-age=3600"
    else:
        response = HttpResponse(status=405)
        response["Allow"] = "GET, HEAD, OPTIONS"
    response["Access-Control-Allow-Origin"] = "*"  # public metadata: browser-based hosts read it too
    return response


def protected_resource_routes(path: str) -> list[str]:
    """URLconf regexes for the metadata: the bare well-known path and the `MCP_PATH`-suffixed one."""
    well_known = METADATA_PATH.strip("/")
    return [rf"^{re.escape(well_known)}/?$", rf"^{re.escape(well_known + '/' + path.strip('/'))}/?$"]


@csrf_exempt  # no cookies are read: Origin is checked instead
async def mcp_view(request: HttpRequest) -> HttpResponse:
    """The URLconf's view for `MCP_PATH`; the endpoint is built on first use (or at ASGI startup)."""
    return await mcp_endpoint().handle(request)


def mcp_route(path: str) -> str:
    """The URLconf regex for `MCP_PATH`: exactly that path, with or without a trailing slash."""
    return rf"^{re.escape(path.strip('/'))}/?$"
