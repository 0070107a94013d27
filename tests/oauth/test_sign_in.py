"""Sign-in with OAuth on `/mcp`, through Django's test client: a local issuer made here (keys
generated here, JWKS served on loopback), tenants in the test database, TomTom the loopback stub.

Every refusal is checked for what a host sees (status, `WWW-Authenticate`) and for what must not
happen: nothing reaches TomTom. The fixtures are in tests/oauth/conftest.py.
"""

from __future__ import annotations

import json
import logging
import time

import pytest
from django.test import AsyncClient

from protocol import http
from tenants.models import Tenant, TenantKey
from tests.conftest import CANARY_KEY, data
from tests.support import logs
from tests.support.signing_in import GEOCODE, LIST, RESOURCE, Later, assert_refused, post, result_of

pytestmark = pytest.mark.django_db(transaction=True)


async def test_metadata_names_this_resource_and_its_issuer(sign_in, issuer):
    for path in ("/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp"):
        response = await AsyncClient().get(path)
        assert response.status_code == 200
        assert response.json() == {
            "resource": RESOURCE,
            "authorization_servers": [issuer.url],  # exactly as configured: issuers compare as strings
            "scopes_supported": ["maps"],
            "bearer_methods_supported": ["header"],
            "resource_name": "TomTom Maps MCP server",
        }
        assert response["Access-Control-Allow-Origin"] == "*"


async def test_metadata_is_not_served_without_sign_in(settings):
    settings.MCP_AUTH = ["api-key"]
    http.mcp_endpoint.cache_clear()
    try:
        assert (await AsyncClient().get("/.well-known/oauth-protected-resource/mcp")).status_code == 404
    finally:
        http.mcp_endpoint.cache_clear()


async def test_no_token_is_challenged_to_sign_in(tenant, stub):
    response = await post(GEOCODE)
    assert response.status_code == 401
    assert response["WWW-Authenticate"] == (
        'Bearer resource_metadata="http://testserver/.well-known/oauth-protected-resource/mcp", scope="maps"'
    )
    assert stub.requests == []  # hosted: the server's own key is never a way in


async def test_a_valid_token_spends_the_tenants_key(tenant, issuer, stub, caplog):
    caplog.set_level(logging.DEBUG)
    token = issuer.token(aud=RESOURCE)
    response = await post(GEOCODE, token)
    assert result_of(response)["results"]
    assert stub.requests[-1].api_key == CANARY_KEY
    sent = json.dumps([r.headers for r in stub.requests]) + json.dumps([r.query for r in stub.requests])
    assert token not in sent  # the access token never leaves this server
    logged = [r for r in caplog.records if r.getMessage() == "Tool call"]
    assert logs.fields(logged[-1])["tenant"] == "Acme"
    # the canary: the tenant's key is in no result, header or log line
    assert CANARY_KEY not in response.content.decode()
    assert CANARY_KEY not in json.dumps(dict(response.headers))
    assert CANARY_KEY not in caplog.text


async def test_a_token_listing_and_calls_follow_the_tenants_terms(tenant, issuer, stub):
    tenant.allowed_tools = ["tomtom-geocode"]
    tenant.default_backend = "tomtom-maps"
    await tenant.asave()
    token = issuer.token(aud=RESOURCE)
    listed = (await post(LIST, token)).json()["result"]["tools"]
    assert "tomtom-geocode" in {t["name"] for t in listed}
    assert "tomtom-routing" not in {t["name"] for t in listed}
    routing = {**GEOCODE, "params": {"name": "tomtom-routing", "arguments": {"locations": [[4.9, 52.3], [4.8, 52.4]]}}}
    error = result_of(await post(routing, token))["error"]
    # only what this caller is offered: the allowed tool, and the map widget's own helpers
    assert error["code"] == "unknown_tool" and error["tools"] == [t["name"] for t in listed]
    stub.route("GET", r"/search/2/geocode/.*", json_body=data("geocode.json"))
    assert result_of(await post(GEOCODE, token))["results"]
    assert stub.requests[-1].path.startswith("/search/2/geocode/")  # the tenant's default backend


