"""The evidence lines the MCP edge writes (core/exchange.py, and the `Tool call` line's new fields),
as an operator reads them, through the SDK's own client in process (stdio's context) and over
HTTP into the ASGI application:

- an `initialize` answered is `Session started`, with the client's name and version, the protocol
  revision agreed, and the session key the session's later lines carry;
- every `tools/list` answered is `Tools listed` (the second from the listing kept), each tool's
  bytes those of its entry in the wire JSON, the total those of the `tools` array;
- a JSON-RPC error answered is `MCP request refused` with its code;
- an unknown tool name close to a real one is answered with that name (`closest`, "Did you
  mean"), which the call's line names as `suggested`; an invalid argument's path is in
  `argument_paths`.
"""

from __future__ import annotations

import contextlib
import json
import logging
from typing import Any

import mcp_types as types
import orjson
import pytest
from django.test import AsyncClient
from mcp import Client
from mcp.shared.exceptions import MCPError
from mcp_types import Implementation
from starlette.requests import Request

from core.calls import ToolCall
from core.exchange import RequestRefused, SessionStarted, ToolsListed
from governance.client_surface import ClientSurfaces
from protocol import exchange
from protocol.handlers import tools as tools_handlers
from protocol.server import build_server
from protocol.service import build_dispatcher
from protocol.stdio import stdio_context_factory
from tests.conftest import CANARY_KEY
from tests.mcp.test_traces import sdk_client
from tests.support import logs
from tools.context import CallContext
from tools.dispatch import Dispatcher
from tools.registry import default_registry

CLIENT = Implementation(name="evidence-test", version="3.1.4")
JSON = {"Accept": "application/json, text/event-stream"}


@pytest.fixture
def lines(caplog) -> Any:
    """The fields of every line logged with a message, as the server writes them."""
    caplog.set_level(logging.INFO, logger="tools.mcp.requests")
    caplog.set_level(logging.INFO, logger="tools.calls")

    def logged(message: str) -> list[dict[str, Any]]:
        return [logs.fields(record) for record in caplog.records if record.getMessage() == message]

    return logged


def over_http(mode: str = "legacy") -> contextlib.AbstractAsyncContextManager[Any]:
    """The SDK's client over Streamable HTTP, into the ASGI application in this process, named
    `CLIENT` and sending a User-Agent."""
    return sdk_client(mode, {"User-Agent": "evidence-agent/7"}, client_info=CLIENT)


def in_process(config) -> Any:
    """The MCP server as `serve_stdio` builds it (stdio's caller context), without client rules."""
    factory = stdio_context_factory(config, api_key=CANARY_KEY, backend=None)
    return build_server(build_dispatcher(), factory, surfaces=ClientSurfaces(()))


def decoded_by_analytics(line: dict[str, Any], message: str, logger: str) -> None:
    """The line decodes in the analytics as a stored event, its fields all held, when the
    analytics already read these events (the ingestion is built beside this edge)."""
    try:
        from analytics.ingest.decode import FAMILIES, decode
    except ImportError:
        return
    if not any(message in family.messages for family in FAMILIES):
        return
    envelope = {"time": "2026-12-07T12:00:00.000+00:00", "level": "info", "logger": logger, "message": message}
    decoded = decode(orjson.dumps({**envelope, "replica": "r", "pid": 1, **line}))
    assert isinstance(decoded, tuple), decoded
    family, row, unknown_fields = decoded
    assert message in family.messages and unknown_fields is False
    assert getattr(row, "raw", "") == ""  # its columns hold all of it


async def test_a_session_in_process_is_started_listed_and_its_calls_named(config, lines):
    async with Client(in_process(config), mode="legacy", client_info=CLIENT) as client:
        first = (await client.list_tools()).tools
        await client.list_tools()
        await client.call_tool("tomtom-geocod", {"query": "Dam"})

    (started,) = lines(SessionStarted.MESSAGE)
    session = started.pop("session")
    assert isinstance(session, str) and len(session) == 12
    assert started.pop("request_id")
    assert started == {
        "client": "evidence-test",
        "client_version": "3.1.4",
        "protocol_version": "2025-11-25",
        "requested_version": "",
        "transport": "stdio",
        "apps": "text",
        "tenant": None,
        "user_agent": None,
    }
    listed = lines(ToolsListed.MESSAGE)
    assert len(listed) == 2
    for line in listed:
        assert (line["client"], line["transport"], line["session"]) == ("evidence-test", "stdio", session)
        assert line["protocol_version"] == "2025-11-25" and line["backend"] == "tomtom-orbis-maps"
        assert [tool["name"] for tool in line["tools"]] == [tool.name for tool in first]
        assert sum(tool["bytes"] for tool in line["tools"]) < line["bytes"]
    assert listed[0]["tools"] == listed[1]["tools"] and listed[0]["bytes"] == listed[1]["bytes"]
    (call,) = lines(ToolCall.MESSAGE)
    assert (call["outcome"], call["session"], call["protocol_version"]) == ("unknown_tool", session, "2025-11-25")
    assert call["suggested"] == ["tomtom-geocode"]


