"""The built-in authorization server (OAUTH_BUILTIN, authserver/) through Django's test client:
metadata, registration, sign-in and consent, the code exchange with PKCE, refresh rotation,
revocation, and its tokens at `/mcp` next to everything they must not open.

Each test checks what a client or a person sees: the status, the OAuth error code, where the
browser is sent, what the page says; and that nothing reaches TomTom when a call is refused.
"""

from __future__ import annotations

import base64
import hashlib
import json
import logging
import secrets
import time
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import jwt
import pytest
from django.core import checks
from django.test import Client

from authserver import services, tokens
from authserver.checks import check_builtin
from authserver.models import AuthorizationCode, Grant, OAuthClient, RefreshToken
from protocol import http
from tenants.models import TenantMember
from tests.conftest import CANARY_KEY
from tests.oauth.conftest import acme
from tests.support import logs
from tests.support.signing_in import ACCEPT, CHALLENGE, GEOCODE, LIST, RESOURCE, SERVER_KEY
from tests.support.tomtom_stub import TomTomStub

pytestmark = pytest.mark.django_db(transaction=True)

ISSUER = "http://testserver"
REDIRECT = "http://127.0.0.1/callback"
PASSWORD = "correct horse battery staple"


@pytest.fixture
def builtin(settings, stub):
    """`/mcp` signed in through the built-in authorization server (a fresh endpoint)."""
    settings.MCP_AUTH = ["oauth"]
    settings.MCP_HOSTED = True
    settings.OAUTH_BUILTIN = True
    settings.OAUTH_ISSUER = None
    settings.OAUTH_JWKS_URL = None
    settings.OAUTH_RESOURCE = RESOURCE
    settings.OAUTH_AUTHORIZATION_SERVERS = []
    settings.OAUTH_REQUIRED_SCOPES = ["mcp"]
    settings.OAUTH_BUILTIN_REVOCATION_SECONDS = 0  # every request re-reads the revoked grants: no waiting in tests
    settings.TOMTOM_API_BASE_URL = stub.base_url
    settings.TOMTOM_API_KEY = SERVER_KEY
    http.mcp_endpoint.cache_clear()
    yield settings
    http.mcp_endpoint.cache_clear()
    from tenants.store import close_connections

    close_connections()


@pytest.fixture
def tenant(builtin):
    return acme()


@pytest.fixture
def person(tenant, django_user_model):
    user = django_user_model.objects.create_user("ada", "ada@example.com", PASSWORD)
    TenantMember.objects.create(user=user, tenant=tenant)
    return user


def pkce() -> tuple[str, str]:
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    return verifier, challenge


def register(client: Client, **metadata: Any) -> Any:
    body = {"client_name": "Claude", "redirect_uris": [REDIRECT], **metadata}
    return client.post("/oauth/register", json.dumps(body), content_type="application/json")


def authorize_query(client_id: str, challenge: str, **extra: str) -> dict[str, str]:
    return {
        "response_type": "code",
        "client_id": client_id,
        "redirect_uri": "http://127.0.0.1:53682/callback",  # any loopback port (RFC 8252 §7.3)
        "code_challenge": challenge,
        "code_challenge_method": "S256",
        "state": "xyz-42",
        "scope": "mcp",
        "resource": RESOURCE,
        **extra,
    }


def query_of(location: str) -> dict[str, str]:
    return {name: values[0] for name, values in parse_qs(urlsplit(location).query).items()}


def sign_in_and_allow(browser: Client, client_id: str, challenge: str, **extra: str) -> dict[str, str]:
    """The person's browser: authorize, sign in when asked, allow; the query it is sent back with."""
    params = authorize_query(client_id, challenge, **extra)
    page = browser.get("/oauth/authorize", params)
    if page.status_code == 302 and page["Location"].startswith("/oauth/login"):
        login = browser.post(
            page["Location"], {"username": "ada", "password": PASSWORD, "next": query_of(page["Location"])["next"]}
        )
        assert login.status_code == 302
        page = browser.get(login["Location"])
    assert page.status_code == 200, page.content
    decided = browser.post("/oauth/authorize", {**params, "decision": "allow"})
    assert decided.status_code == 302
    assert decided["Location"].startswith("http://127.0.0.1:53682/callback?")
    return query_of(decided["Location"])


def exchange(client: Client, **form: str) -> Any:
    return client.post("/oauth/token", urlencode(form), content_type="application/x-www-form-urlencoded")


