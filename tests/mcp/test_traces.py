"""Traces (docs/adr/0035-traces.md): a tool call over `/mcp`, through the SDK's own client, is
three linked spans with OpenTelemetry's MCP, tool and HTTP attributes, and never a secret."""

from __future__ import annotations

import contextlib
import json
import logging
import os
import subprocess
import sys
import threading
from collections.abc import AsyncIterator, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from django.test import AsyncClient
from mcp_types import Implementation
from opentelemetry.trace import SpanKind, StatusCode

from core import calls
from core.events import ENVELOPE
from core.logging import TRACE_CONTEXT, JsonLinesFormatter
from protocol import http
from tests.conftest import CANARY_KEY, REPO, data
from tests.mcp.conftest import GEOCODE_PATH
from tests.support.traces import everything_recorded, named, recording
from tools import tracing

TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
PARENT_ID = "00f067aa0ba902b7"
MODES = ["legacy", "2026-07-28"]
"""The handshake era (answered by protocol/exchange.py) and the sessionless revision (the SDK's
own transport, whose handler runs in a task of its own)."""


@pytest.fixture
def spans():
    yield from recording()


@contextlib.asynccontextmanager
async def sdk_client(
    mode: str, headers: dict[str, str], client_info: Implementation | None = None
) -> AsyncIterator[Any]:
    """The SDK's client over Streamable HTTP, into the ASGI application in this process (named
    `client_info`, else `trace-test`)."""
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    from tomtom_mcp.asgi import application

    mounts = {"http://testserver": httpx2.ASGITransport(app=application)}
    info = client_info or Implementation(name="trace-test", version="1")
    async with (
        httpx2.AsyncClient(headers=headers, mounts=mounts, timeout=30) as client,
        Client(streamable_http_client("http://testserver/mcp", http_client=client), mode=mode, client_info=info) as c,
    ):
        yield c


def traceparent(trace_id: str = TRACE_ID, parent_id: str = PARENT_ID) -> dict[str, str]:
    return {"traceparent": f"00-{trace_id}-{parent_id}-01"}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("key", ["tomtom-api-key", "authorization"])
async def test_a_tool_call_is_three_linked_spans_with_their_attributes(spans, served, mode, key):
    headers = {"tomtom-api-key": CANARY_KEY} if key == "tomtom-api-key" else {"Authorization": f"Bearer {CANARY_KEY}"}
    async with sdk_client(mode, headers) as client:
        result = await client.call_tool("tomtom-geocode", {"query": "Dam"}, meta=traceparent())
    assert result.is_error is False
    assert served.requests[-1].api_key == CANARY_KEY  # the key did reach TomTom

    recorded = spans()
    [server] = named(recorded, "tools/call tomtom-geocode")
    [tool] = named(recorded, "execute_tool tomtom-geocode")
    [upstream] = named(recorded, "GET")
    assert (server.kind, tool.kind, upstream.kind) == (SpanKind.SERVER, SpanKind.INTERNAL, SpanKind.CLIENT)
    # One trace, the caller's: its span (from params._meta) -> server -> tool -> TomTom request.
    assert {f"{span.context.trace_id:032x}" for span in (server, tool, upstream)} == {TRACE_ID}
    assert f"{server.parent.span_id:016x}" == PARENT_ID
    assert tool.parent.span_id == server.context.span_id
    assert upstream.parent.span_id == tool.context.span_id

    attributes = dict(server.attributes)
    assert attributes.pop("jsonrpc.request.id").isdigit()
    assert attributes.pop("client.address") == "127.0.0.1"
    assert isinstance(attributes.pop("client.port"), int)
    assert attributes.pop("mcp.protocol.version") == ("2025-11-25" if mode == "legacy" else mode)
    session = attributes.pop("mcp.session.id", None)
    assert attributes == {
        "mcp.method.name": "tools/call",
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "tomtom-geocode",
        "network.transport": "tcp",
        "network.protocol.name": "http",
        "network.protocol.version": "1.1",
        "user_agent.original": attributes["user_agent.original"],
        "tomtom_mcp.client.name": "trace-test",
    }
    assert server.status.status_code is StatusCode.UNSET
    if mode == "legacy":  # a session: named by its nonce, never by the signed id a client could replay
        assert session and "." not in session and len(session) == 12
    else:
        assert session is None

    attributes = dict(tool.attributes)
    assert len(attributes.pop("tomtom_mcp.request_id")) == 16
    assert attributes == {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "tomtom-geocode",
        "tomtom_mcp.client.name": "trace-test",
        "tomtom_mcp.transport": "http",
        "tomtom_mcp.backend": "tomtom-orbis-maps",
        "tomtom_mcp.outcome": "ok",
        "tomtom_mcp.upstream_calls": 1,
    }

    attributes = dict(upstream.attributes)
    url = attributes.pop("url.full")
    assert url == f"{served.base_url}/maps/orbis/places/geocode?query=Dam&maxResults=10"  # the key is in a header
    assert CANARY_KEY not in url and "key=" not in url
    assert attributes == {
        "http.request.method": "GET",
        "server.address": "127.0.0.1",
        "server.port": served.port,
        "http.response.status_code": 200,
    }

    assert CANARY_KEY not in everything_recorded(recorded)


