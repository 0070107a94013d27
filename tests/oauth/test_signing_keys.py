"""The issuer's key server misbehaving, as signed-in hosts see it through `/mcp`: a fetch ends at
its deadline however the server drips or hangs; a bad key set is refused once, logged, and tried
again after a backoff; keys cached before stay in use until they expire; never a 500.

Fetch deadlines are shortened to half a second so the suite stays fast; no test asserts a time.
The key cache's clock is moved forward (`Later`) instead of waiting for ages and backoffs.
"""

from __future__ import annotations

import asyncio
import gzip
import json
import logging

import pytest

from core.operations import SigningKeysRefused, SigningKeysSkipped
from protocol import http
from protocol.jwks import JWKS_MAX_BYTES
from tests.support import logs
from tests.support.issuer import answer, drip, hang
from tests.support.signing_in import GEOCODE, RESOURCE, Later, assert_refused, post, result_of

pytestmark = pytest.mark.django_db(transaction=True)

DEADLINE = 0.5


@pytest.fixture(autouse=True)
def _key_events_logged(caplog):
    caplog.set_level(logging.INFO, logger="tools.oauth")


@pytest.fixture
def jwks(tenant):
    """The endpoint's key cache, its fetch deadline shortened."""
    cache = http.mcp_endpoint().settings.sign_in.resource_server.jwks
    cache.timeout = DEADLINE
    return cache


def logged(caplog, message: str) -> list[dict]:
    return [logs.fields(r) for r in caplog.records if r.getMessage() == message]


def nested(depth: int) -> bytes:
    return b'{"keys": ' + b"[" * depth + b"]" * depth + b"}"


FAULTS = {
    "drip-fed": (lambda issuer: drip(0.05), "no whole answer within 0.5 s"),
    "hanging": (lambda issuer: hang(), "no whole answer within 0.5 s"),
    "HTTP 500": (lambda issuer: answer(b"{}", status=500), "HTTP 500"),
    "not JSON": (lambda issuer: answer(b"\x00garbage"), "not JSON"),
    "nested 100,000 deep": (lambda issuer: answer(nested(100_000)), "not JSON"),
    "nested 900 deep": (lambda issuer: answer(nested(900)), "no usable signing key"),
    "a JSON list": (lambda issuer: answer(b"[]"), "not a JSON object"),
    "keys a number": (lambda issuer: answer(b'{"keys": 5}'), "`keys` is not a list"),
    "keys an object": (lambda issuer: answer(b'{"keys": {"a": 1}}'), "`keys` is not a list"),
    "no keys": (lambda issuer: answer(b'{"keys": []}'), "no usable signing key"),
    "only bad keys": (lambda issuer: answer(b'{"keys": [{"kty": "RSA", "n": 5, "e": "AQAB"}, 7]}'), "no usable"),
    "too many keys": (
        lambda issuer: answer(json.dumps({"keys": issuer.jwks()["keys"] * 101}).encode()),
        "more than 100 keys",
    ),
    "over the size limit": (lambda issuer: answer(b" " * (JWKS_MAX_BYTES + 1)), f"over {JWKS_MAX_BYTES} bytes"),
    "a gzip bomb": (
        lambda issuer: answer(gzip.compress(b" " * (64 * JWKS_MAX_BYTES)), headers={"Content-Encoding": "gzip"}),
        f"over {JWKS_MAX_BYTES} bytes",
    ),
}


@pytest.mark.parametrize("fault", FAULTS.values(), ids=FAULTS.keys())
async def test_a_key_server_that_fails_is_refused_once_and_not_asked_again_at_once(jwks, issuer, stub, caplog, fault):
    """Cold cache, seven signed-in requests at once: one fetch, ended at its deadline or refused;
    each request answered 503 with `Retry-After` (no key can be had: not the caller's fault, so
    no sign-in challenge); one log line saying why. Seven more requests fetch nothing."""
    make, reason = fault
    issuer.jwks_fault = make(issuer)
    fetches = issuer.jwks_fetches
    token = issuer.token(aud=RESOURCE)
    responses = await asyncio.gather(*(post(GEOCODE, token) for _ in range(7)))
    responses += [await post(GEOCODE, token) for _ in range(7)]
    assert [r.status_code for r in responses] == [503] * 14
    assert {r["Retry-After"] for r in responses} <= {str(s) for s in range(1, 11)}
    assert "signing keys cannot be had" in responses[0].json()["error_description"]
    assert issuer.jwks_fetches == fetches + 1
    (refused,) = logged(caplog, SigningKeysRefused.MESSAGE)
    assert reason in refused["reason"]
    assert (refused["failures"], refused["retry_in_s"], refused["keys_kept"]) == (1, 10.0, 0)
    assert stub.requests == []


