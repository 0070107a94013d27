"""Signing in to the built-in authorization server (authserver, OAUTH_BUILTIN) the way a person
does it in a browser, and a server process set up for it.

    person = Person("ada", PASSWORD)
    redirect = await person.authorize(url)   # login form, consent page, Allow -> the redirect's query
    redirect["code"], redirect["state"], person.pages   # every page seen, for what it shows

`Person` is an httpx client keeping cookies: it follows the server's own redirects, fills the
login form (with the CSRF token the form carries), then presses the consent page's button
(`decision`: "allow" or "deny") and stops at the first redirect that leaves the server — the
client's redirect URI, which nothing needs to listen on.

`seeded_database(env)` migrates the database of `env` (a fresh SQLite file or PostgreSQL
database) and creates in it, in a process of its own with the server's settings, a person who
belongs to a tenant with a TomTom key (`seed`), so a server process started with `env` finds them.

`stand_ins()` starts what a server process under test talks to (the TomTom stub, the CIMD
documents' HTTPS server, the tunnel to it) and `StandIns.env(port, database)` is the server's
environment for them; `Browser`, `provider` and `mcp_session` are the SDK client's side.

`Tunnel(dial)` is an HTTPS proxy on loopback (`CONNECT` only) whose `dial` table sends a public
address to a loopback server: a server process given `HTTPS_PROXY` fetches a Client ID Metadata
Document from `https://<public address>/...` by the production path (the address checked public,
the tunnel to the pinned address, the certificate checked against SSL_CERT_FILE's authority),
and the document is served by a local `LocalHttps`.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import os
import secrets
import select
import socket
import subprocess
import sys
import threading
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from html.parser import HTMLParser
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, urljoin, urlsplit

import httpx

from tests.conftest import CANARY_KEY, REPO, data
from tests.support.https_server import LocalHttps
from tests.support.tomtom_stub import TomTomStub

PASSWORD = "correct horse battery staple 46"
USERNAME = "ada"
LONER = "bo"
"""A person who belongs to no tenant."""
TENANT = "Acme"
CLAIM = "acme"
SECRET_KEY = "test-secret-" + secrets.token_hex(16)
"""The servers' DJANGO_SECRET_KEY (tests sign tokens with the key derived from it)."""
PUBLIC = "93.184.215.14"
"""The public address CIMD documents' URLs name (the tunnel sends it to loopback)."""
REDIRECT = "http://127.0.0.1:33418/callback"
"""A desktop client's loopback redirect (RFC 8252 §7.3): nothing listens, the person's browser
stops at it and the test reads the code from the address."""
ACCEPT = {"Accept": "application/json, text/event-stream"}
LIST = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
GEOCODE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "tools/call",
    "params": {"name": "tomtom-geocode", "arguments": {"query": "Dam"}},
}


@dataclass
class Form:
    action: str
    method: str
    fields: dict[str, str] = field(default_factory=dict)
    buttons: list[tuple[str, str, str]] = field(default_factory=list)
    """(name, value, text) of each submit button."""
    names: set[str] = field(default_factory=set)
    """Every field name the form has, hidden or not."""


class _Forms(HTMLParser):
    """The forms of one page: their action, method, fields with their values, submit buttons."""

    def __init__(self) -> None:
        super().__init__()
        self.forms: list[Form] = []
        self._open = False
        self._button: list[str] | None = None
        self._button_text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if tag == "form":
            self.forms.append(Form(a.get("action", ""), a.get("method", "get").lower()))
            self._open = True
        elif not self._open:
            return
        elif tag == "input" and a.get("name"):
            form = self.forms[-1]
            form.names.add(a["name"])
            if a.get("type", "text").lower() == "submit":
                form.buttons.append((a["name"], a.get("value", ""), a.get("value", "")))
            elif a.get("type", "text").lower() not in ("checkbox", "radio") or "checked" in a:
                form.fields[a["name"]] = a.get("value", "")
        elif tag == "button" and a.get("type", "submit").lower() == "submit":
            self._button = [a.get("name", ""), a.get("value", "")]
            self._button_text = []

    def handle_data(self, data: str) -> None:
        if self._button is not None:
            self._button_text.append(data)

    def handle_endtag(self, tag: str) -> None:
        if tag == "form":
            self._open = False
        if tag == "button" and self._button is not None and self.forms:
            name, value = self._button
            self.forms[-1].buttons.append((name, value, " ".join("".join(self._button_text).split())))
            self._button = None


def forms(html: str) -> list[Form]:
    parser = _Forms()
    parser.feed(html)
    return parser.forms


@dataclass
class Page:
    url: str
    status: int
    html: str


class Stuck(AssertionError):
    """The person reached a page that is not a form to go on with (an error, or nothing to
    press for their decision): `page`."""

    def __init__(self, page: Page, why: str) -> None:
        super().__init__(f"{page.url}: {why}\n{page.html[:2000]}")
        self.page = page


