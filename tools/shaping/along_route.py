"""Compact shape of a route and the places found along it (tomtom-search-along-route).

Two TomTom answers make one result: a Calculate Route answer and an Along Route Search answer.
Compact is `{"route": <the route's compact, as tools.shaping.routes shapes it>, "results":
[...], "total", "returned", "truncated"}`, each result shaped as every search result is
(tools.shaping.search) plus the detour a stop there costs: `detourTimeInSeconds` and
`detourDistanceInMeters` (negative when going through the place is shorter), and
`detourOffsetInMeters` (how far along the route the detour starts) when TomTom sent it.
"""

from __future__ import annotations

from typing import Any

from core.errors import ErrorCode, ToolError
from tools.shaping.routes import ROUTE_ANSWER, compact_route
from tools.shaping.search import RESULT_SPEC, compact_result, listing
from tools.shaping.shape import INTEGER, NUMBER, compile_spec, expect

DETOURS = (
    ("detourTime", "detourTimeInSeconds"),
    ("detourDistance", "detourDistanceInMeters"),
    ("detourOffset", "detourOffsetInMeters"),
)
ALONG_ROUTE_ANSWER = compile_spec(
    {"summary": {"totalResults": INTEGER}, "results": [{**RESULT_SPEC, **{source: NUMBER for source, _ in DETOURS}}]}
)
"""An Along Route Search answer as shaping reads it (tools.shaping.shape)."""


def first_route(route_body: dict[str, Any]) -> dict[str, Any]:
    expect(route_body, ROUTE_ANSWER, where="route")
    routes = route_body.get("routes")
    if not isinstance(routes, list) or not routes or not isinstance(routes[0], dict):
        raise ToolError(ErrorCode.MALFORMED, "TomTom answered without a route.")
    return routes[0]


def compact_along_route(route_body: dict[str, Any], search_body: dict[str, Any]) -> dict[str, Any]:
    expect(search_body, ALONG_ROUTE_ANSWER, where="search")
    results = []
    for result in search_body.get("results") or []:
        if not isinstance(result, dict):
            continue
        item = compact_result(result)
        for source, target in DETOURS:
            if isinstance(result.get(source), (int, float)):
                item[target] = round(result[source])
        results.append(item)
    total = (search_body.get("summary") or {}).get("totalResults", len(results))
    return {"route": compact_route(first_route(route_body)), "results": results, **listing(results, total)}
