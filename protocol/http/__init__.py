"""MCP over Streamable HTTP at `/mcp`, as a Django async view; stateless, JSON responses only.

The parts, each using only those below it (import-linter checks this):

- ``views``: `mcp_view` and the RFC 9728 metadata view, with the URLconf regexes routing to them.
- ``app``: the process's endpoint, built once from Django settings (sign-in included).
- ``endpoint``: `McpEndpoint` (configured by `HttpSettings`): the transport-safety guard, sign-in
  and the span of each request, then the single-request exchange or the SDK's transport.
- ``guards``: the guard's Origin, media-type and CORS rules;
  ``responses``: the JSON-RPC errors it answers (and `misdirected`, Django's 421);
  ``context``: the `CallContext` of an HTTP caller; ``transport``: the SDK's session manager,
  kept running.

The names the wiring (tomtom_mcp) and the tests import are re-exported here.
"""

from protocol.http.app import build_http_app, configured_sign_in, mcp_endpoint
from protocol.http.endpoint import HttpSettings, McpEndpoint
from protocol.http.responses import misdirected
from protocol.http.views import mcp_route, mcp_view, protected_resource_routes, protected_resource_view

__all__ = [
    "HttpSettings",
    "McpEndpoint",
    "build_http_app",
    "configured_sign_in",
    "mcp_endpoint",
    "mcp_route",
    "mcp_view",
    "misdirected",
    "protected_resource_routes",
    "protected_resource_view",
]
