"""Property tests of the built-in authorization server's open endpoints: whatever a caller sends
to `/oauth/register` (any JSON, any bytes, hostile metadata) or `/oauth/token` (any form fields,
repeated or not, any text), the answer is a coded OAuth error (RFC 7591 §3.2.2, RFC 6749 §5.2)
with 400, 401 or 429, or, for registration, a client whose metadata keeps every bound; never a
500, and the token endpoint never hands out a token.

Hypothesis runs derandomized with a bounded number of examples, so a CI run is quick and the
same every time. Client ID Metadata Documents are looked up through a resolver that knows no
host, so an https client_id never leaves the machine.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

import orjson
import pytest
from django.test import Client
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from authserver import cimd
from authserver.models import OAuthClient
from authserver.redirects import redirect_uri_problem
from tools.download import DownloadPolicy

pytestmark = pytest.mark.django_db

EXAMPLES = hypothesis_settings(
    derandomize=True,
    database=None,
    deadline=None,
    max_examples=150,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.function_scoped_fixture],
)
REGISTRATION_ERRORS = {"invalid_client_metadata", "invalid_redirect_uri", "invalid_request", "temporarily_unavailable"}
TOKEN_ERRORS = {
    "invalid_request",
    "invalid_client",
    "invalid_grant",
    "unauthorized_client",
    "unsupported_grant_type",
    "invalid_scope",
    "invalid_target",
    "temporarily_unavailable",
}

# --- what hostile callers send -------------------------------------------------------------------

LONG = st.sampled_from([("😀", 300), ("A", 70_000), ("https://client.example/a", 3000)]).map(
    lambda part: part[0] + part[0][-1] * part[1]
)
"""Long texts, drawn by name so a failing example's report stays short."""
HOSTILE_TEXT = st.one_of(
    st.text(max_size=40),
    LONG,
    st.text(st.characters(codec="utf-8"), min_size=1, max_size=20).map(lambda s: s * 150),  # thousands of chars
    st.sampled_from(
        [
            "",
            " ",
            "\x00",
            "\u202e\u0000\ud7ff",
            "javascript:alert(1)",
            "data:text/html,<script>alert(1)</script>",
            "https://client.example/cb#fragment",
            "http://client.example/cb",
            "http://127.0.0.1:notaport/cb",
            "https://user:pw@client.example/cb",
            "https://[::1/cb",
            "https://clíent.example/cb",
            "//client.example/cb",
            "file:///etc/passwd",
            "custom-scheme:/callback",
            "https://client.example/oauth/metadata.json",
            "none",
            "client_secret_basic",
            "authorization_code",
            "refresh_token",
            "implicit",
            "password",
            "mcp",
            "mcp admin",
        ]
    ),
)
JSON_SCALAR = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**63), max_value=2**64 - 1),
    st.floats(allow_nan=False, allow_infinity=False),
    HOSTILE_TEXT,
)
ANY_JSON = st.recursive(
    JSON_SCALAR,
    lambda inner: st.one_of(st.lists(inner, max_size=5), st.dictionaries(st.text(max_size=12), inner, max_size=5)),
    max_leaves=30,
)
URI = st.one_of(
    HOSTILE_TEXT,
    st.sampled_from(["https://claude.ai/api/mcp/auth_callback", "http://127.0.0.1:33418/", "http://[::1]/cb"]),
    JSON_SCALAR,
)
REGISTRATION = st.fixed_dictionaries(
    {},
    optional={
        "redirect_uris": st.one_of(st.lists(URI, max_size=14), URI, ANY_JSON),
        "client_name": st.one_of(HOSTILE_TEXT, ANY_JSON),
        "client_uri": st.one_of(URI, ANY_JSON),
        "logo_uri": URI,
        "token_endpoint_auth_method": st.one_of(HOSTILE_TEXT, ANY_JSON),
        "grant_types": st.one_of(st.lists(HOSTILE_TEXT, max_size=4), ANY_JSON),
        "response_types": st.one_of(st.lists(HOSTILE_TEXT, max_size=4), ANY_JSON),
        "scope": st.one_of(HOSTILE_TEXT, ANY_JSON),
        "client_secret": HOSTILE_TEXT,
        "jwks": ANY_JSON,
        "software_statement": HOSTILE_TEXT,
    },
).flatmap(lambda base: st.dictionaries(st.text(max_size=20), ANY_JSON, max_size=40).map(lambda more: more | base))
DEEP = st.integers(min_value=1, max_value=5000).map(lambda depth: b"[" * depth + b"]" * depth)


def nested_object(depth: int) -> bytes:
    return b'{"redirect_uris":' * depth + b"1" + b"}" * depth


REGISTRATION_BODY = st.one_of(
    REGISTRATION.map(orjson.dumps),
    ANY_JSON.map(orjson.dumps),
    DEEP,
    st.integers(min_value=1, max_value=3000).map(nested_object),
    st.binary(max_size=200),
    st.sampled_from([b"", b"null", b"\xff\xfe{}"]),
    st.integers(16_000, 20_000).map(lambda n: b'{"redirect_uris": ["https://a.example/cb"]' + b" " * n + b"}"),
)
TOKEN_FIELDS = (
    "grant_type",
    "code",
    "redirect_uri",
    "client_id",
    "code_verifier",
    "refresh_token",
    "resource",
    "scope",
    "client_secret",
    "state",
)


