"""tomtom-place-details: Place by Id on both backends; compact with hours, time zone and open now."""

from datetime import UTC, datetime

import pytest

from tests.conftest import CANARY_KEY, CREDIT, data
from tools.definitions import place_details
from tools.tomtom.backends import Backend

PATHS = {Backend.ORBIS: "/maps/orbis/places/place.json", Backend.GENESIS: "/search/2/place.json"}
ID = "528009002822995"


@pytest.fixture
def at_noon_in_amsterdam(monkeypatch):
    """2026-12-02 12:00 in Amsterdam (11:00 UTC): inside the place's first opening range."""
    monkeypatch.setattr(place_details, "now_utc", lambda: datetime(2026, 12, 2, 11, 0, tzinfo=UTC))


@pytest.mark.parametrize("backend", list(Backend))
async def test_request_on_each_backend(stub, dispatcher, context, backend, at_noon_in_amsterdam):
    stub.route("GET", PATHS[backend], json_body=data("place_details.json"))
    context.backend = backend
    outcome = await dispatcher.call("tomtom-place-details", {"id": ID, "language": "nl-NL"}, context)
    assert not outcome.is_error, outcome.text
    assert stub.requests[-1].query == {
        **({"apiVersion": ["1"]} if backend is Backend.ORBIS else {}),
        "entityId": [ID],
        "language": ["nl-NL"],
        "openingHours": ["nextSevenDays"],
        "timeZone": ["iana"],
        **({} if backend is Backend.ORBIS else {"key": [CANARY_KEY]}),  # Orbis: the key in its header
    }


async def test_compact_answers_phone_website_hours_and_open_now(stub, dispatcher, context, at_noon_in_amsterdam):
    stub.route("GET", PATHS[Backend.ORBIS], json_body=data("place_details.json"))
    outcome = await dispatcher.call("tomtom-place-details", {"id": ID}, context)
    assert (
        outcome.data
        == {
            "place": {
                "id": ID,
                "type": "POI",
                "address": {
                    "freeformAddress": "Damstraat 12, 1012 JM Amsterdam",
                    "streetNumber": "12",
                    "streetName": "Damstraat",
                    "municipality": "Amsterdam",
                    "postalCode": "1012",
                    "countrySubdivision": "Noord-Holland",
                    "country": "Nederland",
                    "countryCode": "NL",
                },
                "position": [4.89532, 52.37258],
                "poi": {
                    "name": "Apotheek Centrum",
                    "phone": "+31 20 000 0001",
                    "url": "www.example-apotheek.nl",
                    "categories": ["pharmacy"],
                    "brands": ["BENU"],
                    "openingHours": ["2026-12-02 08:30-18:00", "2026-12-03 08:30-18:00"],
                    "timeZone": "Europe/Amsterdam",
                },
                "openNow": True,
            }
        }
        | CREDIT[Backend.ORBIS]
    )
    assert len(outcome.text) < 700


async def test_closed_at_night_in_the_places_own_time_zone(stub, dispatcher, context, monkeypatch):
    # 17:30 UTC is 18:30 in Amsterdam: after closing, though 17:30 would be inside the range.
    monkeypatch.setattr(place_details, "now_utc", lambda: datetime(2026, 12, 2, 17, 30, tzinfo=UTC))
    stub.route("GET", PATHS[Backend.ORBIS], json_body=data("place_details.json"))
    outcome = await dispatcher.call("tomtom-place-details", {"id": ID}, context)
    assert outcome.data["place"]["openNow"] is False


async def test_full_is_tomtoms_answer(stub, dispatcher, context):
    stub.route("GET", PATHS[Backend.GENESIS], json_body=data("place_details.json"))
    context.backend = Backend.GENESIS
    outcome = await dispatcher.call("tomtom-place-details", {"id": ID, "response_detail": "full"}, context)
    assert outcome.data == data("place_details.json") | CREDIT[Backend.GENESIS]


@pytest.mark.parametrize("detail", ["compact", "full"])
async def test_an_unknown_id_is_named(stub, dispatcher, context, detail):
    stub.route("GET", PATHS[Backend.ORBIS], json_body={"summary": {"numResults": 0}, "results": []})
    outcome = await dispatcher.call("tomtom-place-details", {"id": "nope", "response_detail": detail}, context)
    error = outcome.data["error"]
    assert (error["code"], error["argument"]) == ("invalid_arguments", "id")
    assert "send the `id` of a search result" in error["message"]


async def test_bad_data_is_malformed(stub, dispatcher, context):
    stub.route("GET", PATHS[Backend.ORBIS], json_body={"results": [{"type": "POI", "poi": {"name": 7}}]})
    outcome = await dispatcher.call("tomtom-place-details", {"id": ID}, context)
    assert outcome.data["error"]["code"] == "malformed"


async def test_search_results_carry_the_id_it_takes(stub, dispatcher, context):
    stub.route("GET", "/maps/orbis/places/poiSearch/.*", json_body=data("poi_search.json"))
    outcome = await dispatcher.call("tomtom-poi-search", {"query": "apotheek"}, context)
    assert [r.get("id") for r in outcome.data["results"]] == ["NL/POI/p0/100", "NL/POI/p0/101"]