class Person:
    """One person at one browser (cookies kept between calls)."""

    def __init__(self, username: str = USERNAME, password: str = PASSWORD, *, decision: str = "allow") -> None:
        self.username = username
        self.password = password
        self.decision = decision
        self.pages: list[Page] = []
        self.http = httpx.AsyncClient(timeout=30, follow_redirects=False)

    async def aclose(self) -> None:
        await self.http.aclose()

    async def __aenter__(self) -> Person:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def page(self, kind: str) -> Page:
        """The last login page (`kind` "login") or consent page ("consent") seen."""
        for page in reversed(self.pages):
            names = set().union(*(f.names for f in forms(page.html))) if forms(page.html) else set()
            if (kind == "login") == ("password" in names):
                return page
        raise AssertionError(f"no {kind} page among {[p.url for p in self.pages]}")

    async def authorize(self, url: str) -> dict[str, str]:
        """Open the authorization URL, sign in, decide; the query of the redirect to the client."""
        origin = _origin(url)
        response = await self.http.get(url)
        for _ in range(10):
            if response.is_redirect:
                target = urljoin(str(response.url), response.headers["Location"])
                if _origin(target) != origin:
                    return dict(parse_qsl(urlsplit(target).query))
                response = await self.http.get(target)
                continue
            page = Page(str(response.url), response.status_code, response.text)
            self.pages.append(page)
            if response.status_code != 200:
                raise Stuck(page, f"answered {response.status_code}")
            response = await self._submit(page)
        raise AssertionError(f"no redirect to the client after {[p.url for p in self.pages]}")

    async def _submit(self, page: Page) -> httpx.Response:
        found = [f for f in forms(page.html) if f.method == "post"]
        if not found:
            raise Stuck(page, "no form to submit")
        login = [f for f in found if "password" in f.names]
        if login:
            form = login[0]
            data = {**form.fields, "username": self.username, "password": self.password}
        else:
            pressed = [(f, b) for f in found for b in f.buttons if self.decision in (b[1].lower(), b[2].lower())]
            if not pressed:
                raise Stuck(page, f"no {self.decision!r} button among {[f.buttons for f in found]}")
            form, (name, value, _) = pressed[0]
            data = dict(form.fields)
            if name:
                data[name] = value
        return await self.http.post(urljoin(page.url, form.action or page.url), data=data)


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def pkce() -> tuple[str, str]:
    """A PKCE verifier and its S256 challenge (RFC 7636 §4.1-4.2)."""
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    return verifier, challenge


SEED = """
import django
django.setup()
from django.core.management import call_command
call_command("migrate", verbosity=0)
from django.contrib.auth import get_user_model
from tenants.models import Tenant, TenantKey, TenantMember
tenant = Tenant.objects.create(name={tenant!r}, claim={claim!r})
key = TenantKey(tenant=tenant, label="first")
key.set_key({key!r})
key.save()
person = get_user_model().objects.create_user({username!r}, password={password!r})
TenantMember.objects.create(user=person, tenant=tenant)
get_user_model().objects.create_user({loner!r}, password={password!r})
"""


def seeded_database(env: dict[str, str]) -> None:
    """Migrate `env`'s database and create the person, their tenant and its key (see the module)."""
    script = SEED.format(tenant=TENANT, claim=CLAIM, key=CANARY_KEY, username=USERNAME, loner=LONER, password=PASSWORD)
    full_env = {**os.environ, "DJANGO_SETTINGS_MODULE": "tomtom_mcp.settings", "DOTENV_PATH": "/nonexistent", **env}
    done = subprocess.run([sys.executable, "-c", script], cwd=REPO, env=full_env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-4000:]


class Memory:
    """The SDK client's `TokenStorage`, in memory: what a host keeps between calls."""

    def __init__(self) -> None:
        self.tokens: Any = None
        self.client: Any = None

    async def get_tokens(self) -> Any:
        return self.tokens

    async def set_tokens(self, tokens: Any) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> Any:
        return self.client

    async def set_client_info(self, info: Any) -> None:
        self.client = info


class Tunnel:
    """A `CONNECT`-only proxy on loopback; `dial[(host, port)]` says where a tunnel really goes,
    `tunnels` lists the `host:port` each was asked for."""

    def __init__(self, dial: dict[tuple[str, int], tuple[str, int]]) -> None:
        self.dial = dial
        self.tunnels: list[str] = []
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_CONNECT(self) -> None:
                owner.tunnels.append(self.path)
                host, _, port = self.path.rpartition(":")
                target = owner.dial.get((host.strip("[]"), int(port)))
                if target is None:
                    self.send_error(403)
                    return
                with socket.create_connection(target, timeout=10) as upstream:
                    self.send_response(200, "Connection established")
                    self.end_headers()
                    _pipe(self.connection, upstream)

            def log_message(self, *args: object) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> Tunnel:
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()


def _pipe(one: socket.socket, other: socket.socket) -> None:
    """Copy bytes both ways until either side closes."""
    sockets = [one, other]
    with contextlib.suppress(OSError):
        while True:
            readable, _, _ = select.select(sockets, [], [], 30)
            if not readable:
                return
            for sock in readable:
                data = sock.recv(65536)
                if not data:
                    return
                (other if sock is one else one).sendall(data)


