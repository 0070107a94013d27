"""A `/mcp` request body, decoded once into one JSON-RPC message.

`parse_body` never raises. It decodes with the parser the SDK's transport uses
(`pydantic_core.from_json`), so what it takes is what the SDK would take, and everything after
it reads the one decoded message: who is calling (`identity.identify`), the tenant's quota
count, and the single-request exchange (`exchange.single_request`). The errors:

- JSON nested deeper than `MAX_JSON_DEPTH` levels, or a body that is not JSON (not UTF-8, a byte
  order mark, trailing data, a number beyond any float): a parse error (-32700). A string with a
  lone surrogate escape (`"\\ud800"` without its pair, which is no Unicode text) is one too, and
  its message says so.
- Anything that is not one JSON-RPC 2.0 message: an invalid request (-32600). That is a value
  that is not an object, a batch (an array: the 2025-06-18 and later revisions of MCP removed
  batching, and the SDK never supported it), `jsonrpc` other than `"2.0"`, a `method` that is
  not a string, an object that is neither a request, a notification nor a response, and an `id`
  that is not a string or an integer: a fraction (`1.5`, and `1.0` too), `NaN`, `Infinity`,
  `true`, an object, an array; `null` only in an error response. JSON-RPC lets the SDK read
  such a message as a notification, which would be answered 202 with no body.

The transport answers either with HTTP 400 and `id` null, before any tool runs.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from itertools import accumulate
from typing import Any

import pydantic_core

MAX_JSON_DEPTH = 64
"""Deepest nesting of arrays and objects a request body may have (GeoJSON needs about 10)."""
PARSE_ERROR = -32700
INVALID_REQUEST = -32600
LONE_SURROGATE = "a string holds a lone surrogate escape (\\ud800-\\udfff without its pair), which is not Unicode"

_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")
"""A `\\uD800`-`\\uDFFF` escape: paired, it is one character; alone, it is none."""
_JSON_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
_STEP = {ord("["): 1, ord("{"): 1, ord("]"): -1, ord("}"): -1}


@dataclass(frozen=True, slots=True)
class JsonRpcError:
    """Why a body is not a JSON-RPC message: answer `{"jsonrpc": "2.0", "id": null, "error": ...}`."""

    code: int
    message: str

    def as_dict(self) -> dict[str, Any]:
        return {"code": self.code, "message": self.message}


@dataclass(frozen=True, slots=True)
class ParsedBody:
    message: dict[str, Any] | None
    """The decoded JSON-RPC message (a request, a notification or a response), or None when
    `error` is set."""
    error: JsonRpcError | None = None


def nesting_depth(body: bytes) -> int:
    """How deeply arrays and objects nest in `body` (brackets inside strings not counted),
    without recursion; only meaningful for bodies that are otherwise JSON."""
    if body.count(b"[") + body.count(b"{") <= MAX_JSON_DEPTH:
        return 0  # cannot be too deep; skip the scan
    brackets = _JSON_STRING.sub(b"", body).translate(None, delete=_NOT_BRACKETS)
    return max(accumulate(_STEP[b] for b in brackets), default=0)


def parse_body(body: bytes) -> ParsedBody:
    """A request body as one JSON-RPC message, never raising: see the module docstring."""
    if nesting_depth(body) > MAX_JSON_DEPTH:
        return _parse_error(f"JSON nested deeper than {MAX_JSON_DEPTH} levels")
    try:
        message = pydantic_core.from_json(body)
    except ValueError:
        return _parse_error(LONE_SURROGATE if _lone_surrogate(body) else "the body is not JSON")
    error = envelope_error(message)
    if error is not None:
        return ParsedBody(None, JsonRpcError(INVALID_REQUEST, f"Invalid Request: {error}"))
    return ParsedBody(message)


def _parse_error(reason: str) -> ParsedBody:
    return ParsedBody(None, JsonRpcError(PARSE_ERROR, f"Parse error: {reason}"))


def _lone_surrogate(body: bytes) -> bool:
    """Whether a body the parser refused is JSON but for a lone surrogate escape (which the
    standard library's parser lets through): only asked of a refused body, to say why."""
    if not _SURROGATE_ESCAPE.search(body):
        return False
    try:
        json.dumps(json.loads(body), ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return True
    except (ValueError, RecursionError):  # not JSON for another reason too
        return False
    return False


def envelope_error(message: Any) -> str | None:
    """Why `message` (decoded JSON) is not one JSON-RPC 2.0 message, or None when it is one."""
    if isinstance(message, list):
        return "batches (arrays of messages) are not supported; send one message per request"
    if not isinstance(message, dict):
        return f"a message is a JSON object, not {_json_kind(message)}"
    if message.get("jsonrpc") != "2.0":
        return '`jsonrpc` must be "2.0"'
    if "method" in message:
        if not isinstance(message["method"], str):
            return f"`method` must be a string, not {_json_kind(message['method'])}"
        if "id" in message and not _valid_id(message["id"]):
            return f"`id` must be a string or an integer, not {_json_kind(message['id'])}"
        return None
    if "result" not in message and "error" not in message:
        return "not a request, a notification or a response (no `method`, `result` or `error`)"
    request_id = message.get("id")
    if not _valid_id(request_id) and not (request_id is None and "error" in message):
        return f"the `id` of a response must be a string or an integer, not {_json_kind(request_id)}"
    return None


def _valid_id(value: Any) -> bool:
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def _json_kind(value: Any) -> str:
    """What a decoded JSON value is, for a message (never the value itself: it may be huge)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true or false"
    if isinstance(value, float):
        if math.isnan(value):
            return "NaN"
        return "Infinity" if math.isinf(value) else "a number with a fraction"
    if isinstance(value, int):
        return "a number"
    names: dict[type, str] = {str: "a string", list: "an array", dict: "an object"}
    return names.get(type(value), type(value).__name__)
