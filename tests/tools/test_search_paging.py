"""Paging past the first page of search results (issue #44).

A search whose TomTom endpoint takes `ofs` (fuzzy, POI, nearest POI, EV) answers a truncated
page with `nextCursor` and a `more` sentence saying to call again with it; the next call sends
`ofs` = where the previous page ended and answers the next results. A cursor that is not one
this server made, is out of TomTom's bounds, or belongs to other arguments is `invalid_arguments`
naming `cursor`, before TomTom is asked anything. Area search and search along route cannot
page (no `ofs`): they take no cursor and their truncated answer says to narrow instead.
"""

from __future__ import annotations

import base64
import copy
import struct
from dataclasses import dataclass
from typing import Any

import pytest

from tests.conftest import data
from tools.definitions.fuzzy_search import FuzzySearchInput
from tools.definitions.search_common import MAX_OFFSET, next_cursor
from tools.tomtom.backends import Backend

AMSTERDAM = [4.9041, 52.3676]
UTRECHT = [5.1215, 52.0907]


@dataclass(frozen=True)
class Paged:
    """A search that pages: the tool, its arguments, the endpoint on each backend, TomTom's answer."""

    tool: str
    arguments: dict[str, Any]
    paths: dict[Backend, str]
    answer: str

    def page(self, offset: int, names: list[str], total: int | None = None) -> dict[str, Any]:
        """TomTom's answer from `offset` on: the canned answer's results renamed `names`."""
        body = copy.deepcopy(data(self.answer))
        template = body["results"][0]
        body["results"] = [{**copy.deepcopy(template), "id": name, "poi": {"name": name}} for name in names]
        body["summary"].update(offset=offset, numResults=len(names))
        if total is not None:
            body["summary"]["totalResults"] = total
        return body


SEARCHES = [
    Paged(
        "tomtom-fuzzy-search",
        {"query": "coffee", "limit": 2},
        {Backend.ORBIS: "/maps/orbis/places/search/coffee.json", Backend.GENESIS: "/search/2/search/coffee.json"},
        "poi_search.json",
    ),
    Paged(
        "tomtom-poi-search",
        {"query": "pharmacy", "limit": 2},
        {
            Backend.ORBIS: "/maps/orbis/places/poiSearch/pharmacy.json",
            Backend.GENESIS: "/search/2/poiSearch/pharmacy.json",
        },
        "poi_search.json",
    ),
    Paged(
        "tomtom-poi-search",
        {"position": AMSTERDAM, "poiCategories": [7326], "limit": 2},
        {Backend.ORBIS: "/maps/orbis/places/nearbySearch/.json", Backend.GENESIS: "/search/2/nearbySearch/.json"},
        "poi_search.json",
    ),
    Paged(
        "tomtom-ev-search",
        {"position": AMSTERDAM, "limit": 2},
        {Backend.ORBIS: "/maps/orbis/places/nearbySearch/.json", Backend.GENESIS: "/search/2/nearbySearch/.json"},
        "ev_search.json",
    ),
]
IDS = ["fuzzy", "poi", "poi-nearest", "ev"]


def answering(stub, search: Paged, backend: Backend, body: dict[str, Any]) -> None:
    stub.route("GET", search.paths[backend], json_body=body)
    stub.route("GET", "/search/2/chargingAvailability.json", json_body=data("charging_availability.json"))


def searches_sent(stub, search: Paged, backend: Backend) -> list[Any]:
    return [r for r in stub.requests if r.path == search.paths[backend]]


def tampered(cursor: str, *, offset: int | None = None, digest: bytes | None = None, version: int | None = None) -> str:
    """`cursor` with one of its parts changed (the layout is the server's: version, offset, digest)."""
    layout = struct.Struct(">BH8s")
    was_version, was_offset, was_digest = layout.unpack(base64.urlsafe_b64decode(cursor + "="))
    packed = layout.pack(
        was_version if version is None else version,
        was_offset if offset is None else offset,
        was_digest if digest is None else digest,
    )
    return base64.urlsafe_b64encode(packed).rstrip(b"=").decode()


def assert_cursor_refused(outcome, stub, *words: str) -> None:
    error = outcome.data["error"]
    assert error["code"] == "invalid_arguments" and error["argument"] == "cursor", error
    assert error["message"].startswith("cursor: ")
    assert all(word in error["message"] for word in words), error["message"]
    assert stub.requests == [], "a wrong cursor never reaches TomTom"