async def test_every_request_of_a_session_is_a_span_and_the_session_id_never_is(spans, served):
    async with sdk_client("legacy", {"tomtom-api-key": CANARY_KEY}) as client:
        await client.list_tools()
        await client.call_tool("tomtom-geocode", {"query": "Dam"})
    recorded = spans()
    servers = [span for span in recorded if span.kind is SpanKind.SERVER]
    assert [span.name for span in servers] == [
        "initialize",
        "notifications/initialized",
        "tools/list",
        "tools/call tomtom-geocode",
    ]
    sessions = {span.attributes.get("mcp.session.id") for span in servers}
    assert len(sessions) == 1 and None not in sessions  # minted at initialize, read back after
    assert "jsonrpc.request.id" not in servers[1].attributes  # a notification has no id
    assert len({span.context.trace_id for span in servers}) == 4  # no caller context: each its own trace


async def test_failures_are_recorded_on_each_span_with_the_outcome(spans, served):
    served.route("GET", GEOCODE_PATH, status=503, json_body={"errorText": f"busy; key={CANARY_KEY}"}, times=1)
    served.route("GET", r"/maps/orbis/places/reverseGeocode", status=403, json_body={"detailedError": {}})
    async with sdk_client("legacy", {"tomtom-api-key": CANARY_KEY}) as client:
        retried = await client.call_tool("tomtom-geocode", {"query": "Dam"})
        refused = await client.call_tool("tomtom-reverse-geocode", {"position": [4.9, 52.37]})
        invalid = await client.call_tool("tomtom-geocode", {"query": "Dam", "nonsense": 1})
    assert (retried.is_error, refused.is_error, invalid.is_error) == (False, True, True)
    recorded = spans()

    first, second = named(recorded, "GET")[:2]  # a 503, then the retry that was answered
    assert (first.attributes["error.type"], first.status.status_code) == ("503", StatusCode.ERROR)
    assert second.attributes["http.request.resend_count"] == 1
    assert second.status.status_code is StatusCode.UNSET
    assert "http.request.resend_count" not in first.attributes

    [tool] = named(recorded, "execute_tool tomtom-reverse-geocode")
    assert tool.attributes["tomtom_mcp.outcome"] == tool.attributes["error.type"] == "unauthorized"
    assert tool.status.status_code is StatusCode.ERROR
    assert tool.status.description.startswith("TomTom refused the API key")
    [upstream] = [span for span in named(recorded, "GET") if span.parent.span_id == tool.context.span_id]
    assert upstream.attributes["error.type"] == "403"
    [server] = named(recorded, "tools/call tomtom-reverse-geocode")
    assert server.attributes["error.type"] == "tool_error"
    assert server.status.status_code is StatusCode.ERROR

    [invalid_call] = [
        span
        for span in named(recorded, "execute_tool tomtom-geocode")
        if span.attributes["tomtom_mcp.outcome"] == "invalid_arguments"
    ]
    assert invalid_call.attributes["tomtom_mcp.upstream_calls"] == 0
    assert "nonsense" in invalid_call.status.description
    assert CANARY_KEY not in everything_recorded(recorded)


