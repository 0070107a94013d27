"""tomtom-search-along-route: a route from origin to destination, then the places along it.

Two TomTom calls, both backends. First the route, built exactly as tomtom-routing builds it
(`routing.build_request`: Orbis Routing v3 POST `/maps/orbis/routing/routes/calculate`, its
answer translated into the shape both backends share; TomTom Maps GET
`/routing/1/calculateRoute/...`, a POST carrying `avoidAreas` when given). Then Along Route Search: Orbis POST
`/maps/orbis/places/searchAlongRoute/{query}.json?apiVersion=1`, TomTom Maps POST
`/search/2/searchAlongRoute/{query}.json`, with `maxDetourTime` (the corridor: the time a stop may
add to the trip, at most 3600 s) and the route line as the body `{"route": {"points": [{lat,
lon}, ...]}}`, simplified to at most `ROUTE_POINTS` points. An empty `query` searches by
category or brand alone (the path becomes `searchAlongRoute/.json`).

`full` is both answers untrimmed: `{"route": <route answer>, "search": <search answer>}` (on
Orbis the route is v3's own answer; the widget gets it in the shared shape).
Along Route Search takes no offset (`ofs`), so the tool does not page: a truncated compact answer
says, in `more`, to raise `limit` or narrow the search.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field, model_validator

from tools.context import CallContext
from tools.definition import Answer, define_tool
from tools.definitions import routing
from tools.definitions.common import GeometryDetail, Language, Position, ShowUi, answer
from tools.definitions.search_common import (
    BrandSet,
    PoiCategories,
    common_params,
    more_results,
    poi_params,
    query_segment,
    search_path,
)
from tools.geometry.simplify import cap_geometry
from tools.inputs import ToolInput, rule
from tools.shaping.along_route import compact_along_route, first_route
from tools.shaping.geometry import feature, route_line, with_geometry
from tools.shaping.routes import decode_v3_with_shared
from tools.tomtom.backends import Backend
from tools.widgets import MAP_APP_URI

ROUTE_POINTS = 1000
"""Route points sent to Along Route Search: longer lines are simplified (a few metres off)."""
MAX_RESULTS = 20


class SearchAlongRouteInput(ToolInput):
    origin: Position = Field(description="Start, [lon, lat].")
    destination: Position = Field(description="End, [lon, lat].")
    query: Annotated[
        str,
        Field(
            max_length=400,
            description="e.g. 'petrol station'; empty: by poiCategories/brandSet.",
        ),
    ]
    response_detail: GeometryDetail = "compact"
    show_ui: ShowUi = False
    maxDetourTime: int = Field(600, ge=1, le=3600, description="Seconds a stop may add.")
    limit: int = Field(10, ge=1, le=MAX_RESULTS)
    language: Language | None = None
    poiCategories: PoiCategories | None = None
    brandSet: BrandSet | None = None
    routeType: routing.RouteType = "fast"
    avoid: routing.Avoid | None = None
    avoidAreas: routing.AvoidAreas | None = None

    @model_validator(mode="after")
    def _something_to_find(self) -> SearchAlongRouteInput:
        if not self.query.strip() and self.poiCategories is None and self.brandSet is None:
            raise rule("query", "poiCategories", "brandSet", message="an empty query needs categories or brands")
        return self


def route_request(input: SearchAlongRouteInput, backend: Backend) -> routing.RouteRequest:
    """The route's request: tomtom-routing's, for origin then destination, with this tool's route
    type, avoid and areas to avoid (travel mode and traffic at tomtom-routing's defaults); `full`
    asks for every section type, as tomtom-routing's `full` does."""
    options = routing.RouteOptions(routeType=input.routeType)
    return routing.build_request(
        [input.origin, input.destination],
        options,
        backend,
        avoid=input.avoid,
        avoidAreas=input.avoidAreas,
        full=input.response_detail == "full",
    )


def route_points(route_body: dict[str, Any]) -> list[dict[str, float]]:
    """The route line as Along Route Search takes it, at most `ROUTE_POINTS` points."""
    line, _ = cap_geometry(route_line(first_route(route_body)), ROUTE_POINTS)
    return [{"lat": lat, "lon": lon} for lon, lat in line["coordinates"]]


def search_request(
    input: SearchAlongRouteInput, backend: Backend, route_body: dict[str, Any]
) -> tuple[str, dict[str, Any], dict[str, Any]]:
    """The search's path, parameters and JSON body, along the route TomTom answered."""
    path, params = search_path(backend, f"searchAlongRoute/{query_segment(input.query.strip())}.json")
    params["maxDetourTime"] = input.maxDetourTime
    params.update(common_params(input), **poi_params(input))
    return path, params, {"route": {"points": route_points(route_body)}}


async def run(input: SearchAlongRouteInput, context: CallContext) -> Answer:
    """The widget draws both answers untrimmed (`full`'s shape): the route, and the places
    with the detour each adds."""
    session = context.tomtom
    request = route_request(input, session.backend)
    if request.v3:
        tomtom_route, route_body = await routing.calculate_route(session, request, decode=decode_v3_with_shared)
    else:
        tomtom_route = route_body = await routing.calculate_route(session, request)
    path, params, body = search_request(input, session.backend, route_body)
    search_body = await session.post(path, body, params)
    both = {"route": route_body, "search": search_body}
    match input.response_detail:
        case "full":
            data = {"route": tomtom_route, "search": search_body}
        case "geometry":
            line = feature(route_line(first_route(route_body)), {"route": 0})
            compact = {**compact_along_route(route_body, search_body), **more_results(input, search_body)}
            data = with_geometry(compact, [line])
        case _:
            data = {**compact_along_route(route_body, search_body), **more_results(input, search_body)}
    return answer(input, data, both)


TOOL = define_tool(
    name="tomtom-search-along-route",
    title="TomTom Search Along Route",
    description=(
        "Places on the way from origin to destination, each with its detour, and "
        "the route's distance and time. Around a point: tomtom-poi-search."
    ),
    input=SearchAlongRouteInput,
    run=run,
    widget=MAP_APP_URI,
)