async def test_over_http_the_session_started_joins_its_later_requests(served, lines):
    async with over_http() as client:
        await client.list_tools()
        result = await client.call_tool("tomtom-geocode", {"query": "Dam"})
    assert result.is_error is False

    (started,) = lines(SessionStarted.MESSAGE)
    (listed,) = lines(ToolsListed.MESSAGE)
    (call,) = lines(ToolCall.MESSAGE)
    assert started["session"] and started["session"] == listed["session"] == call["session"]
    assert (started["client"], started["client_version"]) == ("evidence-test", "3.1.4")
    assert (started["protocol_version"], started["transport"]) == ("2025-11-25", "http")
    assert started["user_agent"] == "evidence-agent/7"
    assert listed["protocol_version"] == call["protocol_version"] == "2025-11-25"
    assert call["outcome"] == "ok" and call["suggested"] is None and call["argument_paths"] is None
    for line, event in ((started, SessionStarted), (listed, ToolsListed), (call, ToolCall)):
        decoded_by_analytics(line, event.MESSAGE, event.LOGGER)


async def post(body: dict[str, Any], version: str | None = "2025-11-25") -> Any:
    """The JSON-RPC answer to `body` posted to `/mcp` (None for a notification's 202)."""
    headers = {**JSON, **({"MCP-Protocol-Version": version} if version else {})}
    response = await AsyncClient().post("/mcp", json.dumps(body), content_type="application/json", headers=headers)
    return response.json() if response.content else None


async def test_each_listing_names_what_each_tool_cost_on_the_wire_the_kept_one_too(served, lines, monkeypatch):
    """The second listing is the one kept (`listing_once`): its bytes are those worked out once."""
    worked_out = []
    of = tools_handlers.WireListing.of
    monkeypatch.setattr(tools_handlers.WireListing, "of", lambda result: worked_out.append(1) or of(result))
    answers = [await post({"jsonrpc": "2.0", "id": n, "method": "tools/list"}) for n in (1, 2)]
    assert answers[0]["result"] == answers[1]["result"]
    assert worked_out == [1]
    wire = answers[0]["result"]["tools"]
    listed = lines(ToolsListed.MESSAGE)
    assert len(listed) == 2
    for line in listed:
        assert line["tools"] == [{"name": tool["name"], "bytes": len(orjson.dumps(tool))} for tool in wire]
        assert line["bytes"] == len(orjson.dumps(wire))
        assert (line["transport"], line["protocol_version"], line["session"]) == ("http", "2025-11-25", None)
        decoded_by_analytics(line, ToolsListed.MESSAGE, ToolsListed.LOGGER)
    assert listed[0]["request_id"] != listed[1]["request_id"]