def mcp(client: Client, message: dict[str, Any], token: str | None) -> Any:
    headers = {**ACCEPT, "Host": "testserver"}  # the sync client names no Host unless told; /mcp needs one
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    return client.post("/mcp", json.dumps(message), content_type="application/json", headers=headers)


def signed_in(client_id: str | None = None) -> tuple[Client, str, dict[str, Any]]:
    """A registered client signed in end to end: its id and the token answer."""
    api = Client()
    if client_id is None:
        client_id = register(api).json()["client_id"]
    verifier, challenge = pkce()
    back = sign_in_and_allow(Client(), client_id, challenge)
    answer = exchange(
        api,
        grant_type="authorization_code",
        code=back["code"],
        redirect_uri="http://127.0.0.1:53682/callback",
        client_id=client_id,
        code_verifier=verifier,
        resource=RESOURCE,
    )
    assert answer.status_code == 200, answer.content
    return api, client_id, answer.json()


def assert_refused_at_mcp(response: Any, stub: TomTomStub, error: str = "invalid_token") -> None:
    assert response.status_code == 401, response.content
    assert response["WWW-Authenticate"].startswith(CHALLENGE)
    assert f'error="{error}"' in response["WWW-Authenticate"]
    assert stub.requests == []


# --- metadata ------------------------------------------------------------------------------------


def test_metadata_describes_the_built_in_server(builtin):
    response = Client().get("/.well-known/oauth-authorization-server")
    assert response.status_code == 200
    assert response.json() == {
        "issuer": ISSUER,
        "authorization_endpoint": f"{ISSUER}/oauth/authorize",
        "token_endpoint": f"{ISSUER}/oauth/token",
        "registration_endpoint": f"{ISSUER}/oauth/register",
        "revocation_endpoint": f"{ISSUER}/oauth/revoke",
        "scopes_supported": ["mcp"],
        "response_types_supported": ["code"],
        "response_modes_supported": ["query"],
        "grant_types_supported": ["authorization_code", "refresh_token"],
        "token_endpoint_auth_methods_supported": ["none"],
        "revocation_endpoint_auth_methods_supported": ["none"],
        "code_challenge_methods_supported": ["S256"],
        "authorization_response_iss_parameter_supported": True,
        "client_id_metadata_document_supported": True,
    }
    resource = Client().get("/.well-known/oauth-protected-resource/mcp").json()
    assert resource["authorization_servers"] == [ISSUER]


def test_nothing_is_served_while_the_built_in_server_is_off(settings):
    settings.OAUTH_BUILTIN = False
    for path in ("/.well-known/oauth-authorization-server", "/oauth/authorize", "/oauth/login"):
        assert Client().get(path).status_code == 404
    assert Client().post("/oauth/token", {"grant_type": "authorization_code"}).status_code == 404
    assert register(Client()).status_code == 404


def test_a_401_from_mcp_leads_to_the_authorization_server(builtin, stub):
    response = mcp(Client(), LIST, None)
    assert response.status_code == 401
    assert response["WWW-Authenticate"].startswith(CHALLENGE)
    metadata_url = CHALLENGE.split('"')[1].replace("http://testserver", "")
    assert Client().get(metadata_url).json()["authorization_servers"] == [ISSUER]


# --- registration ----------------------------------------------------------------------------------


def test_registration_answers_a_public_client(builtin, caplog):
    caplog.set_level(logging.INFO)
    response = register(Client(), token_endpoint_auth_method="none", client_uri="https://claude.ai")
    assert response.status_code == 201
    body = response.json()
    assert body["client_name"] == "Claude"
    assert body["redirect_uris"] == [REDIRECT]
    assert body["token_endpoint_auth_method"] == "none"
    assert body["grant_types"] == ["authorization_code", "refresh_token"]
    assert "client_secret" not in body
    assert OAuthClient.objects.get(client_id=body["client_id"]).kind == OAuthClient.REGISTERED
    [line] = [r for r in caplog.records if r.getMessage() == "OAuth client registered"]
    assert logs.fields(line) == {"client_id": body["client_id"], "kind": "registered", "redirect_uris": 1}


