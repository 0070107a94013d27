"""The TomTom client: retries within a deadline, status mapping, the key kept secret."""

import pytest

from tests.conftest import CANARY_KEY, make_config
from tools.context import CallContext
from tools.tomtom.backends import Backend

PATH = r"/maps/orbis/places/geocode"
CALL = ("tomtom-geocode", {"query": "Dam"})
GOOD = {"summary": {"totalResults": 0}, "results": []}


async def call(dispatcher, context):
    return await dispatcher.call(*CALL, context)


async def test_retries_503_then_succeeds(stub, dispatcher, context):
    stub.route("GET", PATH, json_body=GOOD)
    stub.route("GET", PATH, status=503, json_body={}, times=2)
    outcome = await call(dispatcher, context)
    assert not outcome.is_error
    assert len(stub.requests) == 3


async def test_honours_retry_after_and_gives_up_with_retry_later(stub, dispatcher, context):
    stub.route("GET", PATH, status=429, json_body={}, headers={"Retry-After": "30"})
    outcome = await call(dispatcher, context)
    assert outcome.data["error"]["code"] == "retry_later"
    assert outcome.data["error"]["retry_after"] == 30
    assert len(stub.requests) == 1  # waiting 30 s would pass the 5 s deadline: no retry


async def test_bounded_retries(stub, dispatcher, context):
    stub.route("GET", PATH, status=502, json_body={})
    outcome = await call(dispatcher, context)
    assert outcome.data["error"]["code"] == "unavailable"
    assert len(stub.requests) == 3  # the first try and max_retries=2


@pytest.mark.parametrize(
    ("status", "body", "code", "text"),
    [
        (
            400,
            {"errorText": "Invalid query: countrySet"},
            "invalid_arguments",
            "TomTom said: Invalid query: countrySet",
        ),
        (403, {"detailedError": {"message": "Forbidden"}}, "unauthorized", "TomTom refused the API key"),
        (401, {}, "unauthorized", "invalid, expired"),
        (500, {}, "unavailable", "status 500"),
    ],
)
async def test_status_mapping(stub, dispatcher, context, status, body, code, text):
    stub.route("GET", PATH, status=status, json_body=body)
    outcome = await call(dispatcher, context)
    assert outcome.data["error"]["code"] == code
    assert text in outcome.data["error"]["message"]


async def test_not_json_is_malformed(stub, dispatcher, context):
    stub.route("GET", PATH, body=b"<html>gateway</html>")
    assert (await call(dispatcher, context)).data["error"]["code"] == "malformed"


async def test_unreachable_tomtom_is_unavailable(dispatcher):
    from tools.tomtom.client import ClientSettings

    config = make_config(
        type("S", (), {"base_url": "http://127.0.0.1:9"})(), client=ClientSettings(base_url="http://127.0.0.1:9")
    )
    outcome = await dispatcher.call(*CALL, CallContext(config=config, transport="exec"))
    assert outcome.data["error"]["code"] == "unavailable"
    assert "127.0.0.1" not in outcome.text


async def test_missing_key_says_how_to_give_one(stub, dispatcher):
    config = make_config(stub, server_key=None)
    outcome = await dispatcher.call(*CALL, CallContext(config=config, transport="stdio"))
    assert outcome.data["error"] == {
        "code": "unauthorized",
        "message": "No TomTom API key: set TOMTOM_API_KEY in the environment or .env, or pass --apikey-file PATH.",
    }
    assert stub.requests == []


async def test_key_priority(stub, dispatcher):
    from tools.tomtom.credentials import KeySources

    stub.route("GET", PATH, json_body=GOOD)
    config = make_config(stub)
    for keys, expected in [
        (KeySources(header="h", bearer="b", cli="c"), "h"),
        (KeySources(bearer="b", cli="c"), "b"),
        (KeySources(cli="c"), "c"),
        (KeySources(), CANARY_KEY),
    ]:
        await dispatcher.call(*CALL, CallContext(config=config, transport="http", keys=keys, backend=Backend.ORBIS))
        assert stub.requests[-1].api_key == expected


async def test_the_key_travels_in_its_header_on_orbis_and_as_a_parameter_on_tomtom_maps(stub, dispatcher):
    stub.route("GET", PATH, json_body=GOOD)
    stub.route("GET", r"/search/2/geocode/.*", json_body=GOOD)
    config = make_config(stub)
    await dispatcher.call(*CALL, CallContext(config=config, transport="exec", backend=Backend.ORBIS))
    orbis = stub.requests[-1]
    assert orbis.headers["tomtom-api-key"] == CANARY_KEY and "key" not in orbis.query
    await dispatcher.call(*CALL, CallContext(config=config, transport="exec", backend=Backend.GENESIS))
    genesis = stub.requests[-1]
    assert genesis.param("key") == CANARY_KEY and "tomtom-api-key" not in genesis.headers


async def test_a_request_cannot_replace_the_key_header(stub):
    from tools.tomtom.client import TomTomSession

    stub.route("GET", PATH, json_body=GOOD)
    config = make_config(stub)
    session = TomTomSession(settings=config.client, api_key=CANARY_KEY, backend=Backend.ORBIS, user_agent="t/1 x")
    for spelling in ("TomTom-Api-Key", "tomtom-api-key"):
        await session.get("/maps/orbis/places/geocode", {"query": "Dam"}, headers={spelling: "other"})
        assert stub.requests[-1].headers["tomtom-api-key"] == CANARY_KEY
