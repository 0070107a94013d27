"""The built-in authorization server across replicas: two server processes on one fresh
PostgreSQL database with the same DJANGO_SECRET_KEY. A person signs in through replica A with the
MCP SDK's OAuth client; replica B accepts the access token, refreshes the grant, and refuses it
once A has revoked it: the refresh token at once (the database says so), the access token within
OAUTH_BUILTIN_REVOCATION_SECONDS (each replica's revoked-grant set, re-read that often).

Both replicas serve one resource (OAUTH_RESOURCE names A's address, as a load balancer's would be
named), so the SDK client signs in at A and B is spoken to in raw HTTP, as the balancer would pass on.
"""

from __future__ import annotations

import asyncio
import secrets
import time
from collections.abc import Iterator

import httpx
import psycopg
import pytest

from tests.conftest import CANARY_KEY, free_port, server_process
from tests.support.authorizing import (
    GEOCODE,
    LIST,
    Browser,
    Memory,
    Person,
    assert_challenged,
    call_mcp,
    mcp_session,
    provider,
    seeded_database,
    stand_ins,
    token_request,
)

pytestmark = [pytest.mark.postgresql, pytest.mark.live_server_process]

REVOCATION_SECONDS = 1
PATIENCE_SECONDS = 60
"""How long to wait for B to refuse a revoked grant's access token before giving up: a safety net
for a broken build, far above the lag, never what the test asserts."""


@pytest.fixture
def fresh_database(settings) -> Iterator[str]:
    """A new PostgreSQL database beside the test database (dropped afterwards): its URL."""
    db = settings.DATABASES["default"]
    if "postgresql" not in db["ENGINE"]:
        pytest.skip("replicas share PostgreSQL (DATABASE_URL=postgres://...)")
    server = f"postgres://{db['USER']}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}"
    name = f"o3_replicas_{secrets.token_hex(4)}"
    with psycopg.connect(server + "/postgres", autocommit=True) as admin:
        admin.execute(f"CREATE DATABASE {name}")
    try:
        yield f"{server}/{name}"
    finally:
        with psycopg.connect(server + "/postgres", autocommit=True) as admin:
            admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


async def refused_within_patience(base: str, token: str) -> httpx.Response:
    """B's answer to the revoked grant's access token once it stops being 200 (polled)."""
    deadline = time.monotonic() + PATIENCE_SECONDS
    while True:
        response = await call_mcp(base, LIST, token)
        if response.status_code != 200 or time.monotonic() > deadline:
            return response
        await asyncio.sleep(0.2)


async def test_a_sign_in_on_one_replica_is_honoured_refreshed_and_revoked_on_the_other(fresh_database):
    with stand_ins() as outside:
        stub = outside.stub
        port_a, port_b = free_port(), free_port()
        env = outside.env(port_a, fresh_database, OAUTH_BUILTIN_REVOCATION_SECONDS=str(REVOCATION_SECONDS))
        seeded_database(env)
        logs = {}
        with server_process(env, port=port_a) as a:
            with server_process(env, port=port_b) as b:
                storage = Memory()
                async with Person() as person:
                    auth = provider(a, Browser(person), storage)
                    async with mcp_session(a, auth) as client:
                        assert (await client.list_tools()).tools
                client_id = storage.client.client_id
                first = storage.tokens

                # B accepts A's access token without having seen the sign-in: same key, same database
                listed = await call_mcp(b, LIST, first.access_token)
                assert listed.status_code == 200, listed.text
                assert "tomtom-geocode" in {t["name"] for t in listed.json()["result"]["tools"]}
                called = await call_mcp(b, GEOCODE, first.access_token)
                assert called.status_code == 200, called.text
                assert stub.requests[-1].api_key == CANARY_KEY

                # B refreshes the grant A made; A accepts B's new access token
                refreshed = await token_request(
                    b, grant_type="refresh_token", refresh_token=first.refresh_token, client_id=client_id
                )
                assert refreshed.status_code == 200, refreshed.text
                second = refreshed.json()
                assert second["refresh_token"] != first.refresh_token
                assert (await call_mcp(a, LIST, second["access_token"])).status_code == 200
                assert (await call_mcp(b, LIST, second["access_token"])).status_code == 200

                # A revokes (RFC 7009); B refuses the refresh token at once ...
                async with httpx.AsyncClient(timeout=30) as http:
                    revoked = await http.post(
                        a + "/oauth/revoke", data={"token": second["refresh_token"], "client_id": client_id}
                    )
                assert revoked.status_code == 200, revoked.text
                again = await token_request(
                    b, grant_type="refresh_token", refresh_token=second["refresh_token"], client_id=client_id
                )
                assert again.status_code == 400, again.text
                assert again.json()["error"] == "invalid_grant"

                # ... and the access token once its revoked-grant set is re-read (polled, not timed)
                before = len(stub.requests)
                # (B's challenge names the one resource both serve: A's address, OAUTH_RESOURCE)
                assert_challenged(await refused_within_patience(b, second["access_token"]), a)
                assert_challenged(await call_mcp(a, GEOCODE, second["access_token"]), a)
                assert len(stub.requests) == before
            logs["B"] = server_process.last_log
        logs["A"] = server_process.last_log
    # what the replicas wrote: the revocation, and no credential of any kind
    assert any('"OAuth grant revoked"' in line and '"revocation request"' in line for line in logs["A"].splitlines())
    for name, log in logs.items():
        for secret in (first.access_token, first.refresh_token, second["access_token"], second["refresh_token"]):
            assert secret not in log, f"a token in replica {name}'s log"
        assert CANARY_KEY not in log
