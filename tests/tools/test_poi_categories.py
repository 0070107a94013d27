import pytest

from tests.conftest import CANARY_KEY, data
from tools.tomtom.backends import Backend

pytestmark = pytest.mark.asyncio

PATHS = {Backend.ORBIS: "/maps/orbis/places/poiCategories.json", Backend.GENESIS: "/search/2/poiCategories.json"}


@pytest.mark.parametrize("backend", list(Backend))
async def test_request_on_each_backend(stub, catalog, context, backend):
    stub.route("GET", PATHS[backend], json_body=data("poi_categories.json"))
    context.backend = backend
    outcome = await catalog.call("tomtom-poi-categories", {"filters": ["pharmacy"], "language": "de-DE"}, context)
    assert not outcome.is_error, outcome.text
    sent = stub.requests[-1]
    assert sent.path == PATHS[backend]
    assert sent.query == {
        **({"apiVersion": ["1"]} if backend is Backend.ORBIS else {}),
        "language": ["de-DE"],
        "key": [CANARY_KEY],
    }


async def test_filters_find_names_and_synonyms_best_first_then_by_id(stub, catalog, context):
    stub.route("GET", PATHS[Backend.ORBIS], json_body=data("poi_categories.json"))
    outcome = await catalog.call("tomtom-poi-categories", {"filters": ["Coffee", "brasserie"]}, context)
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
    }


async def test_a_phrase_matches_when_all_its_words_do(stub, catalog, context):
    stub.route("GET", PATHS[Backend.ORBIS], json_body=data("poi_categories.json"))
    outcome = await catalog.call("tomtom-poi-categories", {"filters": ["charging station"]}, context)
    assert [c["id"] for c in outcome.data["categories"]] == [7309]
    outcome = await catalog.call("tomtom-poi-categories", {"filters": ["vehicle charging"]}, context)
    assert [c["id"] for c in outcome.data["categories"]] == [7309]


async def test_without_filters_lists_top_level_categories(stub, catalog, context):
    stub.route("GET", PATHS[Backend.ORBIS], json_body=data("poi_categories.json"))
    outcome = await catalog.call("tomtom-poi-categories", {}, context)
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
    }


async def test_many_matches_are_capped(stub, catalog, context):
    many = {"poiCategories": [{"id": 7000 + i, "name": f"Shop {i}", "synonyms": []} for i in range(40)]}
    stub.route("GET", PATHS[Backend.ORBIS], json_body=many)
    outcome = await catalog.call("tomtom-poi-categories", {"filters": ["shop"]}, context)
    assert (outcome.data["total"], outcome.data["returned"], outcome.data["truncated"]) == (40, 25, True)
    assert outcome.data["categories"][0] == {"id": 7000, "name": "Shop 0"}


async def test_full_is_the_untrimmed_answer(stub, catalog, context):
    stub.route("GET", PATHS[Backend.ORBIS], json_body=data("poi_categories.json"))
    outcome = await catalog.call("tomtom-poi-categories", {"filters": ["pharmacy"], "response_detail": "full"}, context)
    assert outcome.data == data("poi_categories.json")


async def test_empty_filter_word_is_refused(stub, catalog, context):
    outcome = await catalog.call("tomtom-poi-categories", {"filters": [""]}, context)
    assert outcome.data["error"]["argument"] == "filters[0]"
    assert stub.requests == []


async def test_an_equal_name_ranks_before_a_containing_one(stub, catalog, context):
    stub.route("GET", PATHS[Backend.ORBIS], json_body=data("poi_categories.json"))
    outcome = await catalog.call("tomtom-poi-categories", {"filters": ["CAFÉ"]}, context)
    assert [c["name"] for c in outcome.data["categories"]] == ["Café", "Café/Pub"]
