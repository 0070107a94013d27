"""The built-in authorization server (OAUTH_BUILTIN) end to end: a real server process, the MCP
SDK's own OAuth client (`OAuthClientProvider`), and the test playing the person at the browser.

The client discovers sign-in from `/mcp`'s 401 (RFC 9728), reads the RFC 8414 metadata, registers
itself (RFC 7591) or names its Client ID Metadata Document, and hands the authorization URL to
its `redirect_handler`; the person (tests/support/authorizing.py) signs in with Django's login
form, allows on the consent page, and the redirect's `code` and `state` go back to the client's
`callback_handler`. Then the token, `tools/list`, a tool call spending the tenant's key, a
refresh. Refusals (replayed code, wrong verifier, a token for another resource, a tampered
token) are checked through raw HTTP, as a hostile client would send them.

The database is a fresh SQLite file migrated and seeded in a process of its own. The CIMD
document's URL names a public address; the server process reaches it through an HTTPS proxy
(`HTTPS_PROXY`, tests/support/authorizing.py's `Tunnel`) that sends that address to a local HTTPS
server, whose certificate authority the server process trusts (SSL_CERT_FILE). So the fetch takes
the production path, private ranges closed, and nothing leaves loopback.
"""

from __future__ import annotations

import base64
import json
import secrets
import tempfile
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

import httpx
import pytest

from tests.conftest import CANARY_KEY, free_port, server_process
from tests.support.authorizing import (
    ACCEPT,
    CLAIM,
    GEOCODE,
    LIST,
    LONER,
    PASSWORD,
    PUBLIC,
    REDIRECT,
    SECRET_KEY,
    USERNAME,
    Browser,
    Memory,
    Person,
    StandIns,
    Stuck,
    assert_challenged,
    call_mcp,
    mcp_session,
    pkce,
    provider,
    seeded_database,
    stand_ins,
    token_request,
)
from tests.support.chromium import NEEDS_CHROMIUM

pytestmark = pytest.mark.live_server_process


@dataclass
class Server:
    base: str
    stand_ins: StandIns

    @property
    def resource(self) -> str:
        return self.base + "/mcp"


@pytest.fixture(scope="module")
def server() -> Iterator[Server]:
    with tempfile.TemporaryDirectory() as folder, stand_ins() as outside:
        port = free_port()
        env = outside.env(port, f"sqlite:///{folder}/db.sqlite3")
        seeded_database(env)
        with server_process(env, port=port) as base:
            yield Server(base, outside)


async def sign_in_and_use(server: Server, client_metadata_url: str | None = None) -> tuple[Memory, Browser, Any]:
    """The whole first sign-in through the SDK client, then `tools/list` and a tool call; what
    the host stored, the browser (with the pages the person saw), the provider."""
    stub = server.stand_ins.stub
    storage = Memory()
    async with Person() as person:
        browser = Browser(person)
        auth = provider(server.base, browser, storage, client_metadata_url)
        requests_before = len(stub.requests)
        async with mcp_session(server.base, auth) as client:
            listed = await client.list_tools()
            assert "tomtom-geocode" in {tool.name for tool in listed.tools}
            result = await client.call_tool("tomtom-geocode", {"query": "Dam"})
    assert result.is_error is False, result.content
    assert json.loads(result.content[0].text)["results"]
    assert len(stub.requests) == requests_before + 1
    assert stub.requests[-1].api_key == CANARY_KEY  # the person's tenant's key
    assert len(browser.urls) == 1, "one sign-in, then the token"
    assert browser.redirects[0]["iss"] == server.base  # RFC 9207, which the SDK client checks
    login, consent = person.page("login").html, person.page("consent").html
    assert "csrfmiddlewaretoken" in login
    assert USERNAME in consent  # the signed-in person
    assert urlsplit(REDIRECT).hostname in consent  # where the client is sent back to
    return storage, browser, auth


