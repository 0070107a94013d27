"""tomtom-ev-search: EV charging stations near a point, with connectors, power and availability.

Stations: a Nearby Search restricted to category 7309 (electric vehicle station), nearest
first: Orbis GET `/maps/orbis/places/nearbySearch/.json?apiVersion=1`, TomTom Maps GET
`/search/2/nearbySearch/.json`, with `connectorSet`, `minPowerKW`, `maxPowerKW` and `brandSet`.
It pages: `cursor` (an answer's `nextCursor`) becomes `ofs`.

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

from pydantic import Field, model_validator

from core.errors import ToolError
from tools.context import CallContext
from tools.definition import Answer, define_tool
from tools.definitions.common import FULL, Language, PointsDetail, ShowUi, answer
from tools.definitions.search_common import (
    BrandSet,
    CentrePosition,
    ConnectorSet,
    MaxPower,
    MinPower,
    PagedSearch,
    Radius,
    common_params,
    more_results,
    nearby_search,
    page_params,
    poi_params,
)
from tools.inputs import rule
from tools.shaping.search import compact_search
from tools.tomtom.backends import Backend
from tools.tomtom.client import TomTomSession
from tools.widgets import MAP_APP_URI

EV_STATION = 7309
MAX_STATIONS = 20
AVAILABILITY_FILTERS = ("connectorSet", "minPowerKW", "maxPowerKW")
CONCURRENT_LOOKUPS = 5
"""Availability requests in flight at once, to stay clear of TomTom's per-second limits."""
ORBIS_NOTE = "Live availability is only offered on the tomtom-maps backend."


class EvSearchInput(PagedSearch):
    position: CentrePosition
    response_detail: PointsDetail = "compact"
    show_ui: ShowUi = False
    radius: Radius | None = None
    limit: int = Field(10, ge=1, le=MAX_STATIONS)
    connectorSet: ConnectorSet | None = None
    minPowerKW: MinPower | None = None
    maxPowerKW: MaxPower | None = None
    brandSet: BrandSet | None = None
    language: Language | None = None

    @model_validator(mode="after")
    def _power_rule(self) -> EvSearchInput:
        if self.minPowerKW is not None and self.maxPowerKW is not None and self.minPowerKW > self.maxPowerKW:
            raise rule("minPowerKW", "maxPowerKW", message="the minimum power is above the maximum")
        return self


def build_request(input: EvSearchInput, backend: Backend) -> tuple[str, dict[str, Any]]:
    """The station search: its path and query parameters on this backend."""
    path, params = nearby_search(backend, input.position, input.radius)
    params.update(common_params(input), categorySet=EV_STATION, **poi_params(input), **page_params(input))
    return path, params


def availability_request(station_id: str, input: EvSearchInput) -> tuple[str, dict[str, Any]]:
    """TomTom Maps' live availability of one station, filtered like the search (connectors and
    power; a brand or category says nothing about a station's charging points)."""
    filters = {name: value for name, value in poi_params(input).items() if name in AVAILABILITY_FILTERS}
    return "/search/2/chargingAvailability.json", {"chargingAvailability": station_id, **filters}


def availability_id(station: dict[str, Any]) -> str | None:
    source = ((station.get("dataSources") or {}).get("chargingAvailability") or {}).get("id")
    return source if isinstance(source, str) and source else None


async def _availability(
    session: TomTomSession, station_id: str, input: EvSearchInput, gate: asyncio.Semaphore
) -> dict[str, Any] | None:
    async with gate:
        try:
            return await session.get(*availability_request(station_id, input))
        except ToolError:
            return None


async def add_availability(body: dict[str, Any], input: EvSearchInput, session: TomTomSession) -> str | None:
    """Attach live availability to the stations in `body`; return a note on what is missing."""
    stations = [r for r in body.get("results") or [] if isinstance(r, dict)]
    if session.backend is Backend.ORBIS:
        return ORBIS_NOTE if stations else None
    linked = [(station, station_id) for station in stations if (station_id := availability_id(station))]
    gate = asyncio.Semaphore(CONCURRENT_LOOKUPS)
    answers = await asyncio.gather(*(_availability(session, station_id, input, gate) for _, station_id in linked))
    failed = 0
    for (station, _), availability in zip(linked, answers, strict=True):
        if availability is None:
            failed += 1
        else:
            station["chargingAvailability"] = availability
    return f"Live availability could not be read for {failed} station(s)." if failed else None


async def run(input: EvSearchInput, context: CallContext) -> Answer:
    """The widget draws TomTom's stations, with the live availability attached to them."""
    session = context.tomtom
    body = await session.get(*build_request(input, session.backend))
    note = await add_availability(body, input, session)
    if input.response_detail == FULL:
        return answer(input, {**body, **more_results(input, body)}, body)
    compact = compact_search(body)
    if note:
        compact["availabilityNote"] = note
    return answer(input, {**compact, **more_results(input, body)}, body)


TOOL = define_tool(
    name="tomtom-ev-search",
    title="TomTom EV Charging Search",
    description=(
        "EV chargers near a point, nearest first, with connectors and power. Charging stops on a trip: "
        "tomtom-ev-routing."
    ),
    backend_notes={
        Backend.GENESIS: "With free points now.",
        Backend.ORBIS: "Free points now: on the tomtom-maps backend only.",
    },
    input=EvSearchInput,
    run=run,
    widget=MAP_APP_URI,
)
