import pytest

from tests.conftest import CANARY_KEY, CREDIT, data
from tools.tomtom.backends import Backend

pytestmark = pytest.mark.asyncio

PATHS = {Backend.ORBIS: "/maps/orbis/places/poiCategories.json", Backend.GENESIS: "/search/2/poiCategories.json"}


@pytest.mark.parametrize("backend", list(Backend))
async def test_request_on_each_backend(stub, dispatcher, context, backend):
    stub.route("GET", PATHS[backend], json_body=data("poi_categories.json"))
    context.backend = backend
    outcome = await dispatcher.call("tomtom-poi-categories", {"filters": ["pharmacy"], "language": "de-DE"}, context)
    assert not outcome.is_error, outcome.text
    sent = stub.requests[-1]
    assert sent.path == PATHS[backend]
    assert sent.query == {
        **({"apiVersion": ["1"]} if backend is Backend.ORBIS else {}),
        "language": ["de-DE"],
        **({} if backend is Backend.ORBIS else {"key": [CANARY_KEY]}),  # Orbis: the key in its header
    }


async def test_filters_find_names_and_synonyms_best_first_then_by_id(stub, dispatcher, context):
    stub.route("GET", PATHS[Backend.ORBIS], json_body=data("poi_categories.json"))
    outcome = await dispatcher.call("tomtom-poi-categories", {"filters": ["Coffee", "brasserie"]}, context)
    assert outcome.data == {
        "categories": [
            {
                "id": 7315,
                "name": "Restaurant",
                "synonyms": ["Eatery", "Diner", "Bistro", "Brasserie", "Dining"],
            },
            {"id": 7315017, "name": "French", "synonyms": ["Brasserie"]},
            {"id": 9376, "name": "Café/Pub", "synonyms": ["Bar", "Coffee"]},
            {"id": 9376002, "name": "Café", "synonyms": ["Coffee Shop", "Coffee House"]},
        ],
        "total": 4,
        "returned": 4,
        "truncated": False,
        **CREDIT[Backend.ORBIS],
    }


async def test_a_phrase_matches_when_all_its_words_do(stub, dispatcher, context):
    stub.route("GET", PATHS[Backend.ORBIS], json_body=data("poi_categories.json"))
    outcome = await dispatcher.call("tomtom-poi-categories", {"filters": ["charging station"]}, context)
    assert [c["id"] for c in outcome.data["categories"]] == [7309]
    outcome = await dispatcher.call("tomtom-poi-categories", {"filters": ["vehicle charging"]}, context)
    assert [c["id"] for c in outcome.data["categories"]] == [7309]


async def test_without_filters_lists_top_level_categories(stub, dispatcher, context):
    stub.route("GET", PATHS[Backend.ORBIS], json_body=data("poi_categories.json"))
    outcome = await dispatcher.call("tomtom-poi-categories", {}, context)
    assert outcome.data == {
        "categories": [
            {"id": 7326, "name": "Pharmacy"},
            {"id": 7309, "name": "Electric Vehicle Station"},
            {"id": 7315, "name": "Restaurant"},
            {"id": 9376, "name": "Café/Pub"},
        ],
        "total": 4,
        "returned": 4,
        "truncated": False,
        **CREDIT[Backend.ORBIS],
    }


async def test_many_matches_are_capped(stub, dispatcher, context):
    many = {"poiCategories": [{"id": 7000 + i, "name": f"Shop {i}", "synonyms": []} for i in range(40)]}
    stub.route("GET", PATHS[Backend.ORBIS], json_body=many)
    outcome = await dispatcher.call("tomtom-poi-categories", {"filters": ["shop"]}, context)
    assert (outcome.data["total"], outcome.data["returned"], outcome.data["truncated"]) == (40, 25, True)
    assert outcome.data["categories"][0] == {"id": 7000, "name": "Shop 0"}


async def test_full_is_the_untrimmed_answer(stub, dispatcher, context):
    stub.route("GET", PATHS[Backend.ORBIS], json_body=data("poi_categories.json"))
    outcome = await dispatcher.call(
        "tomtom-poi-categories", {"filters": ["pharmacy"], "response_detail": "full"}, context
    )
    assert outcome.data == {**data("poi_categories.json"), **CREDIT[Backend.ORBIS]}


async def test_empty_filter_word_is_refused(stub, dispatcher, context):
    outcome = await dispatcher.call("tomtom-poi-categories", {"filters": [""]}, context)
    assert outcome.data["error"]["argument"] == "filters[0]"
    assert stub.requests == []


@pytest.mark.parametrize(
    ("arguments", "argument", "message"),
    [
        ({"filters": []}, "filters", "filters: should have at least 1 item"),
        ({"filters": ["shop"] * 11}, "filters", "filters: should have at most 10 items"),
        ({"filters": ["x" * 101]}, "filters[0]", "filters[0]: should have at most 100 characters"),
        ({"filters": "pharmacy"}, "filters", "filters: should be a valid list"),
        ({"language": ""}, "language", "language: '' is not a language tag such as en-GB"),
        ({"response_detail": "geometry"}, "response_detail", "response_detail: this tool returns points only"),
        ({"query": "pharmacy"}, "query", "unknown argument(s) query"),
    ],
)
async def test_bad_arguments_are_named(stub, dispatcher, context, arguments, argument, message):
    outcome = await dispatcher.call("tomtom-poi-categories", arguments, context)
    assert outcome.data["error"]["code"] == "invalid_arguments"
    assert outcome.data["error"]["argument"] == argument
    assert outcome.data["error"]["message"].startswith(message)
    assert stub.requests == []


async def test_an_equal_name_ranks_before_a_containing_one(stub, dispatcher, context):
    stub.route("GET", PATHS[Backend.ORBIS], json_body=data("poi_categories.json"))
    outcome = await dispatcher.call("tomtom-poi-categories", {"filters": ["CAFÉ"]}, context)
    assert [c["name"] for c in outcome.data["categories"]] == ["Café", "Café/Pub"]