def token_form(client_ids: list[str]) -> st.SearchStrategy[list[tuple[str, str]]]:
    """Form fields, repeated or not, with hostile values, sometimes naming a real client."""
    value = st.one_of(HOSTILE_TEXT, st.sampled_from(client_ids), st.just("x" * 43))
    field = st.tuples(st.one_of(st.sampled_from(TOKEN_FIELDS), st.text(max_size=10)), value)
    return st.lists(field, max_size=12)


# --- fixtures and checks ---------------------------------------------------------------------------


@pytest.fixture
def builtin(settings, monkeypatch):
    settings.OAUTH_BUILTIN = True
    settings.OAUTH_RESOURCE = "http://testserver/mcp"
    settings.OAUTH_BUILTIN_REGISTRATIONS_PER_HOUR = 1_000_000

    async def nowhere(host: str, port: int) -> list[str]:
        return []

    monkeypatch.setattr(cimd, "default_policy", lambda: DownloadPolicy(resolve=nowhere, timeout=2.0))
    return settings


def coded(response: Any, codes: set[str]) -> dict[str, Any]:
    assert response.status_code in (400, 401, 429), (response.status_code, response.content[:300])
    assert response["Content-Type"] == "application/json"
    body = orjson.loads(response.content)
    assert body["error"] in codes, body
    assert isinstance(body.get("error_description", ""), str)
    assert "access_token" not in body and "refresh_token" not in body
    return body


def registered(response: Any) -> dict[str, Any]:
    """A 201: what was registered keeps every bound."""
    body = orjson.loads(response.content)
    client = OAuthClient.objects.get(client_id=body["client_id"])
    assert 1 <= len(client.redirect_uris) <= 10
    assert all(redirect_uri_problem(uri) is None for uri in client.redirect_uris)
    assert len(client.name) <= 200 and len(client.client_uri) <= 2048
    assert client.client_uri == "" or client.client_uri.startswith("https://")
    assert body["token_endpoint_auth_method"] == "none" and "client_secret" not in body
    return body


# --- the properties ----------------------------------------------------------------------------------


@EXAMPLES
@given(body=REGISTRATION_BODY)
def test_registration_answers_any_body_with_a_client_or_a_coded_error(builtin, body):
    response = Client().post("/oauth/register", body, content_type="application/json")
    if response.status_code == 201:
        registered(response)
    else:
        coded(response, REGISTRATION_ERRORS)


@EXAMPLES
@given(metadata=REGISTRATION)
def test_hostile_registration_metadata_is_refused_or_bounded(builtin, metadata):
    response = Client().post("/oauth/register", orjson.dumps(metadata), content_type="application/json")
    if response.status_code != 201:
        coded(response, REGISTRATION_ERRORS)
        return
    body = registered(response)
    uris = metadata["redirect_uris"]
    assert isinstance(uris, list) and all(redirect_uri_problem(uri) is None for uri in uris)
    assert set(body["redirect_uris"]) == set(uris)


@EXAMPLES
@given(content_type=st.sampled_from(["text/plain", "application/x-www-form-urlencoded", "", "application/jsonx"]))
def test_registration_in_another_content_type_is_refused(builtin, content_type):
    body = orjson.dumps({"redirect_uris": ["https://claude.ai/api/mcp/auth_callback"]})
    coded(Client().post("/oauth/register", body, content_type=content_type), REGISTRATION_ERRORS)


@EXAMPLES
@given(data=st.data())
def test_the_token_endpoint_answers_any_form_with_a_coded_error_and_no_token(builtin, data):
    client = OAuthClient.objects.filter(client_id__startswith="reg-").first() or OAuthClient.objects.create(
        client_id="reg-" + "k" * 20, kind=OAuthClient.REGISTERED, name="Known", redirect_uris=["https://a.example/cb"]
    )
    fields = data.draw(token_form([client.client_id, "https://client.example/oauth/metadata.json"]))
    body = urlencode(fields)
    response = Client().post("/oauth/token", body, content_type="application/x-www-form-urlencoded")
    coded(response, TOKEN_ERRORS)


@EXAMPLES
@given(body=st.one_of(st.binary(max_size=300), ANY_JSON.map(orjson.dumps)))
def test_the_token_endpoint_answers_a_body_that_is_not_a_form_with_a_coded_error(builtin, body):
    for content_type in ("application/x-www-form-urlencoded", "application/json"):
        coded(Client().post("/oauth/token", body, content_type=content_type), TOKEN_ERRORS)


def test_registrations_over_the_hourly_limit_are_answered_429_and_bad_ones_do_not_count(builtin, settings):
    settings.OAUTH_BUILTIN_REGISTRATIONS_PER_HOUR = 2
    good = orjson.dumps({"client_name": "Agent", "redirect_uris": ["https://agent.example/cb"]})
    bad = orjson.dumps({"redirect_uris": ["javascript:alert(1)"]})
    for _ in range(3):
        coded(Client().post("/oauth/register", bad, content_type="application/json"), REGISTRATION_ERRORS)
    answers = [Client().post("/oauth/register", good, content_type="application/json") for _ in range(3)]
    assert [a.status_code for a in answers] == [201, 201, 429]
    assert coded(answers[2], REGISTRATION_ERRORS)["error"] == "temporarily_unavailable"
    assert answers[2]["Retry-After"] == "3600"
    other = Client(REMOTE_ADDR="198.51.100.9").post("/oauth/register", good, content_type="application/json")
    assert other.status_code == 201, "another address has its own count"
    assert OAuthClient.objects.count() == 3
