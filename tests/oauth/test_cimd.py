"""Client ID Metadata Documents (authserver.cimd): an https client_id is fetched through the
SSRF-safe download, checked against the draft's rules, cached in its OAuthClient row for as long
as its Cache-Control says (clamped), and refused with `invalid_client` naming why.

As in tests/widgets/test_data_viz.py, the fetch never leaves loopback: a stand-in resolver
answers a public address and a connector sends it to a local HTTPS server with its own CA.
"""

from __future__ import annotations

import datetime as dt
import logging

import orjson
import pytest
from django.utils import timezone
from hypothesis import given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from authserver import cimd
from authserver.errors import OAuthError
from authserver.models import OAuthClient
from tests.support import logs
from tests.support.https_server import LocalHttps
from tools.download import DownloadPolicy

pytestmark = pytest.mark.django_db

PUBLIC = "93.184.215.14"
CLIENT_ID = "https://client.example/oauth/metadata.json"
PATH = "/oauth/metadata.json"
DOCUMENT = {
    "client_id": CLIENT_ID,
    "client_name": "Example Agent",
    "client_uri": "https://client.example/",
    "logo_uri": "https://cdn.client.example/logo.png",
    "redirect_uris": ["https://client.example/callback", "http://127.0.0.1/callback"],
    "grant_types": ["authorization_code", "refresh_token"],
    "response_types": ["code"],
    "token_endpoint_auth_method": "none",
}
NOW = dt.datetime(2026, 12, 7, 12, 0, tzinfo=dt.UTC)


@pytest.fixture(scope="module")
def https_server():
    with LocalHttps(["client.example", "private.example"]) as server:
        yield server


@pytest.fixture
def https(https_server: LocalHttps):
    """The module's server, with nothing served and nothing seen yet."""
    https_server.files.clear()
    https_server.seen.clear()
    return https_server


def serve(https: LocalHttps, document: object = DOCUMENT, *, path: str = PATH, status: int = 200, **headers: str):
    body = document if isinstance(document, bytes) else orjson.dumps(document)
    https.files[path] = (status, body, {"Content-Type": "application/json", **headers}, 0.0)


def policy(https: LocalHttps, *, address: str = PUBLIC, **limits) -> DownloadPolicy:
    async def resolve(host: str, port: int) -> list[str]:
        return {"client.example": [address], "private.example": ["10.0.0.5"]}.get(host, [])

    return DownloadPolicy(
        resolve=resolve,
        connect=lambda _address, _port: ("127.0.0.1", https.port),
        ssl_context=https.ssl_context(),
        **limits,
    )


def refusal(https: LocalHttps, client_id: str = CLIENT_ID, *, now: dt.datetime = NOW) -> str:
    with pytest.raises(OAuthError) as caught:
        cimd.resolve_metadata_client(client_id, policy=policy(https), now=now)
    assert (caught.value.error, caught.value.status) == ("invalid_client", 400)
    return caught.value.description


def test_a_document_is_fetched_checked_and_stored_as_a_client(https):
    serve(https, **{"Cache-Control": "public, max-age=7200"})
    client = cimd.resolve_metadata_client(CLIENT_ID, policy=policy(https), now=NOW)
    stored = OAuthClient.objects.get(client_id=CLIENT_ID)
    assert stored.pk == client.pk
    assert (stored.kind, stored.name, stored.client_uri) == (
        OAuthClient.METADATA_DOCUMENT,
        "Example Agent",
        "https://client.example/",
    )
    assert stored.redirect_uris == DOCUMENT["redirect_uris"]
    assert stored.metadata == DOCUMENT
    assert (stored.fetched_at, stored.expires_at) == (NOW, NOW + dt.timedelta(hours=2))
    assert [(seen.path, seen.host, seen.server_name) for seen in https.seen] == [
        (PATH, "client.example", "client.example")
    ]


def test_a_fresh_row_is_used_without_fetching_and_an_expired_one_is_fetched_again(https):
    serve(https)
    cimd.resolve_metadata_client(CLIENT_ID, policy=policy(https), now=NOW)
    assert OAuthClient.objects.get().expires_at == NOW + dt.timedelta(hours=1), "no Cache-Control: 1 hour"
    cimd.resolve_metadata_client(CLIENT_ID, policy=policy(https), now=NOW + dt.timedelta(minutes=59))
    assert len(https.seen) == 1
    serve(https, DOCUMENT | {"client_name": "Renamed Agent"})
    later = NOW + dt.timedelta(minutes=61)
    client = cimd.resolve_metadata_client(CLIENT_ID, policy=policy(https), now=later)
    assert len(https.seen) == 2
    assert (client.name, client.fetched_at) == ("Renamed Agent", later)
    assert OAuthClient.objects.count() == 1