@pytest.mark.parametrize("backend", list(Backend))
@pytest.mark.parametrize("search", SEARCHES, ids=IDS)
async def test_a_truncated_page_gives_a_cursor_that_fetches_the_next(stub, dispatcher, context, search, backend):
    context.backend = backend
    total = data(search.answer)["summary"]["totalResults"]
    answering(stub, search, backend, search.page(0, ["first", "second"]))

    first = await dispatcher.call(search.tool, search.arguments, context)

    assert not first.is_error, first.text
    (sent,) = searches_sent(stub, search, backend)
    assert sent.param("ofs") is None and sent.param("limit") == "2"
    cursor = first.data["nextCursor"]
    assert (first.data["total"], first.data["returned"], first.data["truncated"]) == (total, 2, True)
    assert (
        first.data["more"] == f'Results 1-2 of {total}; next: call again with the same arguments and cursor="{cursor}".'
    )

    stub.clear()
    answering(stub, search, backend, search.page(2, ["third", "fourth"]))
    second = await dispatcher.call(search.tool, {**search.arguments, "cursor": cursor}, context)

    assert not second.is_error, second.text
    (sent,) = searches_sent(stub, search, backend)
    assert sent.param("ofs") == "2"  # the previous offset (0) plus the page size (2)
    assert sent.param("limit") == "2"
    assert [r["poi"]["name"] for r in second.data["results"]] == ["third", "fourth"]
    following = second.data["nextCursor"]
    assert second.data["more"].startswith(f"Results 3-4 of {total}; next: ")

    stub.clear()
    answering(stub, search, backend, search.page(4, ["fifth", "sixth"]))
    third = await dispatcher.call(search.tool, {**search.arguments, "cursor": following}, context)

    (sent,) = searches_sent(stub, search, backend)
    assert sent.param("ofs") == "4"
    assert third.data["more"].startswith(f"Results 5-6 of {total}; next: ")


@pytest.mark.parametrize("search", SEARCHES, ids=IDS)
async def test_a_cursor_for_another_query_is_refused_naming_cursor(stub, dispatcher, context, search):
    answering(stub, search, Backend.ORBIS, search.page(0, ["first", "second"]))
    cursor = (await dispatcher.call(search.tool, search.arguments, context)).data["nextCursor"]
    other = {**search.arguments, "language": "nl-NL"}
    stub.clear()

    outcome = await dispatcher.call(search.tool, {**other, "cursor": cursor}, context)

    assert_cursor_refused(outcome, stub, "belongs to another search", "leave cursor out")


@pytest.mark.parametrize(
    "change",
    [
        pytest.param(lambda c: tampered(c, digest=b"\0" * 8), id="digest"),
        pytest.param(lambda c: tampered(c, offset=MAX_OFFSET + 1), id="offset-past-tomtom"),
        pytest.param(lambda c: tampered(c, offset=0), id="offset-zero"),
        pytest.param(lambda c: tampered(c, version=9), id="version"),
        pytest.param(lambda c: c[:-1], id="cut"),
        pytest.param(lambda c: c + "A", id="grown"),
        pytest.param(lambda c: c[:-1] + "!", id="not-base64url"),
        pytest.param(lambda c: "x" * 65, id="too-long"),
    ],
)
async def test_a_tampered_cursor_is_refused_naming_cursor(stub, dispatcher, context, change):
    search = SEARCHES[0]
    answering(stub, search, Backend.ORBIS, search.page(0, ["first", "second"]))
    cursor = (await dispatcher.call(search.tool, search.arguments, context)).data["nextCursor"]
    stub.clear()

    outcome = await dispatcher.call(search.tool, {**search.arguments, "cursor": change(cursor)}, context)

    assert_cursor_refused(outcome, stub)


async def test_a_cursor_of_another_tool_is_refused(stub, dispatcher, context):
    fuzzy, poi = SEARCHES[0], SEARCHES[1]
    stub.route("GET", "/maps/orbis/places/search/pharmacy.json", json_body=fuzzy.page(0, ["first", "second"]))
    cursor = (await dispatcher.call(fuzzy.tool, poi.arguments, context)).data["nextCursor"]
    stub.clear()

    outcome = await dispatcher.call(poi.tool, {**poi.arguments, "cursor": cursor}, context)

    assert_cursor_refused(outcome, stub, "belongs to another search")


async def test_the_page_size_and_shape_may_change_between_pages(stub, dispatcher, context):
    search = SEARCHES[0]
    answering(stub, search, Backend.ORBIS, search.page(0, ["first", "second"]))
    cursor = (await dispatcher.call(search.tool, search.arguments, context)).data["nextCursor"]
    stub.clear()
    answering(stub, search, Backend.ORBIS, search.page(2, ["third", "fourth", "fifth"]))

    arguments = {**search.arguments, "limit": 3, "response_detail": "full", "show_ui": True, "cursor": cursor}
    outcome = await dispatcher.call(search.tool, arguments, context)

    assert not outcome.is_error, outcome.text
    (sent,) = stub.requests
    assert (sent.param("ofs"), sent.param("limit")) == ("2", "3")
    assert outcome.data["more"].startswith("Results 3-5 of 12; next: ")