@pytest.mark.parametrize(
    ("metadata", "error"),
    [
        ({"redirect_uris": []}, "invalid_redirect_uri"),
        ({"redirect_uris": ["http://evil.example/cb"]}, "invalid_redirect_uri"),  # http off loopback
        ({"redirect_uris": ["https://app.example/cb#frag"]}, "invalid_redirect_uri"),
        ({"redirect_uris": ["javascript:alert(1)"]}, "invalid_redirect_uri"),
        ({"redirect_uris": [f"https://app.example/{i}" for i in range(11)]}, "invalid_redirect_uri"),
        ({"redirect_uris": ["https://app.example/" + "a" * 2048]}, "invalid_redirect_uri"),
        ({"client_name": "x" * 201}, "invalid_client_metadata"),
        ({"grant_types": ["password"]}, "invalid_client_metadata"),
        ({"grant_types": ["implicit"]}, "invalid_client_metadata"),
        ({"response_types": ["token"]}, "invalid_client_metadata"),
        ({"token_endpoint_auth_method": "private_key_jwt"}, "invalid_client_metadata"),
        ({"scope": "admin"}, "invalid_client_metadata"),
    ],
)
def test_registration_refuses_metadata_it_cannot_honour(builtin, metadata, error):
    response = register(Client(), **metadata)
    assert response.status_code == 400
    assert response.json()["error"] == error
    assert OAuthClient.objects.count() == 0


def test_registration_refuses_what_is_not_a_json_object(builtin):
    for body, content_type in (("[]", "application/json"), ("{", "application/json"), ("a=b", "text/plain")):
        response = Client().post("/oauth/register", body, content_type=content_type)
        assert (response.status_code, response.json()["error"]) == (400, "invalid_client_metadata")
    big = json.dumps({"redirect_uris": [REDIRECT], "client_name": "x", "software_id": "y" * 20_000})
    response = Client().post("/oauth/register", big, content_type="application/json")
    assert (response.status_code, response.json()["error"]) == (400, "invalid_client_metadata")


# --- authorize: the page a person sees --------------------------------------------------------------


def test_sign_in_then_consent_shows_who_what_and_where(person):
    client_id = register(Client()).json()["client_id"]
    _verifier, challenge = pkce()
    browser = Client(enforce_csrf_checks=True)
    params = authorize_query(client_id, challenge)
    first = browser.get("/oauth/authorize", params)
    assert first.status_code == 302
    assert first["Location"].startswith("/oauth/login?next=/oauth/authorize%3F")
    login_page = browser.get(first["Location"])
    assert login_page.status_code == 200
    assert b"Sign in to TomTom Maps MCP" in login_page.content
    login = browser.post(
        "/oauth/login",
        {
            "username": "ada",
            "password": PASSWORD,
            "next": query_of(first["Location"])["next"],
            "csrfmiddlewaretoken": login_page.context["csrf_token"],
        },
    )
    assert login.status_code == 302
    page = browser.get(login["Location"])
    text = page.content.decode()
    assert page.status_code == 200
    assert "Allow Claude to use TomTom Maps MCP?" in text
    assert "Signed in as <strong>ada</strong>" in text
    assert "Not you? Sign out" in text
    assert "registered itself with this server" in text
    assert "<strong>127.0.0.1:53682</strong>" in text  # the redirect host
    assert "call this server's map tools as <strong>Acme</strong>, within your team's quotas" in text
    # CSRF is on: a decision posted without the page's token is refused, and no code is made
    forged = browser.post("/oauth/authorize", {**params, "decision": "allow"})
    assert forged.status_code == 403
    assert AuthorizationCode.objects.count() == 0
    allowed = browser.post(
        "/oauth/authorize", {**params, "decision": "allow", "csrfmiddlewaretoken": page.context["csrf_token"]}
    )
    back = query_of(allowed["Location"])
    assert allowed.status_code == 302
    assert set(back) == {"code", "state", "iss"}
    assert (back["state"], back["iss"]) == ("xyz-42", ISSUER)
    # only the code's hash is stored
    assert AuthorizationCode.objects.get().code_hash == hashlib.sha256(back["code"].encode()).hexdigest()


def test_deny_goes_back_with_access_denied_and_the_state(person):
    client_id = register(Client()).json()["client_id"]
    browser = Client()
    browser.force_login(person)
    params = authorize_query(client_id, pkce()[1])
    response = browser.post("/oauth/authorize", {**params, "decision": "deny"})
    assert response.status_code == 302
    back = query_of(response["Location"])
    assert (back["error"], back["state"]) == ("access_denied", "xyz-42")
    assert Grant.objects.count() == 0


