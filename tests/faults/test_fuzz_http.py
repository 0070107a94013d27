"""A raw-body fuzz of `/mcp`: whatever the body, the answer is a JSON-RPC answer or error, never
a 5xx, and neither the response nor the server log carries a traceback.

Bodies go to the Django view through `AsyncClient`, on one event loop for a whole hypothesis
run; a subset goes to a real server process, whose log is read too. Hypothesis runs
derandomized with a bounded number of examples, so a CI run is fast and the same every time.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx
import pytest
from django.conf import settings
from django.test import AsyncClient
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from tests.conftest import server_process

HEADERS = {"Accept": "application/json, text/event-stream"}
VERSION = "2025-11-25"
PING = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": VERSION, "capabilities": {}, "clientInfo": {"name": "fuzz", "version": "1"}},
}
CALL = {
    "jsonrpc": "2.0",
    "id": 2,
    "method": "tools/call",
    "params": {"name": "tomtom-geocode", "arguments": {"query": "Dam 1, Amsterdam"}},
}
LIST = {"jsonrpc": "2.0", "id": "list", "method": "tools/list"}
VALID = [PING, INITIALIZE, CALL, LIST]
FUZZ = hypothesis_settings(
    derandomize=True,
    database=None,
    deadline=None,
    max_examples=150,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def encode(message: Any) -> bytes:
    return json.dumps(message).encode()


class Collected(logging.Handler):
    """Every record at WARNING or above, from any logger."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)

    def tracebacks(self) -> list[str]:
        return [
            record.getMessage()
            for record in self.records
            if record.exc_info or record.levelno >= logging.ERROR or "Traceback" in record.getMessage()
        ]


@contextmanager
def server_log() -> Iterator[Collected]:
    handler = Collected()
    root = logging.getLogger()
    root.addHandler(handler)
    try:
        yield handler
    finally:
        root.removeHandler(handler)


