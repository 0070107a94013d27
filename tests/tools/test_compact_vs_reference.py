"""Our compact answers are at most the size of the public TomTom MCP server's compact.

The reference's rules (tests/support/reference_compact.py) are applied to the same TomTom REST
answer: the recorded `genesis-*` search answers, and our own REST-shaped test answers. Both
sides are measured as compact JSON bytes; the reference without its `_meta`, which only makes
it larger.
"""

import json

import pytest

from tests.conftest import data, recorded
from tests.support.reference_compact import reference_compact
from tools.tomtom.backends import Backend

HOURS = {"openingHours": "nextSevenDays", "timeZone": "iana"}
CASES = [
    # (answer, recorded?, tool, arguments, inputs the reference would see as requested)
    ("genesis-fuzzy-search.json", True, "tomtom-fuzzy-search", {"query": "coffee"}, set()),
    ("genesis-poi-search-requested.json", True, "tomtom-poi-search", {"query": "restaurant", **HOURS}, set(HOURS)),
    ("genesis-poi-search-requested.json", True, "tomtom-poi-search", {"query": "restaurant"}, set()),
    ("genesis-reverse-geocode.json", True, "tomtom-reverse-geocode", {"position": [4.89337, 52.37342]}, set()),
    (
        "genesis-reverse-geocode-requested.json",
        True,
        "tomtom-reverse-geocode",
        {"position": [4.89337, 52.37342]},
        {"mapcodes"},
    ),
    ("poi_search.json", False, "tomtom-poi-search", {"query": "pharmacy", **HOURS}, set(HOURS)),
    ("poi_search.json", False, "tomtom-poi-search", {"position": [4.9, 52.37], "poiCategories": [7326]}, set()),
    ("reverse_geocode.json", False, "tomtom-reverse-geocode", {"position": [4.89273, 52.37314]}, set()),
    ("ev_search.json", False, "tomtom-ev-search", {"position": [4.9, 52.37]}, set()),
]


def size(value) -> int:
    return len(json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode())


@pytest.mark.parametrize(
    ("answer", "is_recorded", "tool", "arguments", "requested"),
    CASES,
    ids=[f"{tool}:{answer}:{sorted(requested)}" for answer, _, tool, _, requested in CASES],
)
async def test_compact_is_no_larger_than_the_reference(
    stub, dispatcher, context, answer, is_recorded, tool, arguments, requested
):
    body = recorded(answer) if is_recorded else data(answer)
    stub.route("GET", ".*", json_body=body)
    context.backend = Backend.GENESIS
    outcome = await dispatcher.call(tool, arguments, context)
    assert not outcome.is_error, outcome.text
    ours, theirs = size(outcome.data), size(reference_compact(body, frozenset(requested)))
    print(f"{tool} {answer}: ours {ours} B, reference {theirs} B")
    assert ours <= theirs, f"{tool} compact is {ours} bytes; the reference's is {theirs}"


def test_the_oracle_drops_what_the_reference_drops():
    trimmed = reference_compact(recorded("genesis-poi-search-requested.json"), frozenset({"openingHours"}))
    (result,) = trimmed["results"]
    assert set(trimmed["summary"]) == {"query", "queryType", "numResults", "offset", "totalResults"}
    assert {"viewport", "entryPoints", "score", "info", "matchConfidence", "mapcodes"}.isdisjoint(result)
    assert "openingHours" in result["poi"] and "timeZone" not in result["poi"]
    assert "countryCodeISO3" not in result["address"] and "extendedPostalCode" not in result["address"]