@pytest.mark.parametrize(
    ("change", "error"),
    [
        ({"code_challenge_method": "plain"}, "invalid_request"),
        ({"code_challenge_method": ""}, "invalid_request"),
        ({"code_challenge": ""}, "invalid_request"),
        ({"code_challenge": "a" * 42}, "invalid_request"),
        ({"code_challenge": "a" * 42 + "="}, "invalid_request"),
        ({"response_type": "token"}, "unsupported_response_type"),  # no implicit grant
        ({"scope": "mcp admin"}, "invalid_scope"),
        ({"resource": "https://other.example/mcp"}, "invalid_target"),
    ],
)
def test_bad_requests_go_back_to_the_verified_redirect_with_a_code(person, change, error):
    client_id = register(Client()).json()["client_id"]
    browser = Client()
    browser.force_login(person)
    response = browser.get("/oauth/authorize", authorize_query(client_id, pkce()[1], **change))
    assert response.status_code == 302
    assert response["Location"].startswith("http://127.0.0.1:53682/callback?")
    back = query_of(response["Location"])
    assert (back["error"], back["state"], back["iss"]) == (error, "xyz-42", ISSUER)


@pytest.mark.parametrize(
    "redirect_uri",
    [
        "http://127.0.0.1:53682/callback/other",  # another path
        "http://127.0.0.1:53682/callback?x=1",  # another query
        "http://localhost:53682/callback",  # another loopback host than registered
        "https://127.0.0.1/callback",  # another scheme
        "http://evil.example/callback",
    ],
)
def test_a_redirect_not_registered_is_shown_never_followed(person, redirect_uri):
    client_id = register(Client()).json()["client_id"]
    browser = Client()
    browser.force_login(person)
    response = browser.get("/oauth/authorize", authorize_query(client_id, pkce()[1], redirect_uri=redirect_uri))
    assert response.status_code == 400
    assert "Location" not in response
    assert b"<code>invalid_request</code>" in response.content
    assert b"redirect_uri is not one this client registered" in response.content


def test_an_https_redirect_matches_exactly_port_included(person):
    client_id = register(Client(), redirect_uris=["https://app.example/cb"]).json()["client_id"]
    browser = Client()
    browser.force_login(person)
    good = browser.get("/oauth/authorize", authorize_query(client_id, pkce()[1], redirect_uri="https://app.example/cb"))
    assert good.status_code == 200
    bad = browser.get(
        "/oauth/authorize", authorize_query(client_id, pkce()[1], redirect_uri="https://app.example:8443/cb")
    )
    assert bad.status_code == 400


def test_an_unknown_or_revoked_client_is_shown_never_redirected(person):
    browser = Client()
    browser.force_login(person)
    response = browser.get("/oauth/authorize", authorize_query("no-such-client", pkce()[1]))
    assert response.status_code == 400
    assert b"<code>invalid_client</code>" in response.content
    client = services.register_client({"client_name": "Old", "redirect_uris": [REDIRECT]})
    services.revoke_client(client)
    response = browser.get("/oauth/authorize", authorize_query(client.client_id, pkce()[1]))
    assert response.status_code == 400
    assert b"The client&#x27;s registration is revoked" in response.content


def test_a_person_with_no_tenant_is_told_so_and_gets_no_grant(builtin, django_user_model):
    loner = django_user_model.objects.create_user("bob", "bob@example.com", PASSWORD)
    client_id = register(Client()).json()["client_id"]
    browser = Client()
    browser.force_login(loner)
    params = authorize_query(client_id, pkce()[1])
    for response in (
        browser.get("/oauth/authorize", params),
        browser.post("/oauth/authorize", {**params, "decision": "allow"}),
    ):
        assert response.status_code == 403
        assert b"does not belong to a team (tenant) of this server" in response.content
    assert Grant.objects.count() == 0


def test_a_disabled_tenant_gets_no_grant(person, tenant):
    tenant.enabled = False
    tenant.save()
    client_id = register(Client()).json()["client_id"]
    browser = Client()
    browser.force_login(person)
    response = browser.post("/oauth/authorize", {**authorize_query(client_id, pkce()[1]), "decision": "allow"})
    assert response.status_code == 403
    assert b"is disabled on this server" in response.content
    assert Grant.objects.count() == 0


# --- token: code exchange, refresh, revocation --------------------------------------------------------