async def test_a_json_rpc_error_and_an_unknown_tool_name(spans, served):
    post = {"content_type": "application/json", "headers": {"Accept": "application/json"}}
    bad = {"jsonrpc": "2.0", "id": "b-1", "method": "tools/call", "params": {"arguments": {}}}
    unknown = {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "x" * 500, "arguments": {}}}
    assert "error" in (await AsyncClient().post("/mcp", json.dumps(bad), **post)).json()
    assert (await AsyncClient().post("/mcp", json.dumps(unknown), **post)).json()["result"]["isError"] is True
    recorded = spans()

    invalid, called = [span for span in recorded if span.kind is SpanKind.SERVER]
    assert invalid.name == "tools/call"
    assert invalid.attributes["jsonrpc.request.id"] == "b-1"
    assert invalid.attributes["error.type"] == invalid.attributes["rpc.response.status_code"] == "-32602"
    assert invalid.status.status_code is StatusCode.ERROR
    # A name the registry does not know stays out of span names (they stay few), cut in attributes.
    assert called.name == "tools/call"
    assert called.attributes["gen_ai.tool.name"] == "x" * 128
    [tool] = [span for span in recorded if span.kind is SpanKind.INTERNAL]
    assert (tool.name, tool.attributes["error.type"]) == ("execute_tool", "unknown_tool")


async def test_a_sign_in_refusal_is_the_span_of_a_request_never_answered(spans, served, settings):
    settings.MCP_AUTH = ["oauth"]
    settings.OAUTH_ISSUER = "https://issuer.example"
    settings.OAUTH_JWKS_URL = "https://issuer.example/jwks"
    settings.OAUTH_RESOURCE = "http://testserver/mcp"
    http.mcp_endpoint.cache_clear()
    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "tomtom-geocode"}}
    headers = {"Accept": "application/json", "Authorization": "Bearer not-a-jwt-" + CANARY_KEY}
    response = await AsyncClient().post("/mcp", json.dumps(message), content_type="application/json", headers=headers)
    assert response.status_code == 401
    [server] = spans()
    assert server.name == "tools/call tomtom-geocode"
    assert (server.attributes["error.type"], server.status.status_code) == ("401", StatusCode.ERROR)
    assert CANARY_KEY not in everything_recorded([server])


async def test_in_process_the_middleware_makes_the_server_span(spans, stub, config):
    """stdio and in-process clients have no `/mcp` edge: the SDK middleware starts the span."""
    from mcp import Client

    from protocol.server import build_server
    from protocol.service import build_dispatcher
    from protocol.stdio import stdio_context_factory

    stub.route("GET", GEOCODE_PATH, json_body=data("geocode_v2.json"))
    server = build_server(build_dispatcher(), stdio_context_factory(config, api_key=CANARY_KEY, backend=None))
    info = Implementation(name="desktop", version="1")
    async with Client(server, mode="legacy", client_info=info) as client:
        await client.call_tool("tomtom-geocode", {"query": "Dam"}, meta=traceparent())
    recorded = spans()
    [server_span] = named(recorded, "tools/call tomtom-geocode")
    [tool] = named(recorded, "execute_tool tomtom-geocode")
    assert f"{server_span.parent.span_id:016x}" == PARENT_ID
    assert tool.parent.span_id == server_span.context.span_id
    assert tool.attributes["tomtom_mcp.transport"] == "stdio"
    assert CANARY_KEY not in everything_recorded(recorded)


