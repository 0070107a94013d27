"""Property tests of sign-in: whatever a token's header and claims hold, and whatever the issuer's
key server answers, validation ends in an access token or a refusal the HTTP guard can answer
(401/403 with the challenge, 503 when no key can be had), never in another exception (a 500).

Tokens are signed with the local issuer's key (or not at all) over any header and claims; key
sets are the issuer's real keys (RSA, EC, OKP), mutated member by member, mixed with anything
JSON can hold, or raw bytes. Validation runs against `ResourceServer` with the key server
stood in for in memory. Hypothesis runs derandomized with a bounded number of examples, so a CI
run is fast and the same every time.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import jwt
import orjson
import pytest
from cryptography.hazmat.primitives.asymmetric import ec, ed25519
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st
from mcp.server.auth.provider import AccessToken

from protocol.jwks import JWKS_MAX_KEYS, KeySetRefused, KeysUnavailable, parse_key_set
from protocol.oauth import AuthFailure, OAuthSettings, ResourceServer
from tests.support.issuer import LocalIssuer

RESOURCE = "https://maps.example/mcp"
EXAMPLES = hypothesis_settings(
    derandomize=True,
    database=None,
    deadline=None,
    max_examples=200,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
REFUSALS = {(401, "invalid_token"), (403, "insufficient_scope")}


@pytest.fixture(scope="module")
def issuer() -> Iterator[LocalIssuer]:
    with LocalIssuer() as running:
        yield running


def resource_server(issuer: LocalIssuer, key_set: bytes | None = None) -> ResourceServer:
    """A resource server for `issuer` whose key server answers `key_set` (the issuer's keys by default)."""
    server = ResourceServer(OAuthSettings(issuer.url, "https://keys.example/jwks", RESOURCE, [issuer.url], ["maps"]))
    body = json.dumps(issuer.jwks()).encode() if key_set is None else key_set

    async def fetch(url: str, timeout: float) -> bytes:
        return body

    server.jwks.fetch = fetch
    return server


def outcome(server: ResourceServer, token: str) -> AccessToken | AuthFailure:
    async def verify() -> AccessToken | AuthFailure:
        try:
            return await server.verify(token)
        except AuthFailure as failure:
            return failure

    return asyncio.run(verify())


# --- values ---------------------------------------------------------------------------------------

surrogates = st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF)
text = st.text(st.one_of(st.characters(), surrogates), max_size=20)
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**30), max_value=10**30),
    st.floats(allow_nan=True, allow_infinity=True),
    text,
)
json_values = st.recursive(
    scalars, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(text, inner, max_size=4), max_leaves=10
)


def deep(depth: int) -> Any:
    value: Any = 1
    for _ in range(depth):
        value = [value]
    return value


odd_values = st.one_of(json_values, st.integers(min_value=0, max_value=200).map(deep))


def with_replaced(base: dict[str, Any], names: list[str]) -> st.SearchStrategy[dict[str, Any]]:
    """`base` with some of `names` removed or replaced by any value, and maybe an extra member."""

    @st.composite
    def build(draw: st.DrawFn) -> dict[str, Any]:
        value = dict(base)
        for name in draw(st.sets(st.sampled_from(names), max_size=3)):
            if draw(st.booleans()):
                value.pop(name, None)
            else:
                value[name] = draw(odd_values)
        if draw(st.booleans()):
            value[draw(text)] = draw(odd_values)
        return value

    return build()


def encoded(value: Any) -> bytes:
    """JSON as a sloppy encoder might write it: NaN and Infinity literals, lone surrogates escaped."""
    return json.dumps(value).encode()


# --- token headers and claims ---------------------------------------------------------------------

HEADER_NAMES = ["alg", "kid", "typ", "crit", "b64", "jku", "jwk", "x5c", "x5u", "cty"]
CLAIM_NAMES = ["exp", "nbf", "iat", "iss", "aud", "sub", "scope", "scp", "client_id", "azp", "jti"]
ALGORITHMS = st.sampled_from(["RS256", "ES256", "PS256", "EdDSA", "RS512", "HS256", "none", "rs256", ""])