def test_the_whole_flow_calls_tools_as_the_tenant(person, stub, caplog):
    caplog.set_level(logging.INFO)
    api, client_id, answer = signed_in()
    assert answer["token_type"] == "Bearer"
    assert answer["expires_in"] == 600
    assert answer["scope"] == "mcp"
    header = jwt.get_unverified_header(answer["access_token"])
    assert header["alg"] == "HS256" and header["typ"] == "at+jwt" and header["kid"].startswith("builtin-")
    claims = jwt.decode(answer["access_token"], options={"verify_signature": False})
    assert (claims["iss"], claims["aud"], claims["tenant"], claims["client_id"]) == (
        ISSUER,
        RESOURCE,
        "acme",
        client_id,
    )
    listed = mcp(api, LIST, answer["access_token"])
    assert listed.status_code == 200
    called = mcp(api, GEOCODE, answer["access_token"])
    assert called.status_code == 200, called.content
    assert stub.requests[-1].api_key == CANARY_KEY  # the tenant's key, not the server's
    # nothing stored can be replayed: refresh tokens only as hashes, access tokens not at all
    stored = RefreshToken.objects.get()
    assert stored.token_hash == hashlib.sha256(answer["refresh_token"].encode()).hexdigest()
    text = caplog.text
    assert answer["access_token"] not in text and answer["refresh_token"] not in text
    [issued] = [r for r in caplog.records if r.getMessage() == "OAuth grant issued"]
    assert logs.fields(issued) == {"grant": str(Grant.objects.get().pk), "client_id": client_id, "tenant": "Acme"}


def code_exchange(api: Client) -> dict[str, str]:
    """A registered client's token request for a fresh code the person allowed, verifier included."""
    client_id = register(api).json()["client_id"]
    verifier, challenge = pkce()
    code = sign_in_and_allow(Client(), client_id, challenge)["code"]
    return {
        "grant_type": "authorization_code",
        "code": code,
        "redirect_uri": "http://127.0.0.1:53682/callback",
        "client_id": client_id,
        "code_verifier": verifier,
    }


def test_a_code_works_once_and_a_replay_revokes_the_grant(person, stub):
    api = Client()
    form = code_exchange(api)
    client_id = form["client_id"]
    first = exchange(api, **form)
    assert first.status_code == 200
    again = exchange(api, **form)
    assert (again.status_code, again.json()["error"]) == (400, "invalid_grant")
    assert Grant.objects.get().revoked_at is not None
    assert_refused_at_mcp(mcp(api, GEOCODE, first.json()["access_token"]), stub)
    refreshed = exchange(
        api, grant_type="refresh_token", refresh_token=first.json()["refresh_token"], client_id=client_id
    )
    assert refreshed.json()["error"] == "invalid_grant"


@pytest.mark.parametrize(
    ("change", "error"),
    [
        ({"code_verifier": "wrong" * 10}, "invalid_grant"),
        ({"code_verifier": "short"}, "invalid_grant"),
        ({"code_verifier": None}, "invalid_grant"),
        ({"redirect_uri": "http://127.0.0.1:1/callback"}, "invalid_grant"),
        ({"code": "not-a-code"}, "invalid_grant"),
        ({"client_id": "someone-else"}, "invalid_client"),
        ({"resource": "https://other.example/mcp"}, "invalid_target"),
        ({"grant_type": "password"}, "unsupported_grant_type"),
        ({"grant_type": "client_credentials"}, "unsupported_grant_type"),
        ({"grant_type": None}, "invalid_request"),
    ],
)
def test_a_bad_exchange_gets_a_coded_error_and_no_token(person, change, error):
    api = Client()
    form = {**code_exchange(api), **change}
    response = exchange(api, **{k: v for k, v in form.items() if v is not None})
    assert response.status_code == 400
    assert response.json()["error"] == error
    assert "access_token" not in response.json()
    assert response["Cache-Control"] == "no-store"


def test_an_expired_code_is_refused(person, builtin):
    builtin.OAUTH_BUILTIN_CODE_SECONDS = -1  # born expired
    api = Client()
    client_id = register(api).json()["client_id"]
    verifier, challenge = pkce()
    code = sign_in_and_allow(Client(), client_id, challenge)["code"]
    response = exchange(
        api,
        grant_type="authorization_code",
        code=code,
        redirect_uri="http://127.0.0.1:53682/callback",
        client_id=client_id,
        code_verifier=verifier,
    )
    assert response.json() == {"error": "invalid_grant", "error_description": "The authorization code has expired"}