@contextlib.contextmanager
def call_log() -> Iterator[list[dict[str, Any]]]:
    """The `tools.calls` lines, formatted as they are logged (as the server's stderr handler does:
    the trace context is the one current when the record is logged)."""
    lines: list[dict[str, Any]] = []

    class Capture(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            lines.append(json.loads(self.format(record)))

    handler = Capture()
    handler.setFormatter(JsonLinesFormatter())
    logger = logging.getLogger(calls.LOGGER)
    level = logger.level
    logger.setLevel(logging.INFO)
    logger.addHandler(handler)
    try:
        yield lines
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)


@pytest.mark.parametrize("mode", MODES)
async def test_a_tool_calls_log_line_carries_the_ids_of_its_span(spans, served, mode):
    """Both ways: the `Tool call` line names the trace and the `execute_tool` span it was logged in,
    and that span names the line's `request_id`."""
    with call_log() as lines:
        async with sdk_client(mode, {"tomtom-api-key": CANARY_KEY}) as client:
            await client.call_tool("tomtom-geocode", {"query": "Dam"}, meta=traceparent())
    [line] = [line for line in lines if line["message"] == calls.ToolCall.MESSAGE]
    [tool] = named(spans(), "execute_tool tomtom-geocode")

    assert list(line)[: len(ENVELOPE) + 2] == [*ENVELOPE, *TRACE_CONTEXT]
    assert line["trace_id"] == f"{tool.context.trace_id:032x}" == TRACE_ID
    assert line["span_id"] == f"{tool.context.span_id:016x}"
    assert line["request_id"] == tool.attributes["tomtom_mcp.request_id"]


async def test_with_traces_off_a_log_line_has_no_trace_context(served):
    assert tracing.tracer() is None
    with call_log() as lines:
        async with sdk_client("legacy", {"tomtom-api-key": CANARY_KEY}) as client:
            await client.call_tool("tomtom-geocode", {"query": "Dam"}, meta=traceparent())
    [line] = [line for line in lines if line["message"] == calls.ToolCall.MESSAGE]

    assert list(line)[: len(ENVELOPE) + 1] == [*ENVELOPE, "tool"]
    assert not set(TRACE_CONTEXT) & set(line)


def test_a_line_carries_the_ids_only_inside_a_recording_span(spans):
    tracer = tracing.tracer()
    assert tracer is not None
    with call_log() as lines:
        logging.getLogger(calls.LOGGER).info("outside any span")
        with tracer.start_as_current_span("work") as span:
            logging.getLogger(calls.LOGGER).info("inside")
        logging.getLogger(calls.LOGGER).info("after it ended")
    outside, inside, after = lines

    assert not set(TRACE_CONTEXT) & (set(outside) | set(after))
    context = span.get_span_context()
    assert (inside["trace_id"], inside["span_id"]) == (f"{context.trace_id:032x}", f"{context.span_id:016x}")
    tracing.shutdown()  # off again: the hook is gone with the provider
    with call_log() as lines:
        logging.getLogger(calls.LOGGER).info("off")
    assert not set(TRACE_CONTEXT) & set(lines[0])


@pytest.fixture
def sampled_out(monkeypatch):
    monkeypatch.setenv("OTEL_TRACES_SAMPLER", "always_off")
    yield from recording()


def test_a_span_the_sampler_dropped_puts_no_ids_on_a_line(sampled_out):
    tracer = tracing.tracer()
    assert tracer is not None
    with call_log() as lines, tracer.start_as_current_span("sampled out") as span:
        logging.getLogger(calls.LOGGER).info("inside")
    assert not span.is_recording() and span.get_span_context().is_valid
    assert not set(TRACE_CONTEXT) & set(lines[0])
    assert sampled_out() == ()