@st.composite
def tokens(draw: st.DrawFn, issuer: LocalIssuer) -> str:
    header: Any = {"alg": draw(ALGORITHMS), "kid": issuer.kid, "typ": "JWT"}
    header = draw(st.one_of(with_replaced(header, HEADER_NAMES), odd_values, st.binary(max_size=64)))
    claims: Any = issuer.claims(aud=RESOURCE)
    claims = draw(st.one_of(with_replaced(claims, CLAIM_NAMES), odd_values, st.binary(max_size=64)))
    token = issuer.raw_token(
        header if isinstance(header, bytes) else encoded(header),
        claims if isinstance(claims, bytes) else encoded(claims),
        signed=draw(st.booleans()),
    )
    cut = draw(st.sampled_from([None, None, None, -1, 5, len(token) // 2]))
    return token if cut is None else token[:cut] + draw(st.sampled_from(["", ".", "..", "=", "%", " x"]))


@EXAMPLES
@given(data=st.data())
def test_any_header_and_claims_end_in_a_token_or_a_refusal(issuer, data):
    server = resource_server(issuer)
    token = data.draw(tokens(issuer))
    result = outcome(server, token)
    if isinstance(result, AuthFailure):
        assert (result.status, result.error) in REFUSALS, result.description
        assert result.description.isprintable() and '"' not in result.description  # it goes in a header
    else:
        assert server.tenant_of(result) == "acme"
        assert "maps" in result.scopes


@EXAMPLES
@given(token=st.text(st.sampled_from("ABCDEFabcdef0123456789-_.=+/ \u00e9"), max_size=200))
def test_any_text_as_a_token_is_refused(issuer, token):
    result = outcome(resource_server(issuer), token)
    assert isinstance(result, AuthFailure) and (result.status, result.error) in REFUSALS


def test_the_untouched_token_is_accepted(issuer):
    """The property's baseline: the issuer's own token, through the same path."""
    assert isinstance(outcome(resource_server(issuer), issuer.token(aud=RESOURCE)), AccessToken)


# --- key sets -------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def other_keys() -> list[dict[str, Any]]:
    """An EC and an OKP signing key, beside the issuer's RSA key."""
    p256 = json.loads(jwt.algorithms.ECAlgorithm.to_jwk(ec.generate_private_key(ec.SECP256R1()).public_key()))
    okp = json.loads(jwt.algorithms.OKPAlgorithm.to_jwk(ed25519.Ed25519PrivateKey.generate().public_key()))
    return [{**p256, "kid": "ec", "use": "sig"}, {**okp, "kid": "okp", "alg": "EdDSA"}]


KEY_NAMES = ["kty", "kid", "use", "alg", "n", "e", "crv", "x", "y", "key_ops"]


@st.composite
def key_sets(draw: st.DrawFn, good: list[dict[str, Any]]) -> tuple[bytes, bool]:
    """A key-set body, and whether it holds the issuer's signing key untouched (then it must verify)."""
    shape = draw(st.sampled_from(["mutated", "mutated", "mutated", "any JSON", "bytes"]))
    if shape == "bytes":
        return draw(st.binary(max_size=256)), False
    if shape == "any JSON":
        return encoded(draw(odd_values)), False
    entries: list[Any] = []
    for i in range(draw(st.integers(min_value=0, max_value=5))):
        kind = draw(st.sampled_from(["key", "key", "value"]))
        if kind == "value":
            entries.append(draw(odd_values))
        else:
            key = {**draw(st.sampled_from(good)), "kid": f"k{i}"}
            entries.append(draw(with_replaced(key, KEY_NAMES)))
    untouched = draw(st.booleans())
    if untouched:
        entries.insert(draw(st.integers(min_value=0, max_value=len(entries))), good[0])
    document: Any = {"keys": entries}
    if draw(st.booleans()):
        document = draw(with_replaced(document, ["keys"]))
    body = encoded(document)
    holds = untouched and document.get("keys") is entries and len(entries) <= JWKS_MAX_KEYS and strict_json(body)
    return body, holds


def strict_json(body: bytes) -> bool:
    """Whether `body` is JSON as RFC 8259 has it (no NaN or Infinity, no lone surrogate)."""
    try:
        orjson.loads(body)
    except orjson.JSONDecodeError:
        return False
    return True


@EXAMPLES
@given(data=st.data())
def test_any_key_set_is_read_or_refused(issuer, other_keys, data):
    good = [issuer.jwks()["keys"][0], *other_keys]
    body, holds = data.draw(key_sets(good))
    try:
        keys, skipped = parse_key_set(body)
    except KeySetRefused as refused:
        assert str(refused) and not holds
    else:
        assert keys and all(isinstance(key, jwt.PyJWK) for key in keys.values())
        assert all(kid is None or isinstance(kid, str) for kid in keys)
        assert {s.index for s in skipped}.isdisjoint(range(-1))  # indexes, not made up
        if holds:
            assert issuer.kid in keys


@EXAMPLES
@given(data=st.data())
def test_a_token_against_any_key_set_is_accepted_or_refused(issuer, other_keys, data):
    """The issuer's valid token, its key server answering any key set: accepted when the set holds
    the key untouched; otherwise 401, or 503 when no key could be had. Never another exception."""
    good = [issuer.jwks()["keys"][0], *other_keys]
    body, holds = data.draw(key_sets(good))
    result = outcome(resource_server(issuer, body), issuer.token(aud=RESOURCE))
    if holds:
        assert isinstance(result, AccessToken), getattr(result, "description", result)
    elif isinstance(result, AuthFailure):
        assert (result.status, result.error) in {(401, "invalid_token"), (503, None)}, result.description


def test_keys_unavailable_is_what_a_refused_set_without_cached_keys_gives(issuer):
    server = resource_server(issuer, b"garbage")

    async def key() -> None:
        await server.jwks.key(issuer.kid)

    with pytest.raises(KeysUnavailable) as raised:
        asyncio.run(key())
    assert raised.value.retry_after == 10