async def test_the_sdk_client_registers_signs_in_calls_and_refreshes(server):
    storage, browser, auth = await sign_in_and_use(server)
    client_info = storage.client
    assert client_info.client_id and not client_info.client_id.startswith("https://")
    assert client_info.client_secret is None  # a public client
    assert "Test desktop client" in browser.person.page("consent").html
    first = storage.tokens
    assert first.refresh_token and first.access_token
    assert first.token_type.lower() == "bearer"

    # The host's record says the access token has expired (as it does `expires_in` seconds
    # later): the next request refreshes first, and the refreshed tokens work.
    auth.context.token_expiry_time = time.time() - 1
    async with mcp_session(server.base, auth) as client:
        result = await client.call_tool("tomtom-geocode", {"query": "Dam"})
    assert result.is_error is False, result.content
    second = storage.tokens
    assert second.access_token != first.access_token
    assert second.refresh_token != first.refresh_token  # rotated
    assert len(browser.urls) == 1, "a refresh, not a second sign-in"
    assert (await call_mcp(server.base, LIST, second.access_token)).status_code == 200

    # The rotated refresh token is refused, and its reuse ends the whole grant at once.
    client_id = client_info.client_id
    replay = await token_request(
        server.base, grant_type="refresh_token", refresh_token=first.refresh_token, client_id=client_id
    )
    assert replay.status_code == 400, replay.text
    assert replay.json()["error"] == "invalid_grant"
    again = await token_request(
        server.base, grant_type="refresh_token", refresh_token=second.refresh_token, client_id=client_id
    )
    assert again.status_code == 400, again.text
    assert again.json()["error"] == "invalid_grant"


async def test_a_cimd_client_signs_in_by_its_metadata_document(server):
    outside = server.stand_ins
    path = f"/clients/{secrets.token_hex(4)}.json"
    url = f"https://{PUBLIC}{path}"
    outside.document(
        path,
        {
            "client_id": url,
            "client_name": "Metadata Document Client",
            "client_uri": f"https://{PUBLIC}/",
            "redirect_uris": [REDIRECT],
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "token_endpoint_auth_method": "none",
        },
        {"Cache-Control": "max-age=600"},
    )
    fetched = len(outside.documents.seen)
    storage, browser, auth = await sign_in_and_use(server, client_metadata_url=url)
    assert storage.client.client_id == url  # no registration: the URL is the client's id
    assert "Metadata Document Client" in browser.person.page("consent").html  # from the document
    assert [s.path for s in outside.documents.seen[fetched:]][:1] == [path]
    assert f"{PUBLIC}:443" in outside.tunnel.tunnels  # fetched by the production path, through the proxy
    first = storage.tokens
    auth.context.token_expiry_time = time.time() - 1
    async with mcp_session(server.base, auth) as client:
        assert (await client.list_tools()).tools
    assert storage.tokens.refresh_token != first.refresh_token


async def test_the_metadata_advertises_what_the_client_needs(server):
    async with httpx.AsyncClient(timeout=30) as http:
        challenge = await http.post(server.resource, json=LIST, headers=ACCEPT)
        protected = (await http.get(server.base + "/.well-known/oauth-protected-resource/mcp")).json()
        metadata = (await http.get(server.base + "/.well-known/oauth-authorization-server")).json()
    assert challenge.status_code == 401
    assert (
        f'resource_metadata="{server.base}/.well-known/oauth-protected-resource/mcp"'
        in (challenge.headers["WWW-Authenticate"])
    )
    assert protected["resource"] == server.resource
    assert protected["authorization_servers"] == [server.base]
    assert metadata["issuer"] == server.base
    assert metadata["authorization_endpoint"] == server.base + "/oauth/authorize"
    assert metadata["token_endpoint"] == server.base + "/oauth/token"
    assert metadata["registration_endpoint"] == server.base + "/oauth/register"
    assert metadata["revocation_endpoint"] == server.base + "/oauth/revoke"
    assert metadata["code_challenge_methods_supported"] == ["S256"]
    assert metadata["client_id_metadata_document_supported"] is True
    assert metadata["response_types_supported"] == ["code"]
    assert set(metadata["grant_types_supported"]) == {"authorization_code", "refresh_token"}