async def test_the_last_page_says_so_without_a_cursor(stub, dispatcher, context):
    search = SEARCHES[0]
    cursor = next_cursor(FuzzySearchInput.model_validate(search.arguments), 10)
    answering(stub, search, Backend.ORBIS, search.page(10, ["eleventh", "twelfth"]))

    outcome = await dispatcher.call(search.tool, {**search.arguments, "cursor": cursor}, context)

    assert stub.requests[0].param("ofs") == "10"
    assert "nextCursor" not in outcome.data
    assert outcome.data["more"] == "Results 11-12 of 12: the last page."


async def test_tomtom_pages_only_so_far_and_the_answer_says_to_narrow(stub, dispatcher, context):
    search = SEARCHES[0]
    cursor = next_cursor(FuzzySearchInput.model_validate(search.arguments), MAX_OFFSET)
    answering(stub, search, Backend.ORBIS, search.page(MAX_OFFSET, ["a", "b"], total=5000))

    outcome = await dispatcher.call(search.tool, {**search.arguments, "cursor": cursor}, context)

    assert stub.requests[0].param("ofs") == str(MAX_OFFSET)
    assert "nextCursor" not in outcome.data
    assert outcome.data["more"] == (
        "Results 1901-1902 of 5000; TomTom pages through the first 2000 only: narrow the search for others."
    )


async def test_a_page_tomtom_did_not_serve_gives_no_cursor(stub, dispatcher, context):
    """A backend that ignored `ofs` answers from the start again: no cursor that would loop."""
    search = SEARCHES[0]
    cursor = next_cursor(FuzzySearchInput.model_validate(search.arguments), 2)
    answering(stub, search, Backend.ORBIS, search.page(0, ["first", "second"]))

    outcome = await dispatcher.call(search.tool, {**search.arguments, "cursor": cursor}, context)

    assert "nextCursor" not in outcome.data
    assert outcome.data["more"] == "TomTom did not page this search (12 results); narrow it to see others."


async def test_an_answer_with_every_result_says_nothing_more(stub, dispatcher, context):
    search = SEARCHES[0]
    answering(stub, search, Backend.ORBIS, search.page(0, ["only"], total=1))

    outcome = await dispatcher.call(search.tool, search.arguments, context)

    assert (outcome.data["truncated"], "nextCursor" in outcome.data, "more" in outcome.data) == (False, False, False)


NOT_PAGED = {
    "tomtom-area-search": {"query": "pharmacy", "center": AMSTERDAM, "radius": 1000},
    "tomtom-search-along-route": {"origin": AMSTERDAM, "destination": UTRECHT, "query": "petrol station"},
}


@pytest.mark.parametrize("tool", NOT_PAGED)
async def test_a_search_that_cannot_page_takes_no_cursor_and_says_to_narrow(stub, dispatcher, context, tool):
    context.backend = Backend.GENESIS  # the route's answer in along_route.json is TomTom Maps'
    stub.route("GET", ".*/calculateRoute/.*", json_body=data("along_route.json"))
    stub.route("POST", ".*/(geometrySearch|searchAlongRoute)/.*", json_body=data("along_route.json"))

    outcome = await dispatcher.call(tool, NOT_PAGED[tool], context)

    assert (outcome.data["total"], outcome.data["returned"], outcome.data["truncated"]) == (7, 2, True)
    assert "nextCursor" not in outcome.data
    assert outcome.data["more"] == "2 of 7 results; this search does not page: raise limit or narrow it for others."
    sent = stub.requests[-1]
    assert sent.param("ofs") is None
    refused = await dispatcher.call(tool, {**NOT_PAGED[tool], "cursor": "AQACKruLvLsfW8c"}, context)
    assert refused.data["error"]["code"] == "invalid_arguments" and refused.data["error"]["argument"] == "cursor"


@pytest.mark.parametrize("tool", ["tomtom-fuzzy-search", "tomtom-poi-search", "tomtom-ev-search"])
def test_the_cursor_is_listed_as_a_bounded_string(dispatcher, tool):
    listed = dispatcher.registry.get(tool).listing(Backend.ORBIS, False).input_schema["properties"]["cursor"]
    assert listed == {"type": "string", "maxLength": 64}  # bare: the answer that gives one says to send it
