"""Sign-in fixtures: a local issuer (module-wide: its RSA key takes a moment to make), the TomTom
stub answering geocodes, `/mcp` configured for OAuth against both, and a tenant with a key."""

from __future__ import annotations

import pytest

from protocol import http
from tenants.models import Tenant, TenantKey
from tests.conftest import CANARY_KEY, data
from tests.support.issuer import LocalIssuer
from tests.support.signing_in import RESOURCE, SERVER_KEY
from tests.support.tomtom_stub import TomTomStub


@pytest.fixture(scope="module")
def issuer():
    with LocalIssuer() as running:
        yield running


@pytest.fixture
def stub():
    with TomTomStub() as running:
        running.route("GET", r"/maps/orbis/places/geocode", json_body=data("geocode_v2.json"))
        yield running


@pytest.fixture
def sign_in(settings, issuer, stub):
    """`/mcp` with MCP_AUTH=oauth against the local issuer (a fresh endpoint, JWKS cache included)."""
    settings.MCP_AUTH = ["oauth"]
    settings.MCP_HOSTED = True
    settings.OAUTH_ISSUER = issuer.url
    settings.OAUTH_JWKS_URL = issuer.jwks_url
    settings.OAUTH_RESOURCE = RESOURCE
    settings.OAUTH_AUTHORIZATION_SERVERS = [issuer.url]
    settings.OAUTH_REQUIRED_SCOPES = ["maps"]
    settings.TOMTOM_API_BASE_URL = stub.base_url
    settings.TOMTOM_API_KEY = SERVER_KEY
    http.mcp_endpoint.cache_clear()
    yield settings
    http.mcp_endpoint.cache_clear()
    issuer.jwks_fault = None
    from tenants.store import close_connections

    close_connections()


def acme() -> Tenant:
    """The tenant `acme` (claim `acme`) with one key, CANARY_KEY, which TomTom must then see."""
    tenant = Tenant.objects.create(name="Acme", claim="acme")
    key = TenantKey(tenant=tenant, label="first")
    key.set_key(CANARY_KEY)
    key.save()
    return tenant


@pytest.fixture
def tenant(sign_in):
    return acme()