def test_refresh_rotates_and_reuse_kills_the_grant(person, stub, caplog):
    caplog.set_level(logging.INFO)
    api, client_id, first = signed_in()
    second = exchange(api, grant_type="refresh_token", refresh_token=first["refresh_token"], client_id=client_id)
    assert second.status_code == 200
    second = second.json()
    assert second["refresh_token"] != first["refresh_token"]
    assert mcp(api, LIST, second["access_token"]).status_code == 200
    # the first refresh token, presented again: someone holds a copy, so the grant dies
    reused = exchange(api, grant_type="refresh_token", refresh_token=first["refresh_token"], client_id=client_id)
    assert (reused.status_code, reused.json()["error"]) == (400, "invalid_grant")
    third = exchange(api, grant_type="refresh_token", refresh_token=second["refresh_token"], client_id=client_id)
    assert third.json()["error"] == "invalid_grant"
    assert_refused_at_mcp(mcp(api, GEOCODE, second["access_token"]), stub)
    grant = str(Grant.objects.get().pk)
    [line] = [r for r in caplog.records if r.getMessage() == "OAuth refresh reused"]
    assert logs.fields(line) == {"grant": grant, "client_id": client_id}
    [revoked] = [r for r in caplog.records if r.getMessage() == "OAuth grant revoked"]
    assert logs.fields(revoked) == {"grant": grant, "client_id": client_id, "reason": "refresh reused"}


def test_a_refresh_token_of_another_client_is_refused(person):
    api, _client_id, first = signed_in()
    other = register(api).json()["client_id"]
    response = exchange(api, grant_type="refresh_token", refresh_token=first["refresh_token"], client_id=other)
    assert response.json()["error"] == "invalid_grant"


def test_revocation_ends_the_grant(person, stub):
    api, client_id, answer = signed_in()
    response = api.post("/oauth/revoke", {"token": answer["refresh_token"], "client_id": client_id})
    assert response.status_code == 200
    assert_refused_at_mcp(mcp(api, GEOCODE, answer["access_token"]), stub)
    refreshed = exchange(api, grant_type="refresh_token", refresh_token=answer["refresh_token"], client_id=client_id)
    assert refreshed.json()["error"] == "invalid_grant"


def test_revoking_an_access_token_ends_its_grant_and_unknown_tokens_are_fine(person, stub):
    api, client_id, answer = signed_in()
    assert api.post("/oauth/revoke", {"token": "nothing-we-know", "client_id": client_id}).status_code == 200
    assert mcp(api, LIST, answer["access_token"]).status_code == 200
    assert api.post("/oauth/revoke", {"token": answer["access_token"], "client_id": client_id}).status_code == 200
    assert_refused_at_mcp(mcp(api, GEOCODE, answer["access_token"]), stub)
    assert api.post("/oauth/revoke", {"token": "x"}).json()["error"] == "invalid_client"


def test_a_disabled_tenant_is_refused_at_mcp_and_at_refresh(person, tenant, stub):
    api, client_id, answer = signed_in()
    tenant.enabled = False
    tenant.save()
    response = mcp(api, GEOCODE, answer["access_token"])
    assert response.status_code == 403
    assert 'error="access_denied"' in response["WWW-Authenticate"]
    assert stub.requests == []
    refreshed = exchange(api, grant_type="refresh_token", refresh_token=answer["refresh_token"], client_id=client_id)
    assert refreshed.json()["error"] == "invalid_grant"


# --- tokens at /mcp --------------------------------------------------------------------------------


def forged(**changes: Any) -> str:
    """A built-in-looking token signed with this server's key, claims changed as told."""
    from django.conf import settings

    key = tokens.derive_key(settings.SECRET_KEY)
    claims = {
        "iss": ISSUER,
        "aud": RESOURCE,
        "sub": "1",
        "tenant": "acme",
        "client_id": "c",
        "scope": "mcp",
        "gid": "00000000-0000-0000-0000-000000000000",
        "iat": int(time.time()),
        "exp": int(time.time()) + 600,
        "jti": "j",
    }
    claims.update(changes)
    return jwt.encode(
        {k: v for k, v in claims.items() if v is not None}, key.key, "HS256", {"typ": "at+jwt", "kid": key.kid}
    )