@pytest.mark.parametrize(
    ("case", "status", "error"),
    [
        ("expired", 401, "invalid_token"),
        ("not yet valid", 401, "invalid_token"),
        ("wrong iss", 401, "invalid_token"),
        ("wrong aud", 401, "invalid_token"),
        ("no aud", 401, "invalid_token"),
        ("no exp", 401, "invalid_token"),
        ("missing scope", 403, "insufficient_scope"),
        ("alg none", 401, "invalid_token"),
        ("HS256 with the public key", 401, "invalid_token"),
        ("bad signature", 401, "invalid_token"),
        ("not a JWT", 401, "invalid_token"),
        ("no tenant claim", 401, "invalid_token"),
        ("unknown tenant", 403, "access_denied"),
    ],
)
async def test_a_bad_token_is_refused(tenant, issuer, stub, case, status, error):
    now = int(time.time())
    token = {
        "expired": lambda: issuer.token(aud=RESOURCE, exp=now - 120),
        "not yet valid": lambda: issuer.token(aud=RESOURCE, nbf=now + 120),
        "wrong iss": lambda: issuer.token(aud=RESOURCE, iss="http://127.0.0.1:1/other"),
        "wrong aud": lambda: issuer.token(aud="http://testserver/other-mcp"),
        "no aud": lambda: issuer.token(),
        "no exp": lambda: issuer.token(aud=RESOURCE, exp=None),
        "missing scope": lambda: issuer.token(aud=RESOURCE, scope="profile"),
        "alg none": lambda: issuer.unsigned_token(aud=RESOURCE),
        "HS256 with the public key": lambda: issuer.hs256_with_public_key(aud=RESOURCE),
        "bad signature": lambda: issuer.token(aud=RESOURCE)[:-6] + "AAAAAA",
        "not a JWT": lambda: "not-a.jwt-at.all",
        "no tenant claim": lambda: issuer.token(aud=RESOURCE, sub=None),
        "unknown tenant": lambda: issuer.token(aud=RESOURCE, sub="nobody"),
    }[case]()
    body = assert_refused(await post(GEOCODE, token), status, error, stub)
    if case == "missing scope":
        assert "maps" in body["error_description"]


DEEP = [[]]
for _ in range(100):
    DEEP = [DEEP]


@pytest.mark.parametrize(
    ("header", "claims", "signed", "description"),
    [
        ({"alg": "RS256", "kid": 5}, {}, False, "kid is not a string"),
        ({"alg": "RS256", "kid": ["a"]}, {}, False, "kid is not a string"),
        ({"alg": "RS256", "kid": {"k": 1}}, {}, True, "kid is not a string"),
        ({"alg": "RS256", "kid": "k" * 300}, {}, True, "kid is not a string of at most 255 characters"),
        ({"alg": "RS256", "crit": ["exp"], "exp": 1}, {}, False, "critical extensions (crit)"),
        ({"alg": "RS256", "crit": ["b64"], "b64": False}, {}, True, "critical extensions (crit)"),
        ({"alg": "RS256", "crit": []}, {}, True, "critical extensions (crit)"),
        ({"alg": "RS256", "crit": "exp"}, {}, True, "critical extensions (crit)"),
        ({"alg": ["RS256"]}, {}, True, "alg is not one of RS256, ES256, PS256, EdDSA"),
        ({"alg": "RS256", "x5c": DEEP}, {}, False, "nested too deeply"),
        ({"alg": "RS256"}, {"deep": DEEP}, True, "nested too deeply"),
        (b'{"alg": "RS256", "x": NaN}', {}, True, "not a JWT"),
        ({"alg": "RS256"}, b'{"exp": Infinity, "sub": "acme"}', True, "not a JWT"),
        (b'{"alg": "RS256", "kid": "\\ud800"}', {}, True, "not a JWT"),
        (b"[1, 2]", {}, True, "not a JWT"),
        ({"alg": "RS256"}, b'"just a string"', True, "not a JWT"),
    ],
    ids=[
        "kid a number",
        "kid a list",
        "kid an object",
        "kid too long",
        "crit, unsigned",
        "crit b64",
        "crit empty",
        "crit a string",
        "alg a list",
        "header nested 100 deep",
        "claims nested 100 deep",
        "NaN in the header",
        "Infinity exp",
        "a lone surrogate",
        "header a list",
        "claims a string",
    ],
)
async def test_a_malformed_token_header_or_claims_is_refused(tenant, issuer, stub, header, claims, signed, description):
    """Whatever a token's header or claims hold: 401 `invalid_token` with the challenge, never a 500."""
    if isinstance(header, dict):
        header = {"kid": issuer.kid, "typ": "JWT", **header}
    if isinstance(claims, dict):
        claims = {**issuer.claims(aud=RESOURCE), **claims}
    token = issuer.raw_token(header, claims, signed=signed)
    body = assert_refused(await post(GEOCODE, token), 401, "invalid_token", stub)
    assert description in body["error_description"]


@pytest.mark.parametrize("authorization", ["Basic YWNtZTpzZWNyZXQ=", "Bearer", "Bearer a.b", "token abc"])
async def test_a_malformed_authorization_header_is_refused(tenant, stub, authorization):
    response = await post(GEOCODE, headers={"Authorization": authorization})
    assert_refused(response, 401, None, stub)


async def test_a_header_key_is_no_way_in_when_only_oauth_is_on(tenant, stub):
    response = await post(GEOCODE, headers={"tomtom-api-key": "some-key"})
    assert_refused(response, 401, None, stub)


async def test_a_disabled_tenant_is_refused_at_once(tenant, issuer, stub):
    token = issuer.token(aud=RESOURCE)
    assert result_of(await post(GEOCODE, token))["results"]
    stub.requests.clear()
    await Tenant.objects.filter(pk=tenant.pk).aupdate(enabled=False)  # what the admin's action does
    assert_refused(await post(GEOCODE, token), 403, "access_denied", stub)