# --- refusals through raw HTTP -----------------------------------------------------------------


async def registered_client(server: Server) -> str:
    async with httpx.AsyncClient(timeout=30) as http:
        response = await http.post(
            server.base + "/oauth/register",
            json={
                "client_name": "Raw client",
                "redirect_uris": [REDIRECT],
                "grant_types": ["authorization_code", "refresh_token"],
                "response_types": ["code"],
                "token_endpoint_auth_method": "none",
            },
        )
    assert response.status_code == 201, response.text
    return response.json()["client_id"]


async def authorization_code(server: Server, client_id: str, challenge: str, **extra: str) -> dict[str, str]:
    """The redirect's parameters after the person allows (an error when the server refuses)."""
    params = {
        "response_type": "code",
        "client_id": client_id,
        "redirect_uri": REDIRECT,
        "state": secrets.token_urlsafe(16),
        "code_challenge": challenge,
        "code_challenge_method": "S256",
        "resource": server.resource,
        "scope": "mcp",
        **extra,
    }
    async with Person() as person:
        redirect = await person.authorize(f"{server.base}/oauth/authorize?{urlencode(params)}")
    assert redirect.get("state") == params["state"]
    return redirect


async def test_a_person_in_no_tenant_is_told_so_and_the_client_gets_nothing(server):
    client_id = await registered_client(server)
    _, challenge = pkce()
    params = {
        "response_type": "code",
        "client_id": client_id,
        "redirect_uri": REDIRECT,
        "state": "s",
        "code_challenge": challenge,
        "code_challenge_method": "S256",
        "resource": server.resource,
        "scope": "mcp",
    }
    async with Person(LONER) as person:
        with pytest.raises(Stuck) as stuck:
            await person.authorize(f"{server.base}/oauth/authorize?{urlencode(params)}")
    assert stuck.value.page.status == 403
    assert "does not belong to a team" in stuck.value.page.html
    assert LONER in stuck.value.page.html


def exchange(client_id: str, code: str, verifier: str, resource: str) -> dict[str, str]:
    return {
        "grant_type": "authorization_code",
        "code": code,
        "redirect_uri": REDIRECT,
        "client_id": client_id,
        "code_verifier": verifier,
        "resource": resource,
    }


async def test_a_replayed_code_is_refused_and_ends_what_it_gave(server):
    client_id = await registered_client(server)
    verifier, challenge = pkce()
    code = (await authorization_code(server, client_id, challenge))["code"]
    first = await token_request(server.base, **exchange(client_id, code, verifier, server.resource))
    assert first.status_code == 200, first.text
    tokens = first.json()
    assert (await call_mcp(server.base, LIST, tokens["access_token"])).status_code == 200
    replayed = await token_request(server.base, **exchange(client_id, code, verifier, server.resource))
    assert replayed.status_code == 400, replayed.text
    assert replayed.json()["error"] == "invalid_grant"
    assert "access_token" not in replayed.json()
    # RFC 6749 §4.1.2: what the replayed code gave is revoked (its refresh token at once)
    refresh = await token_request(
        server.base, grant_type="refresh_token", refresh_token=tokens["refresh_token"], client_id=client_id
    )
    assert refresh.status_code == 400, refresh.text
    assert refresh.json()["error"] == "invalid_grant"


async def test_a_wrong_verifier_is_refused(server):
    client_id = await registered_client(server)
    _, challenge = pkce()
    code = (await authorization_code(server, client_id, challenge))["code"]
    other_verifier, _ = pkce()
    wrong = await token_request(server.base, **exchange(client_id, code, other_verifier, server.resource))
    assert wrong.status_code == 400, wrong.text
    assert wrong.json()["error"] == "invalid_grant"
    assert "access_token" not in wrong.json()


