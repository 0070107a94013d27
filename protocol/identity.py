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

Everything is read from the request's headers and its one decoded JSON-RPC message
(`protocol.body.parse_body`, which refuses a body that is not one message before anything here
reads it).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import re
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from protocol.mcp_apps import declares_apps

UNKNOWN = "unknown"
MAX_NAME_LENGTH = 256
VERSION = "v2"
LEGACY_VERSION = "v1"
"""Session ids minted without the MCP Apps flag: still read (the declaration is then unknown)."""
APPS_FLAGS = {"apps": True, "text": False}
CLIENT_INFO_META = "io.modelcontextprotocol/clientInfo"
_SURROGATES = re.compile("[\ud800-\udfff]")


def sanitise(text: str) -> str:
    """`text` with every code point UTF-8 cannot encode (lone surrogates) replaced by U+FFFD."""
    return _SURROGATES.sub("\ufffd", text)


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
    apps_declared: bool | None = None
    """Whether the client declared MCP Apps: at `initialize`, its capabilities; later, the flag
    in its session id (None: not known)."""
    tool_calls: int = 0
    """1 for a `tools/call` request, else 0: what a tenant's quota counts."""
    session: str | None = None
    """The `session_label` of the valid `Mcp-Session-Id` the request carries (traces'
    `mcp.session.id`); at `initialize`, the `/mcp` endpoint sets it to the label of the id it mints
    for the answer, so the session's first line carries the key of its later ones."""


def session_label(session_id: str) -> str:
    """What names a session this server minted and tells nothing else: its nonce (no client
    name, no signature, so it cannot be replayed as an id)."""
    return session_id.split(".")[1]


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


def identify(headers: Mapping[str, str], message: Mapping[str, Any], session_ids: SessionIds) -> Identity:
    """Resolve the caller of one HTTP request from its headers and its decoded JSON-RPC message."""
    user_agent = headers.get("user-agent")
    from_body = _client_info_name(message)
    calls = 1 if message.get("method") == "tools/call" else 0
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
            return Identity(UNKNOWN, user_agent, tool_calls=calls)
        return Identity(
            session[0], user_agent, apps_declared=session[1], tool_calls=calls, session=session_label(session_id)
        )
    return Identity(user_agent or UNKNOWN, user_agent, tool_calls=calls)


def upstream_metadata(identity: Identity, auth_method: str | None) -> str:
    """`TomTom-Upstream-Metadata`: base64 of a JSON object for the API gateway's analytics."""
    document = {"client": sanitise(identity.client_name), "auth_method": auth_method or "none"}
    return base64.b64encode(json.dumps(document, ensure_ascii=False, separators=(",", ":")).encode()).decode()