class Endpoint:
    """`/mcp` through Django's test client, on one event loop for many requests."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.client = AsyncClient(raise_request_exception=False)
        self.statuses: dict[int, int] = {}

    def post(self, body: bytes, headers: dict[str, str] | None = None) -> Any:
        response = self.loop.run_until_complete(
            self.client.post("/mcp", body, content_type="application/json", headers={**HEADERS, **(headers or {})})
        )
        assert response.status_code < 500, (body[:200], response.status_code, response.content[:500])
        assert b"Traceback" not in response.content
        self.statuses[response.status_code] = self.statuses.get(response.status_code, 0) + 1
        if response.status_code != 202:
            answer = response.json()
            assert answer["jsonrpc"] == "2.0"
            assert ("result" in answer) != ("error" in answer)
        return response

    def close(self) -> None:
        self.loop.close()


@pytest.fixture
def endpoint() -> Iterator[Endpoint]:
    running = Endpoint()
    with server_log() as log:
        yield running
    running.close()
    assert log.tracebacks() == []


def error_of(response: Any) -> dict[str, Any]:
    answer = response.json()
    assert answer["id"] is None
    return answer["error"]


# --- the cases the issue names ------------------------------------------------------------------

ODD_IDS = {
    "fraction": b"1.5",
    "integral fraction": b"1.0",
    "exponent": b"1e3",
    "NaN": b"NaN",
    "Infinity": b"Infinity",
    "-Infinity": b"-Infinity",
    "overflowing": b"1e400",
    "true": b"true",
    "object": b'{"a": 1}',
    "array": b"[1]",
    "null": b"null",
}


@pytest.mark.parametrize("method", ["ping", "tools/list", "initialize"])
@pytest.mark.parametrize("raw_id", ODD_IDS.values(), ids=ODD_IDS.keys())
def test_an_id_that_is_not_a_string_or_an_integer_is_an_invalid_request(endpoint, method, raw_id):
    params = b', "params": ' + encode(INITIALIZE["params"]) if method == "initialize" else b""
    body = b'{"jsonrpc": "2.0", "id": %s, "method": "%s"%s}' % (raw_id, method.encode(), params)
    response = endpoint.post(body)
    assert response.status_code == 400
    error = error_of(response)
    assert error["code"] == -32600
    assert "`id` must be a string or an integer" in error["message"]
    assert "Mcp-Session-Id" not in response.headers


@pytest.mark.parametrize("request_id", [0, -1, 2**53 + 1, 10**100, "", "x" * 1000, "\u00e9"])
def test_ids_that_are_strings_or_integers_of_any_size_are_answered(endpoint, request_id):
    response = endpoint.post(encode({**PING, "id": request_id}))
    assert response.status_code == 200
    assert response.json() == {"jsonrpc": "2.0", "id": request_id, "result": {}}


@pytest.mark.parametrize(
    "body",
    [encode([PING]), encode([PING, LIST]), b"[]", encode([{"jsonrpc": "2.0", "method": "notifications/initialized"}])],
    ids=["one", "two", "empty", "notification"],
)
def test_a_batch_is_an_invalid_request(endpoint, body):
    response = endpoint.post(body)
    assert response.status_code == 400
    error = error_of(response)
    assert error["code"] == -32600
    assert "batches" in error["message"]


@pytest.mark.parametrize(
    ("body", "code"),
    [
        (b"[" * 10_000 + b"]" * 10_000, -32700),
        (
            b'{"jsonrpc": "2.0", "id": 1, "method": "ping", "params": ' + b'{"a": ' * 10_000 + b"1" + b"}" * 10_001,
            -32700,
        ),
        (b"\xff\xfe\x00{", -32700),
        (b'{"jsonrpc": "2.0", "id": 1, "method": "ping"', -32700),
        (b"42", -32600),
        (b'"ping"', -32600),
        (b"null", -32600),
        (b"{}", -32600),
        (b'{"jsonrpc": "1.0", "id": 1, "method": "ping"}', -32600),
        (b'{"id": 1, "method": "ping"}', -32600),
        (b'{"jsonrpc": "2.0", "id": 1, "method": 7}', -32600),
        (b'{"jsonrpc": "2.0", "id": 1}', -32600),
    ],
    ids=[
        "10,000 deep",
        "10,000 deep params",
        "not UTF-8",
        "truncated",
        "number",
        "string",
        "null",
        "empty object",
        "JSON-RPC 1.0",
        "no jsonrpc",
        "method a number",
        "neither request nor response",
    ],
)
def test_bodies_that_are_not_one_message_get_the_error_the_spec_names(endpoint, body, code):
    response = endpoint.post(body)
    assert response.status_code == 400
    assert error_of(response)["code"] == code


@pytest.mark.parametrize("name", ["\ud800", "bad \udfff name", "\udc00\ud800"])
@pytest.mark.parametrize("method", ["initialize", "tools/list"])
def test_lone_surrogates_in_the_client_name_are_refused_clearly(endpoint, name, method):
    info = {"name": name, "version": "1"}
    if method == "initialize":
        message = {**INITIALIZE, "params": {**INITIALIZE["params"], "clientInfo": info}}
    else:
        message = {**LIST, "params": {"_meta": {"io.modelcontextprotocol/clientInfo": info}}}
    response = endpoint.post(encode(message), {"MCP-Protocol-Version": VERSION})
    assert response.status_code == 400
    error = error_of(response)
    assert error["code"] == -32700 and "surrogate" in error["message"]


def test_bodies_up_to_the_limit_are_read_and_one_byte_more_is_refused(endpoint):
    limit = settings.MCP_MAX_BODY_BYTES
    ping = encode(PING)
    at_limit = ping[:-1] + b" " * (limit - len(ping)) + b"}"
    assert len(at_limit) == limit
    assert endpoint.post(at_limit).json()["result"] == {}
    over = endpoint.post(at_limit + b" ")
    assert over.status_code == 413
    assert error_of(over)["code"] == -32600


# --- fuzz ----------------------------------------------------------------------------------------

surrogates = st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF)
odd_text = st.text(st.one_of(st.characters(), surrogates), max_size=40)
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**30), max_value=10**30),
    st.floats(allow_nan=True, allow_infinity=True),
    odd_text,
)
json_values = st.recursive(
    scalars, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(odd_text, inner, max_size=4), max_leaves=12
)


def message_bodies() -> st.SearchStrategy[bytes]:
    """Messages built like real ones, with any field replaced by any JSON value."""

    @st.composite
    def build(draw: st.DrawFn) -> bytes:
        message: dict[str, Any] = dict(draw(st.sampled_from(VALID)))
        for field in draw(st.sets(st.sampled_from(["jsonrpc", "id", "method", "params"]), max_size=2)):
            message[field] = draw(json_values)
        if draw(st.booleans()):
            params = dict(INITIALIZE["params"])
            params["clientInfo"] = {"name": draw(odd_text), "version": draw(odd_text)}
            message["params"] = params
        text = json.dumps(message, ensure_ascii=draw(st.booleans()))
        return text.encode("utf-8", "surrogatepass")  # unescaped surrogates: invalid UTF-8

    return build()


@FUZZ
@given(body=st.binary(max_size=2048))
def test_random_bytes(body):
    run(body)


@FUZZ
@given(data=st.data())
def test_truncated_and_spliced_requests(data):
    body = encode(data.draw(st.sampled_from(VALID)))
    cut = data.draw(st.integers(min_value=0, max_value=len(body)))
    tail = data.draw(st.sampled_from([b"", b"}", b"]", b"\x00", b"\xc3", b"\\ud800", b'"', b"[" * 100]))
    run(body[:cut] + tail)


@FUZZ
@given(body=message_bodies())
def test_messages_with_any_field_any_value(body):
    run(body)


@FUZZ
@given(
    message=st.lists(st.sampled_from(VALID), max_size=5),
    depth=st.integers(min_value=0, max_value=20_000),
    bracket=st.sampled_from([b"[", b'{"a":']),
)
def test_batches_and_deep_nesting(message, depth, bracket):
    closing = b"]" if bracket == b"[" else b"}"
    run(encode(message))
    run(bracket * depth + b"1" + closing * depth)


_shared: dict[str, Endpoint] = {}


def run(body: bytes) -> None:
    """Post `body` on this module's endpoint (one loop for every example of every fuzz test)."""
    endpoint = _shared.get("endpoint")
    if endpoint is None:
        endpoint = _shared["endpoint"] = Endpoint()
    endpoint.post(body, {"MCP-Protocol-Version": VERSION})