def test_a_failed_refetch_of_an_expired_row_refuses_instead_of_using_stale_metadata(https):
    serve(https)
    cimd.resolve_metadata_client(CLIENT_ID, policy=policy(https), now=NOW)
    serve(https, status=503)
    with pytest.raises(OAuthError) as caught:
        cimd.resolve_metadata_client(CLIENT_ID, policy=policy(https), now=NOW + dt.timedelta(hours=2))
    assert caught.value.error == "invalid_client"
    assert "could not be fetched" in caught.value.description and "503" in caught.value.description


@pytest.mark.parametrize(
    ("cache_control", "seconds"),
    [
        ("max-age=60", 300),
        ("max-age=0", 300),
        ("no-store", 300),
        ("no-cache, max-age=3600", 300),
        ("public, max-age=86400", 86400),
        ("max-age=31536000", 86400),
        ('max-age="1200"', 1200),
        ("private", 3600),
        ("max-age=abc", 3600),
        ("", 3600),
    ],
)
def test_the_cache_lifetime_follows_max_age_clamped_to_five_minutes_and_a_day(cache_control, seconds):
    assert cimd.cache_seconds(cache_control) == seconds


def test_a_client_revoked_in_the_admin_stays_refused_whatever_its_document_says(https):
    serve(https)
    cimd.resolve_metadata_client(CLIENT_ID, policy=policy(https), now=NOW)
    OAuthClient.objects.update(revoked_at=timezone.now())
    assert "revoked" in refusal(https, now=NOW + dt.timedelta(days=2))
    assert len(https.seen) == 1


@pytest.mark.parametrize(
    ("client_id", "why"),
    [
        ("http://client.example/oauth/metadata.json", "must start with https://"),
        ("HTTPS://client.example/oauth/metadata.json", "must start with https://"),
        ("https://client.example", "must have a path"),
        ("https://client.example/", "must have a path"),
        ("https://client.example/a/../metadata.json", "must not have . or .. path segments"),
        ("https://client.example/./metadata.json", "must not have . or .. path segments"),
        ("https://client.example/metadata.json#x", "must not have a fragment"),
        ("https://user:pw@client.example/metadata.json", "must not carry a user name or password"),
        ("https://client.example:port/metadata.json", "is not a URL"),
        ("https:///metadata.json", "has no host"),
        ("https://client.example/métadata.json", "printable ASCII"),
        ("https://client.example/a b", "printable ASCII"),
        ("https://client.example/" + "a" * 2100, "longer than 2048"),
    ],
)
def test_client_ids_the_draft_does_not_allow_are_refused_before_any_fetch(https, client_id, why):
    assert why in refusal(https, client_id)
    assert https.seen == []


def test_a_host_at_a_private_address_is_refused_and_never_dialled(https):
    serve(https)
    why = refusal(https, "https://private.example/oauth/metadata.json")
    assert "could not be fetched" in why and "not a public address" in why
    assert https.seen == []


@pytest.mark.parametrize(
    ("document", "why"),
    [
        (b"{not json", "is not JSON"),
        (b"[1, 2]", "is not a JSON object"),
        (DOCUMENT | {"client_id": "https://client.example/oauth/other.json"}, "client_id is not exactly the URL"),
        (DOCUMENT | {"client_id": "https://CLIENT.example/oauth/metadata.json"}, "client_id is not exactly the URL"),
        ({k: v for k, v in DOCUMENT.items() if k != "client_id"}, "client_id is not exactly the URL"),
        (DOCUMENT | {"client_secret": "s3cret"}, "has client_secret"),
        (DOCUMENT | {"client_secret_expires_at": 0}, "has client_secret_expires_at"),
        (DOCUMENT | {"token_endpoint_auth_method": "client_secret_basic"}, "token_endpoint_auth_method"),
        (DOCUMENT | {"token_endpoint_auth_method": "private_key_jwt"}, "token_endpoint_auth_method"),
        ({k: v for k, v in DOCUMENT.items() if k != "redirect_uris"}, "redirect_uris must be a list"),
        (DOCUMENT | {"redirect_uris": []}, "redirect_uris must be a list"),
        (DOCUMENT | {"redirect_uris": "https://client.example/cb"}, "redirect_uris must be a list"),
        (DOCUMENT | {"redirect_uris": [f"https://client.example/{i}" for i in range(11)]}, "at most 10"),
        (DOCUMENT | {"redirect_uris": ["http://client.example/cb"]}, "redirect_uris[0]"),
        (DOCUMENT | {"redirect_uris": ["https://client.example/cb#frag"]}, "redirect_uris[0]"),
        (DOCUMENT | {"redirect_uris": ["https://ok.example/cb", "javascript:alert(1)"]}, "redirect_uris[1]"),
        (DOCUMENT | {"redirect_uris": ["https://client.example/" + "a" * 2100]}, "redirect_uris[0]"),
        (DOCUMENT | {"redirect_uris": [7]}, "redirect_uris[0]"),
        (DOCUMENT | {"client_name": "x" * 201}, "client_name must be text of 1 to 200"),
        (DOCUMENT | {"client_name": ["Agent"]}, "client_name must be text"),
        (DOCUMENT | {"client_uri": "javascript:alert(1)"}, "client_uri must be an https URL"),
        (
            DOCUMENT | {"grant_types": ["implicit"]},
            'grant_types must be a list of names that includes "authorization_code"',
        ),
        (DOCUMENT | {"response_types": ["token"]}, 'response_types must be a list of names that includes "code"'),
        (DOCUMENT | {"scope": {"mcp": True}}, "scope must be text"),
    ],
)
def test_documents_breaking_a_rule_are_refused_naming_it(https, document, why):
    serve(https, document)
    assert why in refusal(https)
    assert not OAuthClient.objects.exists()


