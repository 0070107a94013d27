"""A free-text query that travels in the URL path reaches TomTom percent-encoded whole.

TomTom asks for a URL-encoded query; a reserved character left in a path (`;`, `=`, `&`, `,`,
...) may be read by a server as a delimiter (`;` as a path parameter). For every reserved
character of RFC 3986 (and `%`, a space, a non-ASCII letter), on both backends and every tool
whose query is a path segment, the stand-in must receive the character as `%XX` in the raw path,
and the query must decode back to what the caller sent. Where the query is a parameter instead
(Orbis Geocoding v2: `?query=`), it must decode back whole: a `&`, `=`, `+`, `#` or `%` sent bare
would split it or change it.
"""

from __future__ import annotations

import pytest

from tests.conftest import data
from tools.tomtom.backends import Backend

RESERVED = ":/?#[]@!$&'()*+,;=" + "% "
"""RFC 3986 gen-delims and sub-delims, then the escape character and a space."""
TOOLS = {
    "tomtom-geocode": ({}, "geocode", "geocode.json"),
    "tomtom-fuzzy-search": ({}, "search", "poi_search.json"),
    "tomtom-poi-search": ({}, "poiSearch", "poi_search.json"),
    "tomtom-area-search": ({"boundingBox": [4.8, 52.33, 4.95, 52.4]}, "geometrySearch", "poi_search.json"),
    "tomtom-search-along-route": (
        {"origin": [4.9041, 52.3676], "destination": [5.1215, 52.0907]},
        "searchAlongRoute",
        "along_route.json",
    ),
}
PREFIX = {Backend.ORBIS: "/maps/orbis/places/", Backend.GENESIS: "/search/2/"}
QUERY_PARAMETER = {("tomtom-geocode", Backend.ORBIS): ("/maps/orbis/places/geocode", "geocode_v2.json")}
"""Tools whose query travels as the `query` parameter on that backend: their path and answer."""


def encoded(character: str) -> str:
    return "".join(f"%{byte:02X}" for byte in character.encode())


@pytest.mark.parametrize("character", [*RESERVED, "é"], ids=lambda c: f"U+{ord(c):04X}")
@pytest.mark.parametrize("backend", Backend)
@pytest.mark.parametrize("tool", TOOLS)
async def test_a_reserved_character_reaches_tomtom_encoded(stub, dispatcher, context, tool, backend, character):
    extra, endpoint, answer = TOOLS[tool]
    query = f"Rue A{character}B Paris"
    if (tool, backend) in QUERY_PARAMETER:
        path, answer = QUERY_PARAMETER[tool, backend]
        stub.route("GET", path, json_body=data(answer))
        context.backend = backend
        outcome = await dispatcher.call(tool, {"query": query, **extra}, context)
        assert not outcome.is_error, outcome.text
        (sent,) = stub.requests
        assert (sent.path, sent.query["query"]) == (path, [query])
        return
    stub.route("GET", r".*/calculateRoute/.*", json_body=data("route.json"))
    stub.route("POST", r"/maps/orbis/routing/routes/calculate", json_body=data("route_v3.json"))  # Routing v3
    for method in ("GET", "POST"):
        stub.route(method, rf".*/{endpoint}/.*", json_body=data(answer))
    context.backend = backend
    outcome = await dispatcher.call(tool, {"query": query, **extra}, context)
    assert not outcome.is_error, outcome.text
    sent = next(r for r in stub.requests if f"/{endpoint}/" in r.path)
    segment = sent.raw_path.removeprefix(PREFIX[backend] + endpoint + "/").removesuffix(".json")
    assert segment == "Rue%20A" + encoded(character) + "B%20Paris"
    assert sent.path == f"{PREFIX[backend]}{endpoint}/{query.strip()}.json"
