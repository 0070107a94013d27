"""tomtom-geocode with `queries`: a capped batch, each address with its results or its own error.

TomTom Maps: one Synchronous Batch request; Orbis: one Geocode call per address (composed)."""

import pytest

from tests.conftest import CREDIT, data
from tools.definitions.geocode import MAX_QUERIES
from tools.tomtom.backends import Backend

BATCH = "/search/2/batch/sync.json"
ORBIS = r"/maps/orbis/places/geocode"
QUERIES = ["Dam 1, Amsterdam", "Damrak 1, Amsterdam; XX", "nowhere 99"]


async def test_tomtom_maps_sends_one_batch_with_every_input_in_each_item(stub, dispatcher, context):
    stub.route("POST", BATCH, json_body=data("batch_geocode_mixed.json"))
    context.backend = Backend.GENESIS
    arguments = {"queries": QUERIES, "countries": ["nl"], "language": "nl-NL", "position": [4.9, 52.37]}
    outcome = await dispatcher.call("tomtom-geocode", arguments, context)
    assert not outcome.is_error, outcome.text
    (sent,) = stub.requests
    assert (sent.method, sent.path) == ("POST", BATCH)
    assert sent.json() == {
        "batchItems": [
            {"query": "/geocode/Dam%201%2C%20Amsterdam.json?limit=1&language=nl-NL&countrySet=NL&lon=4.9&lat=52.37"},
            {
                "query": "/geocode/Damrak%201%2C%20Amsterdam%3B%20XX.json"
                "?limit=1&language=nl-NL&countrySet=NL&lon=4.9&lat=52.37"
            },
            {"query": "/geocode/nowhere%2099.json?limit=1&language=nl-NL&countrySet=NL&lon=4.9&lat=52.37"},
        ]
    }


async def test_mixed_good_and_bad_items_each_answer_alone(stub, dispatcher, context):
    stub.route("POST", BATCH, json_body=data("batch_geocode_mixed.json"))
    context.backend = Backend.GENESIS
    outcome = await dispatcher.call("tomtom-geocode", {"queries": QUERIES}, context)
    assert not outcome.is_error, outcome.text
    good, bad, empty = outcome.data["items"]
    assert good["query"] == QUERIES[0] and good["results"][0]["position"] == [4.89273, 52.37314]
    assert good["results"][0]["address"]["freeformAddress"] == "Dam 1, 1012 JS Amsterdam"
    assert bad == {
        "query": QUERIES[1],
        "error": {
            "code": "invalid_arguments",
            "message": "TomTom refused this query (status 400): Error parsing 'countrySet': 'XX' is not a valid "
            "country code",
        },
    }
    assert empty == {"query": QUERIES[2], "results": []}
    assert {k: outcome.data[k] for k in ("total", "succeeded", "failed")} == {"total": 3, "succeeded": 2, "failed": 1}
    assert len(outcome.text) < 1200


async def test_full_is_tomtoms_batch_answer(stub, dispatcher, context):
    stub.route("POST", BATCH, json_body=data("batch_geocode_mixed.json"))
    context.backend = Backend.GENESIS
    outcome = await dispatcher.call("tomtom-geocode", {"queries": QUERIES, "response_detail": "full"}, context)
    assert outcome.data == {**data("batch_geocode_mixed.json"), "show_ui": False, **CREDIT[Backend.GENESIS]}


async def test_orbis_composes_one_geocode_per_address_and_keeps_item_errors(stub, dispatcher, context):
    stub.route("GET", ORBIS, json_body=data("geocode_v2.json"))
    stub.route("GET", ORBIS, query=r"query=Damrak", status=400, json_body={"errorText": "bad query"})
    outcome = await dispatcher.call("tomtom-geocode", {"queries": QUERIES, "limit": 2}, context)
    assert not outcome.is_error, outcome.text
    assert sorted(r.param("query") for r in stub.requests) == sorted(QUERIES)
    assert all(r.path == ORBIS and r.param("maxResults") == "2" for r in stub.requests)
    assert all(
        r.headers["tomtom-api-version"] == "2" and r.headers["attributes"] == "results(*)" for r in stub.requests
    )
    items = outcome.data["items"]
    assert [item["query"] for item in items] == QUERIES  # in the order given, whatever order they were answered
    assert len(items[0]["results"]) == 2 and items[1]["error"]["code"] == "invalid_arguments"
    assert "bad query" in items[1]["error"]["message"]
    assert (outcome.data["succeeded"], outcome.data["failed"]) == (2, 1)


async def test_an_orbis_answer_of_the_wrong_shape_is_that_items_error(stub, dispatcher, context):
    stub.route("GET", ORBIS, json_body=data("geocode_v2.json"))
    stub.route("GET", ORBIS, query=r"query=nowhere", json_body={"results": [{"position": [4.9, 52.3]}]})
    items = (await dispatcher.call("tomtom-geocode", {"queries": QUERIES}, context)).data["items"]
    assert items[2]["error"]["code"] == "malformed" and "results" in items[0] and "results" in items[1]


async def test_a_refused_key_fails_the_whole_batch(stub, dispatcher, context):
    stub.route("GET", ORBIS, status=403, json_body={"errorText": "no"})
    outcome = await dispatcher.call("tomtom-geocode", {"queries": QUERIES}, context)
    assert outcome.data["error"]["code"] == "unauthorized"


async def test_an_item_tomtom_answers_badly_is_that_items_error(stub, dispatcher, context):
    body = data("batch_geocode_mixed.json")
    body["batchItems"][2]["response"] = {"results": [{"type": "POI", "poi": {"name": 7}}]}
    stub.route("POST", BATCH, json_body=body)
    context.backend = Backend.GENESIS
    items = (await dispatcher.call("tomtom-geocode", {"queries": QUERIES}, context)).data["items"]
    assert items[2]["error"]["code"] == "malformed" and "results" in items[0]


@pytest.mark.parametrize(
    "body",
    [
        {"batchItems": [{"statusCode": 200, "response": {}}]},
        {"batchItems": "x"},
        {"batchItems": [{"statusCode": "ok"}]},
    ],
)
async def test_a_batch_answer_we_cannot_read_is_malformed(stub, dispatcher, context, body):
    stub.route("POST", BATCH, json_body=body)
    context.backend = Backend.GENESIS
    outcome = await dispatcher.call("tomtom-geocode", {"queries": QUERIES}, context)
    assert outcome.data["error"]["code"] == "malformed", outcome.text


async def test_one_over_the_cap_is_refused_before_any_request(stub, dispatcher, context):
    queries = [f"Damstraat {n}, Amsterdam" for n in range(MAX_QUERIES + 1)]
    outcome = await dispatcher.call("tomtom-geocode", {"queries": queries}, context)
    error = outcome.data["error"]
    assert (error["code"], error["argument"]) == ("invalid_arguments", "queries")
    assert f"at most {MAX_QUERIES} items" in error["message"]
    assert stub.requests == []


@pytest.mark.parametrize(
    ("arguments", "named"),
    [({}, ["query", "queries"]), ({"query": "Dam 1", "queries": ["Dam 2"]}, ["query", "queries"])],
)
async def test_one_query_or_queries(stub, dispatcher, context, arguments, named):
    error = (await dispatcher.call("tomtom-geocode", arguments, context)).data["error"]
    assert (error["code"], error["arguments"]) == ("invalid_arguments", named)
