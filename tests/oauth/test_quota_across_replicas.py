"""A tenant's quota holds across replicas: two server processes share PostgreSQL, calls race on
both, and the total admitted is exactly the quota (tenants.store counts in the database)."""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest
from cryptography.fernet import Fernet

from tenants.models import Tenant, TenantKey
from tests.conftest import CANARY_KEY, data, free_port, server_process
from tests.support.issuer import LocalIssuer
from tests.support.tomtom_stub import TomTomStub

QUOTA = 7
CALLS = 24
ENCRYPTION_KEY = Fernet.generate_key().decode()


def database_url() -> str:
    from django.db import connection

    s = connection.settings_dict
    return f"postgres://{s['USER']}@{s['HOST'] or '127.0.0.1'}:{s['PORT'] or 5432}/{s['NAME']}"


@pytest.mark.postgresql
@pytest.mark.live_server_process
@pytest.mark.django_db(transaction=True)
def test_the_total_admitted_across_two_replicas_stays_within_the_quota(settings):
    from django.db import connection

    if connection.vendor != "postgresql":
        pytest.skip("replicas share PostgreSQL (DATABASE_URL=postgres://...)")
    settings.TENANT_KEY_ENCRYPTION_KEYS = [ENCRYPTION_KEY]
    acme = Tenant.objects.create(name="Acme", claim="acme", calls_per_day=QUOTA)
    key = TenantKey(tenant=acme)
    key.set_key(CANARY_KEY)
    key.save()
    ports = [free_port(), free_port()]
    with LocalIssuer() as issuer, TomTomStub() as stub:
        stub.route("GET", r"/maps/orbis/places/geocode", json_body=data("geocode_v2.json"))

        def env(port: int) -> dict[str, str]:
            return {
                "DATABASE_URL": database_url(),
                "TOMTOM_API_BASE_URL": stub.base_url,
                "MCP_AUTH": "oauth",
                "MCP_HOSTED": "true",
                "OAUTH_ISSUER": issuer.url,
                "OAUTH_JWKS_URL": issuer.jwks_url,
                "OAUTH_RESOURCE": "https://maps.example/mcp",
                "TENANT_KEY_ENCRYPTION_KEYS": ENCRYPTION_KEY,
            }

        token = issuer.token(aud="https://maps.example/mcp")
        with server_process(env(ports[0]), port=ports[0]) as one, server_process(env(ports[1]), port=ports[1]) as two:
            outcomes = asyncio.run(race([one, two], token))
    admitted = [o for o in outcomes if "results" in o]
    refused = [o["error"] for o in outcomes if "error" in o]
    assert len(admitted) == QUOTA
    assert len(refused) == CALLS - QUOTA
    assert {e["code"] for e in refused} == {"retry_later"}
    assert all(e["retry_after"] >= 1 for e in refused)
    assert len(stub.requests) == QUOTA


async def race(servers: list[str], token: str) -> list[dict]:
    message = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "tomtom-geocode", "arguments": {"query": "Dam"}},
    }
    headers = {"Authorization": f"Bearer {token}", "Accept": "application/json, text/event-stream"}
    async with httpx.AsyncClient(timeout=30) as client:

        async def call(i: int) -> dict:
            response = await client.post(servers[i % 2] + "/mcp", json=message, headers=headers)
            assert response.status_code == 200, response.text
            return json.loads(response.json()["result"]["content"][0]["text"])

        return await asyncio.gather(*(call(i) for i in range(CALLS)))
