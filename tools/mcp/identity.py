"""Who is calling over HTTP, without keeping anything between requests.

At `initialize` the server mints an `Mcp-Session-Id` that carries the client's `clientInfo.name`
exactly as sent, base64url-encoded and signed (HMAC-SHA256) with a secret every replica shares:

    v1.<nonce>.<base64url(name)>.<base64url(signature)>

Any replica can read it back; nothing is stored. On later requests the client name is, in order:

1. `clientInfo.name` from the request's `_meta` (the sessionless 2026-07-28 revision);
2. the name inside a valid `Mcp-Session-Id`; an id this server never minted (bad signature,
   bad encoding, truncated, another secret) gives `unknown`;
3. with no `Mcp-Session-Id` at all (ChatGPT's tool calls), the raw `User-Agent`;
4. `unknown`.

Names longer than `MAX_NAME_LENGTH` characters are cut to their first `MAX_NAME_LENGTH`
characters (code points) before minting; nothing else is changed.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

UNKNOWN = "unknown"
MAX_NAME_LENGTH = 256
VERSION = "v1"
CLIENT_INFO_META = "io.modelcontextprotocol/clientInfo"


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

    def mint(self, client_name: str | None) -> str:
        name = UNKNOWN if client_name is None else client_name[:MAX_NAME_LENGTH]
        payload = f"{VERSION}.{_b64encode(secrets.token_bytes(9))}.{_b64encode(name.encode('utf-8'))}"
        return f"{payload}.{self._sign(self._keys[0], payload)}"

    def read(self, session_id: str) -> str | None:
        """The client name inside a session id this server minted, else None."""
        parts = session_id.split(".")
        if len(parts) != 4 or parts[0] != VERSION:
            return None
        payload, signature = ".".join(parts[:3]), parts[3]
        try:
            payload.encode("ascii")
        except UnicodeEncodeError:
            return None
        if not any(hmac.compare_digest(self._sign(key, payload), signature) for key in self._keys):
            return None
        try:
            return _b64decode(parts[2]).decode("utf-8")
        except (ValueError, binascii.Error, UnicodeDecodeError):
            return None


@dataclass(frozen=True, slots=True)
class Identity:
    client_name: str
    user_agent: str | None
    mint_session: bool = False
    """True for an `initialize` request: the response gets a fresh `Mcp-Session-Id`."""


def _client_info_name(message: Mapping[str, Any]) -> str | None:
    params = message.get("params")
    if not isinstance(params, Mapping):
        return None
    info = params.get("clientInfo")
    if message.get("method") != "initialize" or not isinstance(info, Mapping):
        meta = params.get("_meta")
        info = meta.get(CLIENT_INFO_META) if isinstance(meta, Mapping) else None
    if isinstance(info, Mapping) and isinstance(info.get("name"), str):
        return info["name"]
    return None


def identify(headers: Mapping[str, str], body: bytes, session_ids: SessionIds) -> Identity:
    """Resolve the caller of one HTTP request from its headers and JSON-RPC body."""
    user_agent = headers.get("user-agent")
    try:
        message = json.loads(body)
    except ValueError:
        message = None
    if not isinstance(message, Mapping):
        message = {}
    from_body = _client_info_name(message)
    if message.get("method") == "initialize":
        name = UNKNOWN if from_body is None else from_body[:MAX_NAME_LENGTH]
        return Identity(name, user_agent, mint_session=True)
    if from_body is not None:
        return Identity(from_body[:MAX_NAME_LENGTH], user_agent)
    session_id = headers.get("mcp-session-id")
    if session_id is not None:
        return Identity(session_ids.read(session_id) or UNKNOWN, user_agent)
    return Identity(user_agent or UNKNOWN, user_agent)


def upstream_metadata(identity: Identity, auth_method: str | None) -> str:
    """`TomTom-Upstream-Metadata`: base64 of a JSON object for the API gateway's analytics."""
    document = {"client": identity.client_name, "auth_method": auth_method or "none"}
    return base64.b64encode(json.dumps(document, ensure_ascii=False, separators=(",", ":")).encode()).decode()
