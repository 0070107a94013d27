"""Each transport-safety rule of `/mcp` is enforced in one place, before the SDK sees the request.

Host is Django's rule (`ALLOWED_HOSTS`), answered 421 by `McpHostMiddleware` before the view
runs; Origin, method, media types, body size and the backend header are the guard's
(`McpEndpoint.handle`); the SDK's transport never sees a refused request, and its own copies
of these checks never refuse what the guard accepted (docs/adr/0025-an-edge-without-patches.md).
The same table through a real server is in test_http.py.
"""

from __future__ import annotations

import json
from typing import Any
from unittest import mock

import pytest
from django.conf import settings
from django.test import AsyncClient, AsyncRequestFactory
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

from protocol import exchange
from protocol.http import McpEndpoint, mcp_endpoint

PING = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"})
JSON = "application/json"
LIMIT = settings.MCP_MAX_BODY_BYTES
NOT_POST = "GET is not supported: this server is stateless, POST only"
REFUSALS = {
    # case: (method, extra headers, Content-Type, body, status, JSON-RPC error code, message)
    "host": ("POST", {"Host": "evil.example"}, JSON, PING, 421, -32600, "Host not allowed"),
    "host-suffix": ("POST", {"Host": "127.0.0.1.evil.example:80"}, JSON, PING, 421, -32600, "Host not allowed"),
    "origin": ("POST", {"Origin": "https://evil.example"}, JSON, PING, 403, -32600, "Origin not allowed"),
    "method": ("GET", {}, JSON, "", 405, -32600, NOT_POST),
    "content-type": ("POST", {}, "text/plain", PING, 415, -32600, "Content-Type must be application/json"),
    "accept": ("POST", {"Accept": "text/html"}, JSON, PING, 406, -32600, "Accept must include application/json"),
    "body-size": ("POST", {}, JSON, "[" + " " * LIMIT + "]", 413, -32600, f"Request body over {LIMIT} bytes"),
    "not-json": ("POST", {}, JSON, PING[:-1], 400, -32700, "Parse error: the body is not JSON"),
}


@pytest.mark.parametrize("case", REFUSALS)
async def test_a_refused_request_gets_one_json_rpc_answer_and_never_reaches_the_sdk(case):
    method, headers, content_type, body, status, code, message = REFUSALS[case]
    viewed = []
    handle = McpEndpoint.handle

    async def viewing(self: McpEndpoint, request: Any) -> Any:
        viewed.append(request.path)
        return await handle(self, request)

    with (
        mock.patch.object(McpEndpoint, "handle", viewing),
        mock.patch.object(exchange, "answer") as answered,
        mock.patch.object(StreamableHTTPSessionManager, "handle_request") as transported,
    ):
        response = await AsyncClient().generic(
            method, "/mcp", body, content_type=content_type, headers={"Accept": JSON, **headers}
        )
    error = {"code": code, "message": message}
    assert (response.status_code, response.json()) == (status, {"jsonrpc": "2.0", "id": None, "error": error})
    assert not answered.called and not transported.called
    assert viewed == ([] if status == 421 else ["/mcp"])  # Host is answered before the view


async def test_the_view_leaves_the_host_to_django():
    """The guard does not check Host again: a request that reaches the view past Django's
    middleware (here, the view called directly) is answered whatever its Host."""
    request = AsyncRequestFactory().post(
        "/mcp", PING, content_type=JSON, headers={"Accept": JSON, "Host": "evil.example"}
    )
    response = await mcp_endpoint().handle(request)
    assert response.status_code == 200 and json.loads(response.content)["result"] == {}


async def test_other_paths_keep_djangos_answer_to_a_host_it_refuses():
    response = await AsyncClient().get("/healthz", headers={"Host": "evil.example"})
    assert response.status_code == 400


@pytest.mark.parametrize(
    "headers",
    [
        {"Content-Type": "Application/JSON; Charset=UTF-8"},
        {"Content-Type": "application/json"},  # and no Accept at all
        {"Content-Type": "application/json", "Accept": "*/*"},
        {"Content-Type": "application/json", "Accept": "application/*"},
    ],
)
async def test_the_sdk_transport_accepts_what_the_guard_accepted(headers):
    """A notification goes to the SDK's transport, whose own media-type checks are stricter
    (case-sensitive, both media types in `Accept`): they never refuse what the guard let by."""
    notification = json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"})
    content_type = headers.pop("Content-Type")
    with mock.patch.object(
        StreamableHTTPSessionManager,
        "handle_request",
        autospec=True,
        side_effect=StreamableHTTPSessionManager.handle_request,
    ) as transported:
        response = await AsyncClient().post("/mcp", notification, content_type=content_type, headers=headers)
    assert response.status_code == 202 and transported.called