async def test_a_resource_other_than_this_server_is_refused(server):
    client_id = await registered_client(server)
    verifier, challenge = pkce()
    redirect = await authorization_code(server, client_id, challenge, resource="https://elsewhere.example/mcp")
    assert redirect["error"] == "invalid_target", redirect
    assert "code" not in redirect
    code = (await authorization_code(server, client_id, challenge))["code"]
    other = await token_request(server.base, **exchange(client_id, code, verifier, "https://elsewhere.example/mcp"))
    assert other.status_code == 400, other.text
    assert other.json()["error"] == "invalid_target"


def signed_token(server: Server, audience: str) -> str:
    """A token signed here with the key the server derives from its DJANGO_SECRET_KEY."""
    from authserver import tokens

    return tokens.issue(
        tokens.derive_key(SECRET_KEY),
        issuer=server.base,
        audience=audience,
        subject="1",
        tenant=CLAIM,
        client_id="made-here",
        scope="mcp",
        grant_id=str(uuid.uuid4()),
        lifetime=300,
    )


async def test_a_token_for_another_resource_is_refused(server):
    good = signed_token(server, server.resource)
    assert (await call_mcp(server.base, LIST, good)).status_code == 200  # signed as the server signs
    elsewhere = signed_token(server, "https://elsewhere.example/mcp")
    assert_challenged(await call_mcp(server.base, LIST, elsewhere), server.base)


async def test_a_tampered_token_is_refused(server):
    storage, _, _ = await sign_in_and_use(server)
    header, claims, signature = storage.tokens.access_token.split(".")
    flipped = signature[:-2] + ("A" if signature[-2] != "A" else "B") + signature[-1]
    assert_challenged(await call_mcp(server.base, LIST, f"{header}.{claims}.{flipped}"), server.base)
    raw = json.loads(base64.urlsafe_b64decode(claims + "=" * (-len(claims) % 4)))
    assert raw["tenant"] == CLAIM
    forged = base64.urlsafe_b64encode(json.dumps({**raw, "tenant": "someone-else"}).encode()).rstrip(b"=").decode()
    stub = server.stand_ins.stub
    before = len(stub.requests)
    assert_challenged(await call_mcp(server.base, GEOCODE, f"{header}.{forged}.{signature}"), server.base)
    assert len(stub.requests) == before


@pytest.mark.parametrize("width", [1280, 420])
@NEEDS_CHROMIUM[0]
@NEEDS_CHROMIUM[1]
def test_a_person_signs_in_and_allows_in_a_real_browser(server, browser, width):
    """Chromium, at a desktop's and a phone's width: the login form and the consent page post
    back with what a browser sends (its own `Origin`, per the page's referrer policy), Django's
    CSRF check accepts them, and the client gets a code that buys a working token."""
    client_id = httpx.post(
        server.base + "/oauth/register",
        json={"client_name": "Browser client", "redirect_uris": [REDIRECT], "token_endpoint_auth_method": "none"},
    ).json()["client_id"]
    verifier, challenge = pkce()
    state = secrets.token_urlsafe(16)
    params = {
        "response_type": "code",
        "client_id": client_id,
        "redirect_uri": REDIRECT,
        "state": state,
        "code_challenge": challenge,
        "code_challenge_method": "S256",
        "resource": server.resource,
        "scope": "mcp",
    }
    returned: list[str] = []
    page = browser.new_page(viewport={"width": width, "height": 800})
    page.route(REDIRECT + "*", lambda route: (returned.append(route.request.url), route.fulfill(body="signed in")))
    page.goto(f"{server.base}/oauth/authorize?{urlencode(params)}")
    page.get_by_label("User name").fill(USERNAME)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    page.get_by_role("button", name="Allow").click()
    page.wait_for_url(REDIRECT + "*")
    assert len(returned) == 1, page.content()
    query = dict(parse_qsl(urlsplit(returned[0]).query))
    assert query["state"] == state
    tokens = httpx.post(
        server.base + "/oauth/token", data=exchange(client_id, query["code"], verifier, server.resource)
    )
    assert tokens.status_code == 200, tokens.text
    listed = httpx.post(
        server.resource, json=LIST, headers={**ACCEPT, "Authorization": f"Bearer {tokens.json()['access_token']}"}
    )
    assert listed.status_code == 200, listed.text