def test_a_refused_document_tells_the_operator_why_in_the_log(https, caplog):
    serve(https, DOCUMENT | {"client_id": "https://elsewhere.example/agent.json"})
    caplog.set_level(logging.INFO, logger="authserver")
    why = refusal(https)
    (refused,) = [logs.line(r) for r in caplog.records if r.getMessage() == "OAuth client refused"]
    assert refused["client_id"] == CLIENT_ID and refused["error"] == why and refused["level"] == "warning"


def test_a_document_over_the_size_bound_is_refused_while_reading(https, settings):
    settings.OAUTH_CLIENT_METADATA_MAX_BYTES = 5120
    serve(https, DOCUMENT | {"padding": "x" * 6000})
    with pytest.raises(OAuthError) as caught:
        cimd.resolve_metadata_client(CLIENT_ID, policy=policy(https, max_bytes=5120), now=NOW)
    assert caught.value.description.endswith("larger than 5120 bytes")
    assert cimd.default_policy().max_bytes == 5120


def test_redirects_are_not_followed(https):
    serve(https, b"", status=302, Location="https://client.example/elsewhere.json")
    assert "redirect" in refusal(https)


def test_the_name_defaults_to_the_host_when_the_document_has_none(https):
    serve(https, {k: v for k, v in DOCUMENT.items() if k not in ("client_name", "client_uri")})
    client = cimd.resolve_metadata_client(CLIENT_ID, policy=policy(https), now=NOW)
    assert (client.name, client.client_uri) == ("client.example", "")


def test_only_https_client_ids_are_metadata_documents():
    assert cimd.is_metadata_client_id(CLIENT_ID)
    assert not cimd.is_metadata_client_id("f3a9c0d2")
    assert not cimd.is_metadata_client_id("http://client.example/x")


def test_fetches_per_host_are_limited_so_visitors_cannot_make_us_hammer_a_host(https, monkeypatch):
    monkeypatch.setattr(cimd, "FETCHES_PER_HOST_PER_MINUTE", 2)
    serve(https, b"{not json")
    assert "is not JSON" in refusal(https)
    assert "answered 404" in refusal(https, "https://client.example/another/path.json")
    assert "asked for metadata documents too often" in refusal(https, "https://CLIENT.example/third.json")
    assert len(https.seen) == 2


HOSTILE_VALUE = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(min_value=-(2**63), max_value=2**64 - 1),
        st.floats(allow_nan=False),
        st.text(max_size=30),
        st.sampled_from([CLIENT_ID, "none", "client_secret_post", "https://ok.example/cb", "javascript:x", "code"]),
    ),
    lambda inner: st.one_of(st.lists(inner, max_size=12), st.dictionaries(st.text(max_size=10), inner, max_size=5)),
    max_leaves=25,
)
HOSTILE_DOCUMENT = st.one_of(
    st.binary(max_size=300),
    HOSTILE_VALUE.map(orjson.dumps),
    st.fixed_dictionaries(
        {"client_id": st.one_of(st.just(CLIENT_ID), HOSTILE_VALUE)},
        optional={name: HOSTILE_VALUE for name in DOCUMENT if name != "client_id"}
        | {"client_secret": HOSTILE_VALUE, "jwks": HOSTILE_VALUE},
    ).map(orjson.dumps),
)


@hypothesis_settings(derandomize=True, database=None, deadline=None, max_examples=300)
@given(body=HOSTILE_DOCUMENT)
def test_any_document_is_accepted_within_every_bound_or_refused_invalid_client(body):
    try:
        document = cimd.parse_document(CLIENT_ID, body)
    except OAuthError as refused:
        assert refused.error == "invalid_client" and refused.description.startswith("client metadata document: ")
        return
    assert document["client_id"] == CLIENT_ID
    assert "client_secret" not in document and document.get("token_endpoint_auth_method", "none") == "none"
    assert 1 <= len(document["redirect_uris"]) <= 10
    assert len(document.get("client_name") or "") <= 200
