"""One stateless JSON-RPC request answered by the SDK's kernel directly (protocol.exchange)
answers exactly as the SDK's stateless transport does for the same POST."""

import json
import re

import pytest
from django.test import AsyncClient

from protocol import exchange

JSON = {"content_type": "application/json", "headers": {"Accept": "application/json, text/event-stream"}}
LEGACY = ("2025-06-18", "2025-11-25")
BODIES = [
    {"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
    {"jsonrpc": "2.0", "id": "a", "method": "ping"},
    {"jsonrpc": "2.0", "id": 2, "method": "resources/list"},
    {"jsonrpc": "2.0", "id": 3, "method": "no/such/method"},
    {"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"arguments": {}}},
    {"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "tomtom-nothing", "arguments": {}}},
    {"jsonrpc": "2.0", "id": 6, "method": "tools/call", "params": {"name": "tomtom-geocode", "arguments": {}}},
    {"jsonrpc": "2.0", "id": 7, "method": "resources/read", "params": {"uri": "ui://nothing"}},
    {
        "jsonrpc": "2.0",
        "id": 8,
        "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
    },
]


async def answer(body: dict, version: str | None) -> tuple[int, str, dict]:
    headers = dict(JSON["headers"])
    if version is not None:
        headers["MCP-Protocol-Version"] = version
    response = await AsyncClient().post("/mcp", json.dumps(body), content_type="application/json", headers=headers)
    return response.status_code, response.headers["Content-Type"], response.json()


def same_but_the_call(answered: tuple[int, str, dict]) -> tuple[int, str, dict]:
    """`answered` without its call's own request id: an error result of a tool a widget draws
    names its call in `_meta` (protocol.appdata.name_errors), and each call has its own."""
    status, content_type, body = answered
    meta = body.get("result", {}).get("_meta", {})
    if "request_id" in meta:
        assert re.fullmatch(r"[0-9a-f]{16}", meta.pop("request_id"))
    return status, content_type, body


@pytest.mark.parametrize("version", [None, *LEGACY])
@pytest.mark.parametrize("body", BODIES, ids=[f"{b['method']}-{b['id']}" for b in BODIES])
async def test_the_short_path_answers_as_the_sdk_transport_does(body, version, monkeypatch):
    taken = []
    original = exchange.single_request

    def spy(message: dict, protocol_version: str | None):
        request = original(message, protocol_version)
        taken.append(request is not None)
        return request

    monkeypatch.setattr(exchange, "single_request", spy)
    short = await answer(body, version)
    assert taken == [True]
    monkeypatch.setattr(exchange, "single_request", lambda message, protocol_version: None)
    assert same_but_the_call(short) == same_but_the_call(await answer(body, version))


@pytest.mark.parametrize(
    "message, version",
    [
        ({"jsonrpc": "2.0", "method": "notifications/initialized"}, None),
        ({"jsonrpc": "2.0", "id": 1, "result": {}}, None),
        ({"jsonrpc": "2.0", "id": 1, "method": "ping", "params": 5}, None),
        ({"jsonrpc": "2.0", "id": 1, "method": "ping"}, "2026-07-28"),
    ],
)
def test_everything_else_is_left_to_the_sdk_transport(message, version):
    """A decoded message that is not one handshake-era request (batches and unreadable bodies
    never get this far: protocol.body refuses them)."""
    assert exchange.single_request(message, version) is None
