"""A request body decoded once (protocol/body.py): what is one JSON-RPC message and what is refused."""

import json
from unittest import mock

import pytest

from protocol.body import PARSE_ERROR, parse_body


@pytest.mark.parametrize("depth", [65, 1_000, 10_000, 100_000])
def test_deep_nesting_is_a_parse_error_not_a_crash(depth):
    for body in [b"[" * depth + b"]" * depth, b'{"a":' * depth + b"1" + b"}" * depth, b"[" * depth]:
        parsed = parse_body(body)
        assert parsed.message is None and parsed.error is not None
        assert parsed.error.code == PARSE_ERROR
        assert "nested deeper than 64 levels" in parsed.error.message


def test_nesting_within_the_limit_and_brackets_in_strings_are_fine():
    assert parse_body(b'{"jsonrpc": "2.0", "method": "m", "params": ' + b"[" * 63 + b"]" * 63 + b"}").error is None
    assert parse_body(json.dumps({"jsonrpc": "2.0", "method": "[" * 10_000}).encode()).error is None


@pytest.mark.parametrize(
    ("body", "code"),
    [
        (b"not json", -32700),
        (b"\xff\xfe{", -32700),
        (b"", -32700),
        (b'\xef\xbb\xbf{"jsonrpc": "2.0", "method": "m"}', -32700),  # a byte order mark: not JSON
        ('{"jsonrpc": "2.0", "method": "m"}'.encode("utf-16"), -32700),  # JSON is UTF-8
        (b'{"jsonrpc": "2.0", "method": "m"} {}', -32700),
        (b"42", -32600),
        (b'"x"', -32600),
        (b"null", -32600),
    ],
)
def test_bodies_that_are_not_messages_carry_their_json_rpc_error(body, code):
    parsed = parse_body(body)
    assert parsed.message is None
    assert parsed.error is not None and parsed.error.code == code
    assert parsed.error.as_dict()["code"] == code


LONE_SURROGATES = ["\ud800", "bad \udfff name", "\udc00\ud800"]
"""Strings JSON allows (as `\\uXXXX` escapes) that UTF-8 cannot encode."""


@pytest.mark.parametrize("name", LONE_SURROGATES)
@pytest.mark.parametrize("method", ["initialize", "tools/call"])
def test_a_lone_surrogate_in_the_body_is_a_parse_error(name, method):
    """The SDK's parser refuses such a body; the message says why."""
    info = {"name": name}
    params = {"clientInfo": info} if method == "initialize" else {"_meta": {"io.modelcontextprotocol/clientInfo": info}}
    parsed = parse_body(json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).encode())
    assert parsed.error is not None and parsed.error.code == PARSE_ERROR
    assert "lone surrogate" in parsed.error.message


def test_a_lone_surrogate_in_a_body_that_is_not_json_anyway_is_named_as_not_json():
    parsed = parse_body(b'{"jsonrpc": "2.0", "method": "\\ud800"')
    assert parsed.error is not None and parsed.error.message == "Parse error: the body is not JSON"


def test_surrogate_pairs_and_escaped_backslashes_are_not_lone_surrogates():
    assert (
        parse_body(json.dumps({"jsonrpc": "2.0", "method": "m", "params": {"n": "\U0001f600"}}).encode()).error is None
    )
    assert parse_body(b'{"jsonrpc": "2.0", "method": "m", "params": {"n": "\\\\ud800"}}').error is None


def test_the_decoded_message_is_what_the_sdk_parser_reads():
    body = b'{"jsonrpc": "2.0", "id": 123456789012345678901234567890, "method": "m", "params": {"x": NaN}}'
    message = parse_body(body).message
    assert message is not None and message["id"] == 123456789012345678901234567890
    assert message["params"]["x"] != message["params"]["x"]  # NaN, as the SDK's parser reads it


@pytest.mark.parametrize("method", ["ping", "tools/list", "initialize"])
async def test_a_request_body_is_decoded_once(method):
    """Identity, the quota count, the envelope checks and the exchange all read the one message."""
    import pydantic_core
    from django.test import AsyncClient

    params = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params if method == "initialize" else {}})
    decoded = []
    from_json, loads = pydantic_core.from_json, json.loads

    def counting(decode):
        def decode_and_count(data, *args, **kwargs):
            if data in (body, body.encode()):
                decoded.append(decode.__name__)
            return decode(data, *args, **kwargs)

        return decode_and_count

    with (
        mock.patch.object(pydantic_core, "from_json", counting(from_json)),
        mock.patch.object(json, "loads", counting(loads)),
    ):
        response = await AsyncClient().post(
            "/mcp", body, content_type="application/json", headers={"Accept": "application/json"}
        )
    assert response.status_code == 200 and "result" in response.json()
    assert decoded == ["from_json"]