async def test_after_the_backoff_the_keys_are_fetched_again_and_used(jwks, issuer, stub, caplog):
    clock = Later(jwks)
    issuer.jwks_fault = answer(b"garbage")
    token = issuer.token(aud=RESOURCE)
    assert (await post(GEOCODE, token)).status_code == 503
    fetches = issuer.jwks_fetches
    # the backoff doubles while the key server keeps failing: 10 s, 20 s, 40 s...
    for failures, backoff in [(2, 10.0), (3, 20.0), (4, 40.0)]:
        clock.skip(backoff - 1)
        assert (await post(GEOCODE, token)).status_code == 503
        assert issuer.jwks_fetches == fetches  # not yet
        clock.skip(1)
        assert (await post(GEOCODE, token)).status_code == 503
        fetches += 1
        assert issuer.jwks_fetches == fetches
        assert logged(caplog, SigningKeysRefused.MESSAGE)[-1]["failures"] == failures
    assert [e["retry_in_s"] for e in logged(caplog, SigningKeysRefused.MESSAGE)] == [10.0, 20.0, 40.0, 80.0]
    issuer.jwks_fault = None  # the key server recovers
    clock.skip(80)
    assert result_of(await post(GEOCODE, token))["results"]
    assert issuer.jwks_fetches == fetches + 1


async def test_one_bad_key_among_good_ones_is_skipped_and_the_others_used(jwks, issuer, stub, caplog):
    good = issuer.jwks()["keys"]
    bad = [
        {"kty": "RSA", "kid": "bad-n", "n": 5, "e": "AQAB"},
        {"kty": "RSA", "kid": "bad-numbers", "n": "AQAB", "e": "AQAB"},
        {"kty": "EC", "kid": "off-curve", "crv": "P-256", "x": "AQAB", "y": "AQAB"},
        {"kty": "oct", "kid": "secret", "k": "c2VjcmV0"},
        {"kty": "RSA", "kid": ["a list"], "n": "AQAB", "e": "AQAB"},
        "not a key",
        {**good[0], "kid": "duplicate"},
        {**good[0], "kid": "duplicate"},
        {"kty": "RSA", "use": "enc", "n": "AQAB", "e": "AQAB"},  # for encryption: left out silently
    ]
    issuer.jwks_fault = answer(json.dumps({"keys": [*bad, *good]}).encode())
    assert result_of(await post(GEOCODE, issuer.token(aud=RESOURCE)))["results"]
    (skipped,) = logged(caplog, SigningKeysSkipped.MESSAGE)
    assert skipped["keys"] == 2  # the good key, and the first of the duplicates
    assert [(s["index"], s["kid"]) for s in skipped["skipped"]] == [
        (0, "bad-n"),
        (1, "bad-numbers"),
        (2, "off-curve"),
        (3, "secret"),
        (4, None),
        (5, None),
        (7, "duplicate"),
    ]
    assert logged(caplog, SigningKeysRefused.MESSAGE) == []


@pytest.mark.parametrize(
    "fault", [answer(b"garbage"), hang(), drip(0.05), answer(b'{"keys": 5}')], ids=["garbage", "hang", "drip", "shape"]
)
async def test_cached_keys_stay_in_use_while_a_refresh_fails(jwks, issuer, stub, caplog, fault):
    """Keys fetched before, now past OAUTH_JWKS_CACHE_SECONDS; the key server breaks. Requests
    signed with a cached key go on at once (the refresh runs beside them) until the keys expire
    (OAUTH_JWKS_MAX_STALE_SECONDS later); then sign-in is unavailable (503), not refused (401)."""
    clock = Later(jwks)
    token = issuer.token(aud=RESOURCE)
    assert result_of(await post(GEOCODE, token))["results"]
    issuer.jwks_fault = fault
    clock.skip(jwks.max_age + 1)
    responses = await asyncio.gather(*(post(GEOCODE, token) for _ in range(7)))
    assert [r.status_code for r in responses] == [200] * 7
    await asyncio.wait_for(jwks._fetching, 5)  # the refresh they started, refused meanwhile
    (refused,) = logged(caplog, SigningKeysRefused.MESSAGE)
    assert refused["keys_kept"] == 1
    # a made-up kid is still refused as one (the keys held say so), not taken for an outage
    stub.requests.clear()
    assert_refused(await post(GEOCODE, issuer.token(aud=RESOURCE, kid="made-up")), 401, "invalid_token", stub)
    clock.skip(jwks.max_stale)
    assert (await post(GEOCODE, token)).status_code == 503


async def test_a_kid_in_flight_is_not_signed_out_by_a_failed_fetch_for_another(jwks, issuer, stub):
    """A fetch for an unknown kid fails while requests with the cached kid are answered."""
    clock = Later(jwks)
    token = issuer.token(aud=RESOURCE)
    assert result_of(await post(GEOCODE, token))["results"]
    issuer.jwks_fault = hang()
    clock.skip(jwks.min_refetch)
    unknown = post(GEOCODE, issuer.token(aud=RESOURCE, kid="rotated-in"))
    known = [post(GEOCODE, token) for _ in range(5)]
    responses = await asyncio.gather(unknown, *known)
    assert [r.status_code for r in responses] == [401] + [200] * 5


async def test_a_redirect_is_not_followed(jwks, issuer, stub, caplog):
    issuer.jwks_fault = answer(b"", status=302, headers={"Location": "http://127.0.0.1:1/keys"})
    assert (await post(GEOCODE, issuer.token(aud=RESOURCE))).status_code == 503
    assert logged(caplog, SigningKeysRefused.MESSAGE)[0]["reason"] == "HTTP 302"
