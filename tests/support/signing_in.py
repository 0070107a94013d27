"""Calling `/mcp` signed in, through Django's test client, and checking what a host sees."""

from __future__ import annotations

import json
import time
from typing import Any

from django.test import AsyncClient

RESOURCE = "http://testserver/mcp"
SERVER_KEY = "server-key-never-spent"
ACCEPT = {"Accept": "application/json, text/event-stream"}
GEOCODE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "tools/call",
    "params": {"name": "tomtom-geocode", "arguments": {"query": "Dam"}},
}
LIST = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
CHALLENGE = 'Bearer resource_metadata="http://testserver/.well-known/oauth-protected-resource/mcp"'


async def post(message: dict[str, Any], token: str | None = None, headers: dict[str, str] | None = None) -> Any:
    extra = {**ACCEPT, **(headers or {})}
    if token is not None:
        extra["Authorization"] = f"Bearer {token}"
    return await AsyncClient().post("/mcp", json.dumps(message), content_type="application/json", headers=extra)


def result_of(response: Any) -> dict[str, Any]:
    assert response.status_code == 200, response.content
    return json.loads(response.json()["result"]["content"][0]["text"])


def assert_refused(response: Any, status: int, error: str | None, stub: Any) -> dict[str, Any]:
    """A refusal as a host sees it: `status`, the challenge (with `error`), and nothing sent to TomTom."""
    assert response.status_code == status, response.content
    challenge = response["WWW-Authenticate"]
    assert challenge.startswith(CHALLENGE)
    if error:
        assert f'error="{error}"' in challenge
        assert response.json()["error"] == error
    assert stub.requests == []
    return response.json()


class Later:
    """A key cache's clock (`JwksCache.clock`), moved forward on demand: `skip(seconds)`."""

    def __init__(self, jwks: Any) -> None:
        self.offset = 0.0
        jwks.clock = self

    def __call__(self) -> float:
        return time.monotonic() + self.offset

    def skip(self, seconds: float) -> None:
        self.offset += seconds
