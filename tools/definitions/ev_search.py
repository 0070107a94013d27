"""tomtom-ev-search: EV charging stations near a point, with connectors, power and availability.

Stations: a Nearby Search restricted to category 7309 (electric vehicle station), nearest
first: Orbis GET `/maps/orbis/places/nearbySearch/.json?apiVersion=1`, TomTom Maps GET
`/search/2/nearbySearch/.json`, with `connectorSet`, `minPowerKW`, `maxPowerKW` and `brandSet`.

Live availability: on TomTom Maps, every station TomTom links to live data
(`dataSources.chargingAvailability.id`) costs one more request, GET
`/search/2/chargingAvailability.json`, with the same connector and power filters; they run up
to `CONCURRENT_LOOKUPS` at a time, and `limit` stops at 20 to bound them. TomTom's availability
answer is attached to the station as `chargingAvailability` (so `full` carries it untrimmed)
and compact sums it into charging points by status. Orbis has no generally available endpoint
for it (its EV availability API is a private preview), so Orbis answers carry connectors and
power only and say so in `availabilityNote`. A station whose lookup fails keeps its other
data; the note counts those stations.
"""

from __future__ import annotations

import asyncio
from typing import Any

from tools.context import CallContext
from tools.definition import define_tool
from tools.definitions.common import FULL, check_position, detail, response_detail
from tools.definitions.search_common import (
    BRAND_SET,
    CENTRE_POSITION,
    CONNECTOR_SET,
    LANGUAGE,
    MAX_POWER,
    MIN_POWER,
    RADIUS,
    check_power,
    common_params,
    limit,
    nearby_search,
    poi_params,
)
from tools.errors import ToolError
from tools.shaping.search import compact_search
from tools.tomtom.backends import Backend
from tools.tomtom.client import TomTomSession

EV_STATION = 7309
MAX_STATIONS = 20
AVAILABILITY_FILTERS = ("connectorSet", "minPowerKW", "maxPowerKW")
CONCURRENT_LOOKUPS = 5
"""Availability requests in flight at once, to stay clear of TomTom's per-second limits."""
ORBIS_NOTE = "Live availability is only offered on the tomtom-maps backend."

INPUT_SCHEMA = {
    "type": "object",
    "properties": {
        "position": CENTRE_POSITION,
        "response_detail": response_detail(geometry=False),
        "radius": RADIUS,
        "limit": limit(maximum=MAX_STATIONS),
        "connectorSet": CONNECTOR_SET,
        "minPowerKW": MIN_POWER,
        "maxPowerKW": MAX_POWER,
        "brandSet": BRAND_SET,
        "language": LANGUAGE,
    },
    "required": ["position"],
    "additionalProperties": False,
}


def build_request(arguments: dict[str, Any], backend: Backend) -> tuple[str, dict[str, Any]]:
    """The station search: its path and query parameters on this backend."""
    path, params = nearby_search(backend, arguments)
    params.update(common_params(arguments), categorySet=EV_STATION, **poi_params(arguments))
    return path, params


def availability_request(station_id: str, arguments: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """TomTom Maps' live availability of one station, filtered like the search."""
    filters = {name: arguments[name] for name in AVAILABILITY_FILTERS if name in arguments}
    return "/search/2/chargingAvailability.json", {"chargingAvailability": station_id, **poi_params(filters)}


def availability_id(station: dict[str, Any]) -> str | None:
    source = ((station.get("dataSources") or {}).get("chargingAvailability") or {}).get("id")
    return source if isinstance(source, str) and source else None


async def _availability(
    session: TomTomSession, station_id: str, arguments: dict[str, Any], gate: asyncio.Semaphore
) -> dict[str, Any] | None:
    async with gate:
        try:
            return await session.get(*availability_request(station_id, arguments))
        except ToolError:
            return None


async def add_availability(body: dict[str, Any], arguments: dict[str, Any], session: TomTomSession) -> str | None:
    """Attach live availability to the stations in `body`; return a note on what is missing."""
    stations = [r for r in body.get("results") or [] if isinstance(r, dict)]
    if session.backend is Backend.ORBIS:
        return ORBIS_NOTE if stations else None
    linked = [(station, station_id) for station in stations if (station_id := availability_id(station))]
    gate = asyncio.Semaphore(CONCURRENT_LOOKUPS)
    answers = await asyncio.gather(*(_availability(session, station_id, arguments, gate) for _, station_id in linked))
    failed = 0
    for (station, _), answer in zip(linked, answers, strict=True):
        if answer is None:
            failed += 1
        else:
            station["chargingAvailability"] = answer
    return f"Live availability could not be read for {failed} station(s)." if failed else None


async def run(arguments: dict[str, Any], context: CallContext) -> dict[str, Any]:
    check_position("position", arguments["position"])
    check_power(arguments)
    session = context.tomtom
    path, params = build_request(arguments, session.backend)
    body = await session.get(path, params)
    note = await add_availability(body, arguments, session)
    if detail(arguments) == FULL:
        return body
    answer = compact_search(body)
    if note:
        answer["availabilityNote"] = note
    return answer


TOOL = define_tool(
    name="tomtom-ev-search",
    title="TomTom EV Charging Search",
    description=(
        "Find EV charging stations near a point, nearest first, with connector types, power and "
        "(on the tomtom-maps backend) how many charging points are free now. Filter by connector, "
        "power or brand."
    ),
    input_schema=INPUT_SCHEMA,
    run=run,
)