@pytest.fixture(autouse=True, scope="module")
def _no_tracebacks_in_the_fuzz_log() -> Iterator[None]:
    with server_log() as log:
        yield
    endpoint = _shared.pop("endpoint", None)
    if endpoint is not None:
        endpoint.close()
    assert log.tracebacks() == []


# --- a real server ----------------------------------------------------------------------------


LONE_NAME = {**INITIALIZE, "params": {**INITIALIZE["params"], "clientInfo": {"name": "\ud800"}}}


@pytest.mark.live_server_process
def test_a_real_server_answers_hostile_bodies_without_tracebacks():
    hostile = [
        b"[" * 10_000 + b"]" * 10_000,
        encode(LONE_NAME),
        json.dumps(LONE_NAME, ensure_ascii=False).encode("utf-8", "surrogatepass"),
        b'{"jsonrpc": "2.0", "id": NaN, "method": "ping"}',
        b'{"jsonrpc": "2.0", "id": 1.5, "method": "tools/list"}',
        encode([PING]),
        b"\x00\xff" * 100,
        encode(PING)[:-3],
        b"",  # (Django's test client sends no Content-Type with an empty body)
    ]
    headers = {"Content-Type": "application/json", **HEADERS}
    with server_process() as base:
        answers = [httpx.post(base + "/mcp", content=body, headers=headers) for body in hostile]
        alive = httpx.post(base + "/mcp", content=encode(PING), headers=headers)
    log = server_process.last_log
    assert [a.status_code for a in answers] == [400] * len(hostile)
    assert all(a.json()["error"]["code"] in (-32700, -32600) for a in answers)
    assert alive.json()["result"] == {}
    assert "Traceback" not in log
    assert all(json.loads(line)["level"] not in ("error", "critical") for line in log.splitlines() if line.strip())