@pytest.mark.parametrize(
    "body, code",
    [
        ({"jsonrpc": "2.0", "id": 1, "method": "maps/teleport"}, -32601),
        ({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": 5}}, -32602),
    ],
)
async def test_a_json_rpc_error_answered_is_a_request_refused(served, lines, body, code):
    answered = await post(body)
    assert answered["error"]["code"] == code
    (refused,) = lines(RequestRefused.MESSAGE)
    assert refused.pop("request_id")
    assert refused == {
        "method": body["method"],
        "code": code,
        "client": "unknown",  # no session id and no User-Agent
        "protocol_version": "2025-11-25",
        "transport": "http",
        "tenant": None,
        "session": None,
        "error": answered["error"]["message"],
    }
    decoded_by_analytics(refused, RequestRefused.MESSAGE, RequestRefused.LOGGER)


async def test_a_refused_method_is_clipped_and_a_notification_is_never_refused(served, lines):
    await post({"jsonrpc": "2.0", "id": 1, "method": "x" * 500})
    await post({"jsonrpc": "2.0", "method": "notifications/nothing"})
    (refused,) = lines(RequestRefused.MESSAGE)
    assert refused["method"] == "x" * 64 and refused["code"] == -32601


async def test_a_refusal_in_process_names_the_session(config, lines):
    async with Client(in_process(config), mode="legacy", client_info=CLIENT) as client:
        with pytest.raises(MCPError, match="Method not found"):
            await client.session.send_request(types.Request(method="maps/teleport", params=None), types.EmptyResult)
    (started,) = lines(SessionStarted.MESSAGE)
    (refused,) = lines(RequestRefused.MESSAGE)
    assert (refused["method"], refused["code"], refused["transport"]) == ("maps/teleport", -32601, "stdio")
    assert (refused["client"], refused["session"]) == ("evidence-test", started["session"])


def dispatcher_and_context(config) -> tuple[Dispatcher, CallContext]:
    dispatcher = Dispatcher(default_registry())
    return dispatcher, CallContext(config=config, transport="exec", client_name="pytest", protocol_version="2025-06-18")


async def test_an_unknown_name_close_to_a_tool_is_answered_with_it_and_logged_as_suggested(config, lines):
    dispatcher, context = dispatcher_and_context(config)
    from tools.dispatch import log_calls

    logged = Dispatcher(dispatcher.registry, interceptors=(log_calls,))
    outcome = await logged.call("tomtom-routng", {}, context)
    error = outcome.data["error"]
    assert error["code"] == "unknown_tool" and error["closest"] == "tomtom-routing"
    assert error["message"].startswith("No tool is named 'tomtom-routng'. Did you mean tomtom-routing? Valid tools: ")
    far = (await logged.call("weather-now", {}, context)).data["error"]
    assert "closest" not in far and "Did you mean" not in far["message"]
    close, unrelated = lines(ToolCall.MESSAGE)
    assert close["suggested"] == ["tomtom-routing"] and close["protocol_version"] == "2025-06-18"
    assert unrelated["suggested"] is None
    decoded_by_analytics(close, ToolCall.MESSAGE, ToolCall.LOGGER)


async def test_the_arguments_an_invalid_call_failed_on_are_logged(config, lines):
    dispatcher, context = dispatcher_and_context(config)
    from tools.dispatch import log_calls

    logged = Dispatcher(dispatcher.registry, interceptors=(log_calls,))
    one = await logged.call("tomtom-geocode", {"query": "Dam", "limit": 900}, context)
    several = await logged.call("tomtom-geocode", {"quer": "Dam", "limit": 900}, context)
    assert one.data["error"]["argument"] == "limit"
    assert several.data["error"]["total"] == 2
    first, second = lines(ToolCall.MESSAGE)
    assert first["argument_paths"] == ["limit"]
    assert second["argument_paths"] == ["quer", "limit"]
    assert first["suggested"] is None
    decoded_by_analytics(second, ToolCall.MESSAGE, ToolCall.LOGGER)


async def test_argument_paths_are_clipped_and_capped(config, lines):
    dispatcher, context = dispatcher_and_context(config)
    from tools.dispatch import log_calls

    logged = Dispatcher(dispatcher.registry, interceptors=(log_calls,))
    await logged.call("tomtom-geocode", {"query": "Dam", **{f"{n:03d}" + "z" * 300: 1 for n in range(40)}}, context)
    (line,) = lines(ToolCall.MESSAGE)
    paths = line["argument_paths"]
    assert 1 <= len(paths) <= 32 and all(len(path) <= 128 for path in paths)


async def test_on_the_sdk_transport_a_refusal_is_logged_with_the_revision(served, lines):
    """A 2026-07-28 request is answered by the SDK's own transport, not the single-request exchange."""
    async with over_http(mode="2026-07-28") as client:
        with pytest.raises(MCPError, match="Method not found"):
            await client.session.send_request(types.Request(method="maps/teleport", params=None), types.EmptyResult)
    (refused,) = lines(RequestRefused.MESSAGE)
    assert (refused["method"], refused["code"], refused["transport"]) == ("maps/teleport", -32601, "http")
    assert (refused["client"], refused["protocol_version"]) == ("evidence-test", "2026-07-28")
    assert lines(SessionStarted.MESSAGE) == []  # that revision has no `initialize`


async def test_a_failure_outside_the_middleware_is_refused_once_through_the_exchange(config, lines):
    """An error the middleware chain never saw (here a middleware outside `logged` vetoes the
    request) is passed to the exchange's `refused`; one the chain saw is not passed again."""
    server = in_process(config)

    async def veto(ctx: Any, call_next: Any) -> Any:
        return types.ErrorData(code=-32042, message="vetoed") if ctx.method == "ping" else await call_next(ctx)

    server.middleware.insert(0, veto)
    refusals: list[tuple[str, int]] = []
    request = Request({"type": "http", "headers": [], "state": {}})
    for method, code in (("ping", -32042), ("maps/teleport", -32601)):
        message = types.JSONRPCRequest(jsonrpc="2.0", id=1, method=method)
        body = await exchange.answer(
            server, request, message, "2025-11-25", {}, lambda method, error: refusals.append((method, error.code))
        )
        assert orjson.loads(body)["error"]["code"] == code
    assert refusals == [("ping", -32042)]
    (inside,) = lines(RequestRefused.MESSAGE)
    assert (inside["method"], inside["code"]) == ("maps/teleport", -32601)


async def test_a_tool_outside_a_tenants_allow_list_is_answered_with_the_closest_it_may_call(config, lines):
    from protocol.tenancy import enforce_terms, filter_listing
    from tools.context import TenantTerms
    from tools.dispatch import log_calls

    dispatcher = Dispatcher(
        default_registry(), interceptors=(log_calls, enforce_terms), listing_filters=(filter_listing,)
    )
    terms = TenantTerms(allowed_tools=frozenset({"tomtom-ev-routing", "tomtom-geocode"}))
    context = CallContext(config=config, transport="http", client_name="pytest", widgets=False, terms=terms)
    error = (await dispatcher.call("tomtom-routing", {}, context)).data["error"]
    assert error["code"] == "unknown_tool" and error["closest"] == "tomtom-ev-routing"
    assert "is available to your organisation. Did you mean tomtom-ev-routing? Valid tools: " in error["message"]
    (call,) = lines(ToolCall.MESSAGE)
    assert call["suggested"] == ["tomtom-ev-routing"]
