"""`/mcp` over HTTP, through a real server process on loopback.

The SDK's own HTTP client drives the happy paths; raw HTTP drives the bad input, since a good
client never sends it. TomTom is the loopback stub.
"""

import base64
import json
import socket

import httpx
import pytest
from mcp_types import Implementation

from tests.conftest import CANARY_KEY, data, http_client, server_process
from tests.support.tomtom_stub import TomTomStub

JSON_HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}},
}


@pytest.fixture(scope="module")
def module_stub():
    with TomTomStub() as stub:
        yield stub


@pytest.fixture(scope="module")
def server(module_stub):
    env = {"TOMTOM_API_BASE_URL": module_stub.base_url, "MCP_ALLOWED_ORIGINS": "https://host.example"}
    with server_process(env) as base:
        yield base


def post(server: str, message, headers=None, **kwargs) -> httpx.Response:
    body = message if isinstance(message, (bytes, str)) else json.dumps(message)
    return httpx.post(server + "/mcp", content=body, headers={**JSON_HEADERS, **(headers or {})}, **kwargs)


async def test_sdk_client_handshake_lists_and_calls(server, module_stub):
    module_stub.route("GET", r"/maps/orbis/places/geocode", json_body=data("geocode_v2.json"))
    info = Implementation(name="Claude Test/2 ü", version="1.0")
    async with http_client(server + "/mcp", mode="legacy", client_info=info) as client:
        assert client.server_info.name == "tomtom-maps-mcp"
        assert client.server_info.version == "0.1.0"
        assert "TomTom" in client.instructions
        tools = (await client.list_tools()).tools
        assert {"tomtom-geocode", "tomtom-routing", "tomtom-traffic"} <= {t.name for t in tools}
        for tool in tools:
            assert tool.title
            if tool.name in {"tomtom-geocode", "tomtom-routing", "tomtom-traffic"}:
                assert tool.annotations.read_only_hint is True
                assert tool.annotations.destructive_hint is False
                # Meaningless for a read-only tool, and open world by default (the specification's rules)
                assert tool.annotations.idempotent_hint is None
                assert tool.annotations.open_world_hint is None
        result = await client.call_tool("tomtom-geocode", {"query": "Dam 1"})
    assert result.is_error is False
    assert json.loads(result.content[0].text)["results"][0]["position"] == [4.89273, 52.37314]
    sent = module_stub.requests[-1]
    assert sent.headers["tomtom-user-agent"] == "TomTomMCPSDKHttp/0.1.0 Claude%20Test%2F2%20%C3%BC"
    assert sent.api_key == CANARY_KEY


async def test_sessionless_2026_revision(server, module_stub):
    module_stub.route("GET", r"/maps/orbis/places/geocode", json_body=data("geocode_v2.json"))
    async with http_client(server + "/mcp", client_info=Implementation(name="modern", version="1")) as client:
        assert client.protocol_version == "2026-07-28"
        result = await client.call_tool("tomtom-geocode", {"query": "Dam"})
    assert not result.is_error
    assert module_stub.requests[-1].headers["tomtom-user-agent"].endswith(" modern")


@pytest.mark.parametrize("version", ["2025-03-26", "2025-06-18", "2025-11-25"])
def test_handshake_revisions(server, version):
    message = {**INITIALIZE, "params": {**INITIALIZE["params"], "protocolVersion": version}}
    response = post(server, message)
    assert response.status_code == 200
    assert response.json()["result"]["protocolVersion"] == version


def test_healthz(server):
    assert httpx.get(server + "/healthz").json() == {"status": "ok", "name": "tomtom-maps-mcp", "version": "0.1.0"}


def jsonrpc_error(response: httpx.Response) -> dict:
    return response.json()["error"]


def test_malformed_json_is_a_parse_error(server):
    assert jsonrpc_error(post(server, b'{"jsonrpc": "2.0", "id": 1, "method":'))["code"] == -32700


def test_unknown_method(server):
    assert jsonrpc_error(post(server, {"jsonrpc": "2.0", "id": 1, "method": "maps/teleport"}))["code"] == -32601