@dataclass
class StandIns:
    stub: TomTomStub
    documents: LocalHttps
    tunnel: Tunnel

    def env(self, port: int, database: str, **extra: str) -> dict[str, str]:
        """A server process's environment: built-in sign-in for `http://127.0.0.1:<port>/mcp`,
        `database`, TomTom stubbed, CIMD documents fetched through the tunnel."""
        return {
            "DATABASE_URL": database,
            "DJANGO_SECRET_KEY": SECRET_KEY,
            "TOMTOM_API_BASE_URL": self.stub.base_url,
            "MCP_AUTH": "oauth",
            "MCP_HOSTED": "true",
            "OAUTH_BUILTIN": "true",
            "OAUTH_RESOURCE": f"http://127.0.0.1:{port}/mcp",
            "OAUTH_REQUIRED_SCOPES": "mcp",
            "SSL_CERT_FILE": str(self.documents.ca_file),
            "HTTPS_PROXY": self.tunnel.url,
            "NO_PROXY": "127.0.0.0/8,localhost",
            **extra,
        }

    def document(self, path: str, body: dict[str, Any], headers: dict[str, str] | None = None) -> str:
        """Publish a Client ID Metadata Document; its URL."""
        import json

        self.documents.files[path] = (
            200,
            json.dumps(body).encode(),
            {"Content-Type": "application/json", **(headers or {})},
            0.0,
        )
        return document_url(path)


def document_url(path: str) -> str:
    return f"https://{PUBLIC}{path}"


@contextmanager
def stand_ins() -> Iterator[StandIns]:
    with (
        TomTomStub() as stub,
        LocalHttps(["localhost"], addresses=(PUBLIC,)) as documents,
        Tunnel({}) as tunnel,
    ):
        tunnel.dial[(PUBLIC, 443)] = ("127.0.0.1", documents.port)
        stub.route("GET", r"/maps/orbis/places/geocode", json_body=data("geocode_v2.json"))
        yield StandIns(stub, documents, tunnel)


class Browser:
    """The SDK client's `redirect_handler` and `callback_handler`: the person opens the
    authorization URL; the redirect's parameters go back to the client."""

    def __init__(self, person: Person) -> None:
        self.person = person
        self.urls: list[str] = []
        self.redirects: list[dict[str, str]] = []

    async def redirect_handler(self, url: str) -> None:
        self.urls.append(url)
        self.redirects.append(await self.person.authorize(url))

    async def callback_handler(self) -> Any:
        from mcp.shared.auth import AuthorizationCodeResult

        redirect = self.redirects[-1]
        assert "error" not in redirect, redirect
        return AuthorizationCodeResult(code=redirect["code"], state=redirect.get("state"), iss=redirect.get("iss"))


def provider(base: str, browser: Browser, storage: Memory, client_metadata_url: str | None = None) -> Any:
    """The SDK's `OAuthClientProvider` for `base`'s `/mcp`, as a desktop host sets it up."""
    from mcp.client.auth import OAuthClientProvider
    from mcp.shared.auth import OAuthClientMetadata

    metadata = OAuthClientMetadata(
        client_name="Test desktop client",
        redirect_uris=[REDIRECT],
        grant_types=["authorization_code", "refresh_token"],
        response_types=["code"],
        token_endpoint_auth_method="none",
    )
    return OAuthClientProvider(
        server_url=base + "/mcp",
        client_metadata=metadata,
        storage=storage,
        redirect_handler=browser.redirect_handler,
        callback_handler=browser.callback_handler,
        client_metadata_url=client_metadata_url,
    )


@asynccontextmanager
async def mcp_session(base: str, auth: Any) -> AsyncIterator[Any]:
    """The SDK's client over Streamable HTTP to `base`'s `/mcp`, signing in with `auth`."""
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    async with (
        httpx2.AsyncClient(auth=auth, timeout=30) as http_client,
        Client(streamable_http_client(base + "/mcp", http_client=http_client), mode="legacy") as client,
    ):
        yield client


async def token_request(base: str, **form: str) -> httpx.Response:
    async with httpx.AsyncClient(timeout=30) as http:
        return await http.post(base + "/oauth/token", data=form)


async def call_mcp(base: str, message: dict[str, Any], token: str) -> httpx.Response:
    async with httpx.AsyncClient(timeout=30) as http:
        return await http.post(base + "/mcp", json=message, headers={**ACCEPT, "Authorization": f"Bearer {token}"})


def assert_challenged(response: httpx.Response, base: str) -> None:
    """A refused token as a host sees it: 401 and the challenge naming the resource metadata."""
    assert response.status_code == 401, response.text
    challenge = response.headers["WWW-Authenticate"]
    assert challenge.startswith(f'Bearer resource_metadata="{base}/.well-known/oauth-protected-resource/mcp"'), (
        challenge
    )
    assert 'error="invalid_token"' in challenge