PROCESS = """
import asyncio, json, sys, threading
import django
django.setup()
from tools import tracing
from protocol.config import server_config
from tools.context import CallContext
from protocol.service import build_dispatcher
from tools.tomtom.client import closing_shared_clients

context = CallContext(config=server_config(), transport="exec")
outcome = asyncio.run(closing_shared_clients(build_dispatcher().call("tomtom-geocode", {"query": "Dam"}, context)))
print(json.dumps({"error": outcome.is_error, "tracer": tracing.tracer() is not None,
                  "sdk": sorted(m for m in sys.modules if m.startswith("opentelemetry.sdk")),
                  "threads": sorted(t.name for t in threading.enumerate())}))
"""


def run_process(stub: Any, **env: str) -> dict[str, Any]:
    """One tool call in a fresh server process (as `mcp_exec` makes it), and what it then holds."""
    environment = {key: value for key, value in os.environ.items() if not key.startswith(("OTEL_", "TRACES_"))}
    environment.update(
        DJANGO_SETTINGS_MODULE="tomtom_mcp.settings",
        DOTENV_PATH="/nonexistent",
        LOG_LEVEL="ERROR",
        TOMTOM_API_BASE_URL=stub.base_url,
        TOMTOM_API_KEY=CANARY_KEY,
        **env,
    )
    done = subprocess.run(
        [sys.executable, "-c", PROCESS], cwd=REPO, env=environment, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


def test_off_by_default_no_sdk_is_loaded_and_no_exporter_starts(stub):
    stub.route("GET", GEOCODE_PATH, json_body=data("geocode_v2.json"))
    held = run_process(stub)
    assert held["error"] is False
    assert held["tracer"] is False
    assert held["sdk"] == []
    assert not [name for name in held["threads"] if name.startswith("OtelBatch")]


class Collector:
    """An OTLP/HTTP collector stand-in on loopback: keeps every request's path, headers and body."""

    def __init__(self) -> None:
        received = self.received = []

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                received.append((self.path, {k.lower(): v for k, v in self.headers.items()}, body))
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def test_on_spans_are_exported_over_otlp_http_when_the_process_ends(stub):
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    stub.route("GET", GEOCODE_PATH, json_body=data("geocode_v2.json"))
    collector = Collector()
    try:
        held = run_process(
            stub,
            TRACES_ENABLED="true",
            OTEL_EXPORTER_OTLP_ENDPOINT=collector.url + "/otlp",
            OTEL_SERVICE_NAME="maps-eu-1",
        )
    finally:
        collector.close()
    assert held["error"] is False and held["tracer"] is True
    assert [name for name in held["threads"] if name.startswith("OtelBatch")]
    [(path, headers, body)] = collector.received
    assert path == "/otlp/v1/traces"
    assert headers["content-type"] == "application/x-protobuf"
    assert CANARY_KEY.encode() not in body
    export = ExportTraceServiceRequest.FromString(body)
    [resource] = export.resource_spans
    assert {a.key: a.value.string_value for a in resource.resource.attributes}["service.name"] == "maps-eu-1"
    names = sorted(span.name for scope in resource.scope_spans for span in scope.spans)
    assert names == ["GET", "execute_tool tomtom-geocode"]  # exec: no MCP request, the tool span is the root


def test_traces_on_without_the_sdk_say_which_extra_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "opentelemetry.sdk.trace", None)  # as if not installed
    with pytest.raises(RuntimeError, match=r"install the `traces` extra \(pip install 'tomtom-maps-mcp\[traces\]'\)"):
        tracing.configure(tracing.TraceSettings(enabled=True))
    assert tracing.tracer() is None


@pytest.mark.parametrize(("queue", "batch"), [(2048, 0), (100, 512), (100_000, 512)])
def test_the_export_batches_are_bounded(queue, batch):
    with pytest.raises(ValueError, match="OTEL_BSP_MAX_EXPORT_BATCH_SIZE must be at least 1 and at most"):
        tracing.TraceSettings(enabled=True, max_queue_size=queue, max_export_batch_size=batch)