def key_cache():
    return http.mcp_endpoint().settings.sign_in.resource_server.jwks


async def test_jwks_rotation_new_kid_is_fetched_and_an_unknown_kid_refused(tenant, issuer, stub):
    jwks = key_cache()
    clock = Later(jwks)
    assert result_of(await post(GEOCODE, issuer.token(aud=RESOURCE)))["results"]
    fetches = issuer.jwks_fetches
    old_key, old_kid = issuer.rotate()
    try:
        # a token signed with the new key: its kid is unknown to the cache, which is fetched again
        clock.skip(jwks.min_refetch)  # once the cooldown since the last fetch has passed
        assert result_of(await post(GEOCODE, issuer.token(aud=RESOURCE)))["results"]
        assert issuer.jwks_fetches == fetches + 1
        stub.requests.clear()
        # the retired key is no longer published: its kid is unknown even after the fetch
        clock.skip(jwks.min_refetch)
        retired = issuer.token(aud=RESOURCE, key=old_key, kid=old_kid)
        assert_refused(await post(GEOCODE, retired), 401, "invalid_token", stub)
        assert issuer.jwks_fetches == fetches + 2
        # and a flood of made-up kids within the cooldown does not fetch the JWKS again and again
        for _ in range(5):
            assert_refused(await post(GEOCODE, issuer.token(aud=RESOURCE, kid="made-up")), 401, "invalid_token", stub)
        assert issuer.jwks_fetches == fetches + 2
    finally:
        issuer.key, issuer.kid = old_key, old_kid


async def test_over_quota_is_retry_later(tenant, issuer, stub):
    tenant.calls_per_minute = 2
    await tenant.asave()
    token = issuer.token(aud=RESOURCE)
    results = [result_of(await post(GEOCODE, token)) for _ in range(3)]
    assert [("error" in r) for r in results] == [False, False, True]
    error = results[2]["error"]
    assert error["code"] == "retry_later"
    assert 1 <= error["retry_after"] <= 61
    assert "2 calls per minute" in error["message"]
    assert len(stub.requests) == 2
    assert (await post(LIST, token)).status_code == 200  # listing is not a call


async def test_a_tenant_without_a_key_is_unauthorized_not_the_servers_key(tenant, issuer, stub):
    await TenantKey.objects.filter(tenant=tenant).aupdate(active=False)
    error = result_of(await post(GEOCODE, issuer.token(aud=RESOURCE)))["error"]
    assert error["code"] == "unauthorized"
    assert "operator" in error["message"]
    assert stub.requests == []


async def test_both_modes_take_a_header_key_or_a_token(tenant, issuer, stub, settings):
    settings.MCP_AUTH = ["api-key", "oauth"]
    http.mcp_endpoint.cache_clear()
    assert result_of(await post(GEOCODE, headers={"tomtom-api-key": "header-key"}))["results"]
    assert stub.requests[-1].api_key == "header-key"
    assert result_of(await post(GEOCODE, issuer.token(aud=RESOURCE)))["results"]
    assert stub.requests[-1].api_key == CANARY_KEY
    stub.requests.clear()
    assert_refused(await post(GEOCODE), 401, None, stub)  # neither: challenged, never the server's key
    assert_refused(await post(GEOCODE, issuer.token(aud=RESOURCE, exp=1)), 401, "invalid_token", stub)


async def test_the_sdk_client_discovers_sign_in_from_the_401_and_calls_a_tool(tenant, issuer, stub):
    """The SDK's own HTTP client with its OAuth provider (client credentials): 401 -> protected
    resource metadata -> the issuer's metadata -> a token for this resource -> the tool call."""
    import httpx2
    from mcp import Client
    from mcp.client.auth.extensions.client_credentials import ClientCredentialsOAuthProvider
    from mcp.client.streamable_http import streamable_http_client

    from tomtom_mcp.asgi import application

    class Memory:
        tokens = client = None

        async def get_tokens(self):
            return self.tokens

        async def set_tokens(self, tokens):
            self.tokens = tokens

        async def get_client_info(self):
            return self.client

        async def set_client_info(self, info):
            self.client = info

    issuer.clients["acme"] = "s3cret"
    auth = ClientCredentialsOAuthProvider(
        server_url=RESOURCE, storage=Memory(), client_id="acme", client_secret="s3cret", issuer=issuer.url, scope="maps"
    )
    mounts = {"http://testserver": httpx2.ASGITransport(app=application)}
    async with (
        httpx2.AsyncClient(auth=auth, mounts=mounts, timeout=30) as http_client,
        Client(streamable_http_client(RESOURCE, http_client=http_client), mode="legacy") as client,
    ):
        result = await client.call_tool("tomtom-geocode", {"query": "Dam"})
    assert result.is_error is False
    assert json.loads(result.content[0].text)["results"]
    assert issuer.token_requests[-1]["resource"] == RESOURCE  # RFC 8707: a token for this resource only
    assert stub.requests[-1].api_key == CANARY_KEY
