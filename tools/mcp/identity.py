"""Who is calling over HTTP, without keeping anything between requests.

At `initialize` the server mints an `Mcp-Session-Id` that carries the client's `clientInfo.name`
exactly as sent, and whether its capabilities declared MCP Apps (`apps` or `text`),
base64url-encoded and signed (HMAC-SHA256) with a secret every replica shares:

    v2.<nonce>.<base64url(name)>.<apps|text>.<base64url(signature)>

Any replica can read it back; nothing is stored. Ids minted before the flag
(`v1.<nonce>.<base64url(name)>.<signature>`) still read, with the declaration unknown (None).
On later requests the client name is, in order:

1. `clientInfo.name` from the request's `_meta` (the sessionless 2026-07-28 revision);
2. the name inside a valid `Mcp-Session-Id`; an id this server never minted (bad signature,
   bad encoding, truncated, another secret) gives `unknown`;
3. with no `Mcp-Session-Id` at all (ChatGPT's tool calls), the raw `User-Agent`;
4. `unknown`.

Names longer than `MAX_NAME_LENGTH` characters are cut to their first `MAX_NAME_LENGTH`
characters (code points) before minting; a code point that cannot be encoded (a lone surrogate
such as `"\\ud800"`, which JSON escapes allow) becomes U+FFFD; nothing else is changed.

The body is read with `parse_body`, which never raises: JSON nested deeper than
`MAX_JSON_DEPTH` levels or otherwise unreadable is a JSON-RPC parse error (-32700); anything
that is not one JSON-RPC 2.0 message is an invalid request (-32600):

- a value that is not an object, or a batch (an array: the 2025-06-18 and later revisions of
  MCP removed batching, and the SDK never supported it);
- `jsonrpc` other than `"2.0"`, a `method` that is not a string, an object that is neither a
  request, a notification nor a response;
- an `id` that is not a string or an integer: a fraction (`1.5`, and `1.0` too), `NaN`,
  `Infinity`, `true`, an object, an array; `null` only in an error response. JSON-RPC lets
  the SDK read such a message as a notification, which would be answered 202 with no body.

`Identity.body_error` carries that error for the transport to answer with (HTTP 400, `id`
null); the caller is then `unknown` (or named by its session id or User-Agent).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import math
import re
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import accumulate
from typing import Any

from tools.mcp.apps import declares_apps

UNKNOWN = "unknown"
MAX_NAME_LENGTH = 256
VERSION = "v2"
LEGACY_VERSION = "v1"
"""Session ids minted without the MCP Apps flag: still read (the declaration is then unknown)."""
APPS_FLAGS = {"apps": True, "text": False}
CLIENT_INFO_META = "io.modelcontextprotocol/clientInfo"
MAX_JSON_DEPTH = 64
"""Deepest nesting of arrays and objects a request body may have (GeoJSON needs about 10)."""
PARSE_ERROR = -32700
INVALID_REQUEST = -32600

_SURROGATES = re.compile("[\ud800-\udfff]")
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")
"""A `\\uD800`-`\\uDFFF` escape: paired, it is one character; alone, it is none."""
LONE_SURROGATE = "a string holds a lone surrogate escape (\\ud800-\\udfff without its pair), which is not Unicode"
_JSON_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
_STEP = {ord("["): 1, ord("{"): 1, ord("]"): -1, ord("}"): -1}


def sanitise(text: str) -> str:
    """`text` with every code point UTF-8 cannot encode (lone surrogates) replaced by U+FFFD."""
    return _SURROGATES.sub("\ufffd", text)


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
    """The decoded JSON-RPC message, or None when `error` is set."""
    error: JsonRpcError | None = None


def nesting_depth(body: bytes) -> int:
    """How deeply arrays and objects nest in `body` (brackets inside strings not counted),
    without recursion; only meaningful for bodies that are otherwise JSON."""
    if body.count(b"[") + body.count(b"{") <= MAX_JSON_DEPTH:
        return 0  # cannot be too deep; skip the scan
    brackets = _JSON_STRING.sub(b"", body).translate(None, delete=_NOT_BRACKETS)
    return max(accumulate(_STEP[b] for b in brackets), default=0)


def _has_lone_surrogate(message: Any) -> bool:
    try:
        json.dumps(message, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def parse_body(body: bytes) -> ParsedBody:
    """A request body as JSON-RPC, never raising: see the module docstring for the errors."""
    if nesting_depth(body) > MAX_JSON_DEPTH:
        return ParsedBody(
            None, JsonRpcError(PARSE_ERROR, f"Parse error: JSON nested deeper than {MAX_JSON_DEPTH} levels")
        )
    try:
        message = json.loads(body)
    except (ValueError, RecursionError):  # UnicodeDecodeError is a ValueError
        return ParsedBody(None, JsonRpcError(PARSE_ERROR, "Parse error: the body is not JSON"))
    if _SURROGATE_ESCAPE.search(body) and _has_lone_surrogate(message):
        return ParsedBody(None, JsonRpcError(PARSE_ERROR, f"Parse error: {LONE_SURROGATE}"))
    error = envelope_error(message)
    return (
        ParsedBody(None, JsonRpcError(INVALID_REQUEST, f"Invalid Request: {error}")) if error else ParsedBody(message)
    )


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


def _b64encode(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def _b64decode(text: str) -> bytes:
    if any(c not in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_" for c in text):
        raise ValueError("not base64url")
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class SessionIds:
    """Mint and read signed session ids. `secrets[0]` signs; every secret verifies (rotation)."""

    def __init__(self, signing_secrets: Sequence[str]) -> None:
        if not signing_secrets or not all(signing_secrets):
            raise ValueError("at least one non-empty session secret is required")
        self._keys = [s.encode() for s in signing_secrets]

    def _sign(self, key: bytes, payload: str) -> str:
        return _b64encode(hmac.new(key, payload.encode("ascii"), hashlib.sha256).digest())

    def mint(self, client_name: str | None, apps: bool = False) -> str:
        """A session id for `client_name`, saying whether it declared MCP Apps (`apps`)."""
        name = UNKNOWN if client_name is None else sanitise(client_name[:MAX_NAME_LENGTH])
        flag = "apps" if apps else "text"
        payload = f"{VERSION}.{_b64encode(secrets.token_bytes(9))}.{_b64encode(name.encode('utf-8'))}.{flag}"
        return f"{payload}.{self._sign(self._keys[0], payload)}"

    def read(self, session_id: str) -> str | None:
        """The client name inside a session id this server minted, else None."""
        session = self.read_session(session_id)
        return None if session is None else session[0]

    def read_session(self, session_id: str) -> tuple[str, bool | None] | None:
        """The client name and MCP Apps declaration (None: minted without it) inside a session
        id this server minted, else None."""
        parts = session_id.split(".")
        if parts[0] == VERSION and len(parts) == 5 and parts[3] in APPS_FLAGS:
            apps: bool | None = APPS_FLAGS[parts[3]]
        elif parts[0] == LEGACY_VERSION and len(parts) == 4:
            apps = None
        else:
            return None
        payload, signature = ".".join(parts[:-1]), parts[-1]
        try:
            payload.encode("ascii")
        except UnicodeEncodeError:
            return None
        if not any(hmac.compare_digest(self._sign(key, payload), signature) for key in self._keys):
            return None
        try:
            return _b64decode(parts[2]).decode("utf-8"), apps
        except (ValueError, binascii.Error, UnicodeDecodeError):
            return None


@dataclass(frozen=True, slots=True)
class Identity:
    client_name: str
    user_agent: str | None
    mint_session: bool = False
    """True for an `initialize` request: the response gets a fresh `Mcp-Session-Id`."""
    body_error: JsonRpcError | None = None
    """Set when the body is not a JSON-RPC message (`parse_body`); answer it instead of calling."""
    apps_declared: bool | None = None
    """Whether the client declared MCP Apps: at `initialize`, its capabilities; later, the flag
    in its session id (None: not known)."""
    tool_calls: int = 0
    """How many `tools/call` requests the body holds (what a tenant's quota counts)."""


def count_tool_calls(message: Any) -> int:
    messages = message if isinstance(message, list) else [message]
    return sum(1 for m in messages if isinstance(m, Mapping) and m.get("method") == "tools/call")


def _client_info_name(message: Mapping[str, Any]) -> str | None:
    params = message.get("params")
    if not isinstance(params, Mapping):
        return None
    info = params.get("clientInfo")
    if message.get("method") != "initialize" or not isinstance(info, Mapping):
        meta = params.get("_meta")
        info = meta.get(CLIENT_INFO_META) if isinstance(meta, Mapping) else None
    if isinstance(info, Mapping) and isinstance(info.get("name"), str):
        return sanitise(info["name"][:MAX_NAME_LENGTH])
    return None


def identify(headers: Mapping[str, str], body: bytes, session_ids: SessionIds) -> Identity:
    """Resolve the caller of one HTTP request from its headers and JSON-RPC body."""
    user_agent = headers.get("user-agent")
    parsed = parse_body(body)
    message = parsed.message or {}
    from_body = _client_info_name(message)
    calls = count_tool_calls(parsed.message)
    if message.get("method") == "initialize":
        name = UNKNOWN if from_body is None else from_body[:MAX_NAME_LENGTH]
        params = message.get("params")
        capabilities = params.get("capabilities") if isinstance(params, Mapping) else None
        return Identity(name, user_agent, mint_session=True, apps_declared=declares_apps(capabilities))
    if from_body is not None:
        return Identity(from_body, user_agent, tool_calls=calls)
    session_id = headers.get("mcp-session-id")
    if session_id is not None:
        session = session_ids.read_session(session_id)
        if session is None:
            return Identity(UNKNOWN, user_agent, body_error=parsed.error, tool_calls=calls)
        return Identity(session[0], user_agent, apps_declared=session[1], body_error=parsed.error, tool_calls=calls)
    return Identity(user_agent or UNKNOWN, user_agent, body_error=parsed.error, tool_calls=calls)


def upstream_metadata(identity: Identity, auth_method: str | None) -> str:
    """`TomTom-Upstream-Metadata`: base64 of a JSON object for the API gateway's analytics."""
    document = {"client": sanitise(identity.client_name), "auth_method": auth_method or "none"}
    return base64.b64encode(json.dumps(document, ensure_ascii=False, separators=(",", ":")).encode()).decode()