def test_bad_params_name_the_path(server):
    error = jsonrpc_error(post(server, {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": 5}}))
    assert error["code"] == -32602
    assert error["data"]["path"] == "params.name"
    assert "params.name" in error["message"]


def test_unknown_tool_lists_valid_names(server):
    response = post(server, {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "tomtom-teleport"}})
    result = response.json()["result"]
    assert result["isError"] is True
    error = json.loads(result["content"][0]["text"])["error"]
    assert error["code"] == "unknown_tool"
    assert "tomtom-geocode" in error["tools"] and "tomtom-geocode" in error["message"]


@pytest.mark.parametrize(
    ("method", "headers", "body", "status"),
    [
        ("POST", {"Content-Type": "text/plain"}, b"{}", 415),
        ("POST", {"Accept": "text/html"}, b"{}", 406),
        ("POST", {"Host": "evil.example"}, b"{}", 421),
        ("POST", {"Origin": "https://evil.example"}, b"{}", 403),
        ("POST", {}, b"[" + b" " * (1024 * 1024) + b"]", 413),
        ("GET", {}, b"", 405),
        ("DELETE", {}, b"", 405),
        ("POST", {"tomtom-maps-backend": "bing"}, json.dumps(INITIALIZE).encode(), 400),
    ],
)
def test_transport_safety(server, method, headers, body, status):
    response = httpx.request(method, server + "/mcp", content=body, headers={**JSON_HEADERS, **headers})
    assert response.status_code == status
    if status == 405:
        assert response.headers["allow"] == "POST"
    assert "Traceback" not in response.text


def test_a_request_that_names_no_host_is_refused_as_one_that_names_another(server):
    """HTTP/1.1 requires `Host`; without it Django would judge the server's own address (always
    allowed), so the DNS-rebinding check would never see the name the client asked for."""
    url = httpx.URL(server)
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"}).encode()
    head = (
        "POST /mcp HTTP/1.1\r\nContent-Type: application/json\r\nAccept: application/json\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    )
    with socket.create_connection((url.host, url.port), timeout=10) as conn:
        conn.sendall(head.encode() + body)
        answer = b""
        while chunk := conn.recv(65536):
            answer += chunk
    status_line, _, rest = answer.partition(b"\r\n")
    assert status_line.split()[1] == b"421"
    assert b'"message": "Host not allowed"' in rest


def test_cors_for_an_allowed_browser_origin(server):
    preflight = httpx.options(
        server + "/mcp",
        headers={"Origin": "https://host.example", "Access-Control-Request-Method": "POST"},
    )
    assert preflight.status_code == 204
    assert preflight.headers["access-control-allow-origin"] == "https://host.example"
    assert "tomtom-api-key" in preflight.headers["access-control-allow-headers"]
    response = post(server, INITIALIZE, {"Origin": "https://host.example"})
    assert response.headers["access-control-allow-origin"] == "https://host.example"
    assert "Mcp-Session-Id" in response.headers["access-control-expose-headers"]


def test_backend_header_picks_tomtom_maps(server, module_stub):
    module_stub.route("GET", r"/search/2/geocode/.*", json_body=data("geocode.json"))
    call = {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "tools/call",
        "params": {"name": "tomtom-geocode", "arguments": {"query": "Dam"}},
    }
    response = post(server, call, {"tomtom-maps-backend": "tomtom-maps"})
    assert response.json()["result"]["isError"] is False
    assert module_stub.requests[-1].path == "/search/2/geocode/Dam.json"


def test_upstream_metadata_names_the_client(server):
    response = post(server, INITIALIZE, {"tomtom-api-key": "callers-own-key"})
    metadata = json.loads(base64.b64decode(response.headers["tomtom-upstream-metadata"]))
    assert metadata == {"client": "raw", "auth_method": "tomtom-api-key"}


def test_no_request_crashed_the_worker(server):
    # Runs after the bad-input tests above (same module server): still healthy, no traceback logged.
    assert httpx.get(server + "/healthz").status_code == 200
    assert post(server, INITIALIZE).status_code == 200


def test_hosted_server_never_spends_its_own_key(module_stub):
    module_stub.route("GET", r"/maps/orbis/places/geocode", json_body=data("geocode_v2.json"))
    call = {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "tools/call",
        "params": {"name": "tomtom-geocode", "arguments": {"query": "Dam"}},
    }
    with server_process({"TOMTOM_API_BASE_URL": module_stub.base_url, "MCP_HOSTED": "true"}) as base:
        refused = post(base, call).json()["result"]
        accepted = post(base, call, {"Authorization": "Bearer callers-own-key"}).json()["result"]
    error = json.loads(refused["content"][0]["text"])["error"]
    assert error["code"] == "unauthorized"
    assert "tomtom-api-key" in error["message"] and "TOMTOM_API_KEY" not in error["message"]
    assert accepted["isError"] is False
    assert module_stub.requests[-1].api_key == "callers-own-key"