def test_a_well_formed_token_is_accepted_then_each_flaw_refused(tenant, stub):
    assert mcp(Client(), LIST, forged()).status_code == 200
    flawed = {
        "expired": forged(iat=int(time.time()) - 7200, exp=int(time.time()) - 3600),
        "another audience": forged(aud="https://other.example/mcp"),
        "another issuer": forged(iss="https://other.example"),
        "no tenant": forged(tenant=None),
    }
    token = forged()
    head, _claims, signature = token.split(".")
    flawed["tampered"] = ".".join(
        [
            head,
            base64.urlsafe_b64encode(b'{"iss":"http://testserver","tenant":"evil"}').rstrip(b"=").decode(),
            signature,
        ]
    )
    flawed["another key"] = jwt.encode(
        jwt.decode(token, options={"verify_signature": False}),
        b"k" * 32,
        "HS256",
        {"kid": tokens.derive_key("other secret").kid},
    )
    flawed["alg none"] = jwt.encode(
        jwt.decode(token, options={"verify_signature": False}), None, "none", {"kid": tokens.derive_key("x").kid}
    )
    for why, bad in flawed.items():
        response = mcp(Client(), GEOCODE, bad)
        assert response.status_code == 401, why
        assert response["WWW-Authenticate"].startswith(CHALLENGE), why
        assert 'error="invalid_token"' in response["WWW-Authenticate"], why
    assert stub.requests == []


def test_tokens_signed_under_a_fallback_secret_still_verify(tenant, builtin):
    old = forged()
    builtin.SECRET_KEY_FALLBACKS = [builtin.SECRET_KEY]
    builtin.SECRET_KEY = "a-new-secret-" + "x" * 40
    http.mcp_endpoint.cache_clear()
    assert mcp(Client(), LIST, old).status_code == 200
    builtin.SECRET_KEY_FALLBACKS = []
    http.mcp_endpoint.cache_clear()
    assert mcp(Client(), LIST, old).status_code == 401


def test_an_hs256_token_is_refused_on_the_external_path(tenant, stub):
    """Without the built-in kid, HMAC is never accepted, even with this server's key."""
    from django.conf import settings

    token = jwt.encode(
        jwt.decode(forged(), options={"verify_signature": False}),
        tokens.derive_key(settings.SECRET_KEY).key,
        "HS256",
        {"kid": "someone-else"},
    )
    assert_refused_at_mcp(mcp(Client(), GEOCODE, token), stub)


# --- system checks -----------------------------------------------------------------------------------


def test_a_coherent_builtin_setup_has_no_issue(builtin):
    builtin.OAUTH_RESOURCE = "https://mcp.example.com/mcp"
    builtin.OAUTH_BUILTIN_REVOCATION_SECONDS = 30
    assert check_builtin() == []
    builtin.OAUTH_RESOURCE = "http://127.0.0.1:8000/mcp"  # plain http on loopback: a laptop
    assert check_builtin() == []


def test_each_incoherent_builtin_setting_is_named(settings):
    settings.OAUTH_BUILTIN = True
    settings.MCP_AUTH = ["api-key"]
    settings.OAUTH_RESOURCE = None
    settings.OAUTH_REQUIRED_SCOPES = ["maps"]
    settings.OAUTH_BUILTIN_CODE_SECONDS = 3600
    assert check_builtin() == [
        checks.Error(
            "OAUTH_BUILTIN is on but OAUTH_RESOURCE is not set: the issuer is its origin.",
            hint="OAUTH_RESOURCE is this endpoint's public URL, e.g. https://mcp.example.com/mcp",
            id="authserver.E001",
        ),
        checks.Error(
            "OAUTH_BUILTIN is on but MCP_AUTH does not include oauth: no token it issues would be accepted.",
            hint="MCP_AUTH=oauth (or api-key,oauth)",
            id="authserver.E003",
        ),
        checks.Error("OAUTH_BUILTIN_CODE_SECONDS must be from 10 to 600 seconds, not 3600.", id="authserver.E005"),
        checks.Error(
            "OAUTH_REQUIRED_SCOPES names maps, but the built-in server's tokens carry only mcp.",
            hint="OAUTH_REQUIRED_SCOPES=mcp, or leave it empty",
            id="authserver.E006",
        ),
    ]


def test_another_issuer_and_plain_http_are_named(settings):
    settings.OAUTH_BUILTIN = True
    settings.MCP_AUTH = ["oauth"]
    settings.OAUTH_RESOURCE = "http://mcp.example.com/mcp"
    settings.OAUTH_ISSUER = "https://login.example.com"
    settings.OAUTH_REQUIRED_SCOPES = []
    assert check_builtin() == [
        checks.Error(
            "OAUTH_BUILTIN is on, so this server is the issuer (http://mcp.example.com); "
            "OAUTH_ISSUER names another (https://login.example.com).",
            hint="unset OAUTH_ISSUER and OAUTH_JWKS_URL: one authorization server at a time",
            id="authserver.E002",
        ),
        checks.Error(
            "OAUTH_RESOURCE 'http://mcp.example.com/mcp' is not https: "
            "sign-in pages and tokens would travel in the clear.",
            hint="serve it behind TLS (docs/oauth.md); http is allowed on loopback hosts only",
            id="authserver.E004",
        ),
    ]


def test_a_client_with_one_redirect_may_leave_it_out_at_both_steps(person):
    api = Client()
    client_id = register(api).json()["client_id"]
    verifier, challenge = pkce()
    browser = Client()
    browser.force_login(person)
    params = {k: v for k, v in authorize_query(client_id, challenge).items() if k != "redirect_uri"}
    decided = browser.post("/oauth/authorize", {**params, "decision": "allow"})
    assert decided["Location"].startswith(REDIRECT + "?")  # the one registered
    form = {"grant_type": "authorization_code", "client_id": client_id, "code_verifier": verifier}
    code = query_of(decided["Location"])["code"]
    # named at the token endpoint though it was not at authorize: refused (RFC 6749 §4.1.3)
    assert exchange(api, **form, code=code, redirect_uri=REDIRECT).json()["error"] == "invalid_grant"
    decided = browser.post("/oauth/authorize", {**params, "decision": "allow"})
    response = exchange(api, **form, code=query_of(decided["Location"])["code"])
    assert response.status_code == 200, response.content


def test_password_guessing_is_slowed_per_address(person, monkeypatch):
    from authserver import views

    monkeypatch.setattr(views, "LOGIN_ATTEMPTS", 2)
    browser = Client()
    for _ in range(2):
        wrong = browser.post("/oauth/login", {"username": "ada", "password": "guess"})
        assert wrong.status_code == 200
        assert b"did not match" in wrong.content
    refused = browser.post("/oauth/login", {"username": "ada", "password": PASSWORD})
    assert refused.status_code == 429
    assert refused["Retry-After"] == "600"
    assert b"Too many sign-in attempts" in refused.content
    assert "_auth_user_id" not in browser.session  # not signed in, even with the right password
    other = Client(REMOTE_ADDR="10.1.2.3")
    assert other.post("/oauth/login", {"username": "ada", "password": PASSWORD}).status_code == 302


def test_not_you_signs_out_and_comes_back_to_sign_in(person):
    client_id = register(Client()).json()["client_id"]
    browser = Client()
    browser.force_login(person)
    here = "/oauth/authorize?" + urlencode(authorize_query(client_id, pkce()[1]))
    out = browser.post("/oauth/logout", {"next": here})
    assert (out.status_code, out["Location"]) == (302, here)
    again = browser.get(here)
    assert again.status_code == 302
    assert again["Location"].startswith("/oauth/login?next=")


def test_nul_and_control_characters_are_coded_errors_not_500s(person):
    """PostgreSQL text cannot hold NUL: each is refused before a query sees it."""
    api = Client()
    assert exchange(api, grant_type="refresh_token", refresh_token="x", client_id="a\x00b").json() == {
        "error": "invalid_request",
        "error_description": "client_id contains a NUL character",
    }
    browser = Client()
    browser.force_login(person)
    page = browser.get("/oauth/authorize", authorize_query("a\x00b", pkce()[1]))
    assert (page.status_code, b"<code>invalid_request</code>" in page.content) == (400, True)
    named = register(api, client_name="Claude\x00")
    assert (named.status_code, named.json()["error"]) == (400, "invalid_client_metadata")
    nul_uri = register(api, redirect_uris=["https://app.example/\x00"])
    assert (nul_uri.status_code, nul_uri.json()["error"]) == (400, "invalid_redirect_uri")
    assert api.post("/oauth/revoke", {"token": "t\x00", "client_id": "c"}).json()["error"] == "invalid_request"
