"""Inputs the search tools share, and how each becomes a TomTom Search API parameter.

The shared inputs are types and groups of inputs (`ToolInput` mixins a tool's model inherits:
`AreaInputs`, `PoiFilters`, `PoiDetails`). Both backends take the same Search API parameters
and answer in the same shapes; only the path differs: Orbis `/maps/orbis/places/<endpoint>`
with `apiVersion=1`, TomTom Maps (Genesis) `/search/2/<endpoint>`. Every input here reaches the request:

- location: `position` -> `lat`/`lon` (a bias: nearer results rank higher), `radius` -> `radius`
  (with `position`: only results inside that circle), `boundingBox` -> `topLeft`/`btmRight`;
- `limit`, `language`, `countries` -> `limit`, `language`, `countrySet`;
- POI filters: `poiCategories` -> `categorySet` (numeric category ids, see below), `brandSet`,
  `connectorSet`, `fuelSet`, `minPowerKW`, `maxPowerKW`;
- optional fields: `openingHours` and `timeZone` ask TomTom for them; compact keeps them only then.

Categories are TomTom's numeric ids (7315 restaurant, 7309 charging station), exactly what
`categorySet` takes on both backends: `tomtom-poi-categories` turns words into ids. We do not
accept the maps-sdk's category codes, which would need a second lookup on every call.

Paging (docs/adr, "search paging"): a search that can page (its endpoint takes `ofs`: Fuzzy,
POI and Nearby Search) inherits `PagedSearch`, whose one input `cursor` is the `nextCursor` an
earlier answer gave. A cursor is opaque to callers: base64url of 11 bytes, a version, the offset
of the next page and 8 bytes of SHA-256 over the inputs that choose the results (the tool's
model and every input but the page's own: `cursor`, `limit`, `response_detail`, `show_ui`). A
cursor that does not decode, is out of bounds (offset 1..`MAX_OFFSET`) or belongs to other
inputs is `invalid_arguments` naming `cursor`; nothing in it is trusted beyond the offset, which
becomes `ofs`. A truncated answer says what to do next under `more`: call again with the cursor
(also in `nextCursor`), or, where TomTom stops paging (the first `MAX_RESULTS`, or an endpoint
without `ofs`: Geometry and Along Route Search), narrow the search.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import struct
from collections.abc import Callable, Mapping
from typing import Annotated, Any, Literal
from urllib.parse import quote

from pydantic import AfterValidator, Field, model_validator

from tools.context import CallContext
from tools.definition import Answer
from tools.definitions.common import FULL, BoundingBox, Position, answer
from tools.inputs import UNIQUE, ToolInput, exclusive, listed_by_example, problem, requires, rule
from tools.shaping.search import NOTHING_REQUESTED, Requested, compact_search
from tools.tomtom.backends import Backend

MAX_CATEGORIES = 10
MAX_BRANDS = 10
ConnectorType = Literal[
    "StandardHouseholdCountrySpecific",
    "IEC62196Type1",
    "IEC62196Type1CCS",
    "IEC62196Type2CableAttached",
    "IEC62196Type2Outlet",
    "IEC62196Type2CCS",
    "IEC62196Type3",
    "Chademo",
    "GBT20234Part2",
    "GBT20234Part3",
    "IEC60309AC3PhaseRed",
    "IEC60309AC1PhaseBlue",
    "IEC60309DCWhite",
    "Tesla",
]
FuelType = Literal[
    "Petrol",
    "LPG",
    "Diesel",
    "Biodiesel",
    "DieselForCommercialVehicles",
    "E85",
    "LNG",
    "CNG",
    "Hydrogen",
    "AdBlue",
]
POI_FILTERS = ("poiCategories", "brandSet", "connectorSet", "fuelSet", "minPowerKW", "maxPowerKW")
"""The inputs that narrow which POIs come back (nearby search needs at least one)."""

Query = Annotated[str, Field(min_length=1, max_length=400)]
BiasPosition = Annotated[Position, Field(description="Ranks near [lon, lat] first (not a limit).")]
CentrePosition = Annotated[Position, Field(description="Centre, [lon, lat].")]
Radius = Annotated[int, Field(ge=1, le=20_000_000, description="Only within these metres of `position`.")]
PoiCategories = Annotated[
    list[Annotated[int, Field(ge=1000, le=9999999)]],
    Field(
        min_length=1,
        max_length=MAX_CATEGORIES,
        description="Ids from tomtom-poi-categories, e.g. 7315.",
    ),
    UNIQUE,
]
BrandSet = Annotated[
    list[Annotated[str, Field(min_length=1, max_length=100)]],
    Field(min_length=1, max_length=MAX_BRANDS),
    UNIQUE,
]
ConnectorSet = Annotated[
    list[Annotated[ConnectorType, listed_by_example(ConnectorType, "IEC62196Type2CCS", "Chademo", "Tesla")]],
    Field(min_length=1, max_length=14),
    UNIQUE,
]
FuelSet = Annotated[
    list[Annotated[FuelType, listed_by_example(FuelType, "Petrol", "Diesel", "LPG")]],
    Field(min_length=1, max_length=10),
    UNIQUE,
]
MinPower = Annotated[float, Field(gt=0, le=10_000)]
MaxPower = Annotated[float, Field(gt=0, le=10_000)]
OpeningHours = Literal["nextSevenDays"]
"""Add each POI's opening hours for the next 7 days (the name and value say so: listed bare)."""
TimeZone = Literal["iana"]
"""Add each POI's IANA time zone."""


class AreaInputs(ToolInput):
    """`position` (a bias), `radius` (with `position`: only inside that circle) and `boundingBox`."""

    position: BiasPosition | None = None
    radius: Radius | None = None
    boundingBox: BoundingBox | None = Field(None, description="Only inside [minLon, minLat, maxLon, maxLat].")

    @model_validator(mode="after")
    def _area_rules(self) -> AreaInputs:
        requires(self, "radius", "position")
        exclusive(self, "position", "boundingBox", message="bias near a position or limit to a box, not both")
        return self


class PoiFilters(ToolInput):
    """`poiCategories`, `brandSet`, `connectorSet`, `fuelSet` and the charging-power range."""

    poiCategories: PoiCategories | None = None
    brandSet: BrandSet | None = None
    connectorSet: ConnectorSet | None = None
    fuelSet: FuelSet | None = None
    minPowerKW: MinPower | None = None
    maxPowerKW: MaxPower | None = None

    @model_validator(mode="after")
    def _power_rule(self) -> PoiFilters:
        if self.minPowerKW is not None and self.maxPowerKW is not None and self.minPowerKW > self.maxPowerKW:
            raise rule("minPowerKW", "maxPowerKW", message="the minimum power is above the maximum")
        return self

    def require_some_filter(self, what: str) -> None:
        """At least one POI filter: without one, `what` would list every kind of place."""
        if not self.given_any(POI_FILTERS):
            raise rule(*POI_FILTERS, message=f"{what} needs at least one of these")


class PoiDetails(ToolInput):
    """`openingHours` and `timeZone`: optional fields TomTom adds when asked (compact keeps them then)."""

    openingHours: OpeningHours | None = None
    timeZone: TimeZone | None = None

    def requested(self) -> Requested:
        return Requested(opening_hours=self.openingHours is not None, time_zone=self.timeZone is not None)


MAX_RESULTS = 2000
"""How deep paging goes into one search's results: `ofs` up to `MAX_OFFSET` with `limit` up to 100
(TomTom's pages bound `limit` at 100; the 1,900 bound on `ofs` is ours, the one its SDKs and
other Search API hosts have used, kept so that no page asks past the 2,000th result)."""
MAX_OFFSET = 1900
"""The largest `ofs` a cursor carries."""
PAGE_INPUTS = frozenset({"cursor", "limit", "response_detail", "show_ui"})
"""Inputs that choose the page, its size or its shape, not the results: a cursor outlives them."""
_CURSOR_VERSION = 1
_CURSOR = struct.Struct(">BH8s")
"""A cursor's bytes: version, offset of the next page, digest of the search's inputs."""
_CURSOR_TEXT = re.compile(r"[A-Za-z0-9_-]{15}")
"""`_CURSOR` (11 bytes) in unpadded base64url."""
_NOT_A_CURSOR = "is not a cursor this server gave; send an answer's nextCursor as it came, or leave cursor out"


def _unpack(cursor: str) -> tuple[int, bytes]:
    """The offset and digest a cursor carries; a `problem` when it is not one this server made
    (TomTom's bounds included: an offset is 1..`MAX_OFFSET`)."""
    if not _CURSOR_TEXT.fullmatch(cursor):
        raise problem(_NOT_A_CURSOR)
    version, offset, digest = _CURSOR.unpack(base64.urlsafe_b64decode(cursor + "="))
    if version != _CURSOR_VERSION or not 0 < offset <= MAX_OFFSET:
        raise problem(_NOT_A_CURSOR)
    return offset, digest


def _readable(cursor: str) -> str:
    _unpack(cursor)
    return cursor


SearchCursor = Annotated[str, Field(max_length=64), AfterValidator(_readable)]
"""An answer's `nextCursor`, listed bare: every answer that gives one says to send it as `cursor`."""


def _digest(input: ToolInput) -> bytes:
    """8 bytes of SHA-256 over the tool's input model and the inputs that choose its results."""
    chosen = input.model_dump(mode="json", exclude=set(PAGE_INPUTS))
    text = json.dumps([type(input).__name__, chosen], sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode()).digest()[:8]


def next_cursor(input: ToolInput, offset: int) -> str:
    """The cursor of the page of `input`'s results that starts at `offset` (1..`MAX_OFFSET`)."""
    if not 0 < offset <= MAX_OFFSET:
        raise ValueError(f"a cursor's offset is 1..{MAX_OFFSET}, not {offset}")
    packed = _CURSOR.pack(_CURSOR_VERSION, offset, _digest(input))
    return base64.urlsafe_b64encode(packed).rstrip(b"=").decode()


class PagedSearch(ToolInput):
    """`cursor`: the `nextCursor` of an earlier answer of the same search (a search whose
    endpoint takes `ofs`); left out, the first page."""

    cursor: SearchCursor | None = None

    @model_validator(mode="after")
    def _cursor_rule(self) -> PagedSearch:
        if self.cursor is not None and _unpack(self.cursor)[1] != _digest(self):
            raise problem(
                "belongs to another search (other arguments); leave cursor out to start this one from its first page",
                item="cursor",
            )
        return self

    @property
    def offset(self) -> int:
        """Where this page starts among the search's results (0: the first page)."""
        return 0 if self.cursor is None else _unpack(self.cursor)[0]


def page_params(input: PagedSearch) -> dict[str, Any]:
    """`ofs` for a page after the first (the first sends none: TomTom's default is 0)."""
    return {"ofs": input.offset} if input.offset else {}


def _counts(body: Mapping[str, Any]) -> tuple[int, int, int | None]:
    """How many results a TomTom list answer holds, how many the search has, and the offset
    TomTom says the answer starts at (None when it does not say)."""
    returned = sum(1 for r in body.get("results") or [] if isinstance(r, dict))
    summary = body.get("summary")
    if not isinstance(summary, dict):
        summary = {}
    total, start = summary.get("totalResults"), summary.get("offset")
    return (
        returned,
        total if isinstance(total, int) and not isinstance(total, bool) else returned,
        start if isinstance(start, int) and not isinstance(start, bool) else None,
    )


def more_results(input: ToolInput, body: Mapping[str, Any]) -> dict[str, Any]:
    """What a truncated list answer adds so its caller can go on: `nextCursor` (a search that
    pages, while TomTom serves more) and `more`, a sentence saying how: call again with the
    cursor, or narrow the search. Nothing when the answer holds every result."""
    returned, total, start = _counts(body)
    offset = input.offset if isinstance(input, PagedSearch) else 0
    if total <= returned and not offset:
        return {}
    if not isinstance(input, PagedSearch):
        return {
            "more": f"{returned} of {total} results; this search does not page: raise limit or narrow it for others."
        }
    if start is not None and start != offset:
        return {"more": f"TomTom did not page this search ({total} results); narrow it to see others."}
    shown = f"Results {offset + 1}-{offset + returned} of {total}" if returned else f"No results past {offset}"
    following = offset + returned
    if not returned or following >= total:
        return {"more": f"{shown}: the last page."}
    if following > MAX_OFFSET:
        return {"more": f"{shown}; TomTom pages through the first {MAX_RESULTS} only: narrow the search for others."}
    cursor = next_cursor(input, following)
    return {"nextCursor": cursor, "more": f'{shown}; next: call again with the same arguments and cursor="{cursor}".'}


def search_path(backend: Backend, endpoint: str) -> tuple[str, dict[str, Any]]:
    """`poiSearch/{query}.json` -> this backend's path and its fixed parameters."""
    if backend is Backend.ORBIS:
        return f"/maps/orbis/places/{endpoint}", {"apiVersion": 1}
    return f"/search/2/{endpoint}", {}


async def search[I: ToolInput](
    input: I,
    context: CallContext,
    build_request: Callable[[I, Backend], tuple[str, dict[str, Any]]],
    requested: Requested = NOTHING_REQUESTED,
) -> Answer:
    """Send this tool's search request; answer TomTom's body (`full`) or its compact form, with
    how to go on when truncated (`more_results`), and the body as the widget's app data when the
    input asks for the map (`show_ui`)."""
    session = context.tomtom
    body = await session.get(*build_request(input, session.backend))
    data = body if getattr(input, "response_detail", None) == FULL else compact_search(body, requested)
    return answer(input, {**data, **more_results(input, body)}, body)


def nearby_search(backend: Backend, position: list[float], radius: int | None) -> tuple[str, dict[str, Any]]:
    """Nearby Search around `position`, within `radius` when given: path and parameters."""
    path, params = search_path(backend, "nearbySearch/.json")
    params["lon"], params["lat"] = position
    if radius is not None:
        params["radius"] = radius
    return path, params


def query_segment(query: str) -> str:
    """A free-text query as one path segment, percent-encoded whole (every character but the
    unreserved `A-Z a-z 0-9 - . _ ~`, UTF-8), as TomTom asks: reserved characters such as `;`,
    `=`, `&`, `,`, `/` or `?` never reach it as delimiters."""
    return quote(query, safe="")


def common_params(input: ToolInput) -> dict[str, Any]:
    """`limit` (always sent, so TomTom's default never differs from ours), `language`, `countrySet`."""
    params: dict[str, Any] = {"limit": getattr(input, "limit")}  # noqa: B009 - every search input has a limit
    language, countries = getattr(input, "language", None), getattr(input, "countries", None)
    if language is not None:
        params["language"] = language
    if countries is not None:
        params["countrySet"] = ",".join(code.upper() for code in countries)
    return params


def area_params(input: AreaInputs) -> dict[str, Any]:
    params: dict[str, Any] = {}
    if input.position is not None:
        params["lon"], params["lat"] = input.position
    if input.radius is not None:
        params["radius"] = input.radius
    if input.boundingBox is not None:
        min_lon, min_lat, max_lon, max_lat = input.boundingBox
        params["topLeft"] = f"{max_lat},{min_lon}"
        params["btmRight"] = f"{min_lat},{max_lon}"
    return params


def poi_params(input: ToolInput) -> dict[str, Any]:
    """POI filters and optional fields given, as TomTom's comma-separated lists (a tool may
    take only some of them: `poiCategories` and `brandSet`, say)."""
    values: dict[str, Any] = {name: getattr(input, name, None) for name in (*POI_FILTERS, "openingHours", "timeZone")}
    params: dict[str, Any] = {}
    if values["poiCategories"] is not None:
        params["categorySet"] = ",".join(str(category) for category in values["poiCategories"])
    if values["brandSet"] is not None:
        # A brand with a comma in its name travels in double quotes.
        params["brandSet"] = ",".join(f'"{b}"' if "," in b else b for b in values["brandSet"])
    for name in ("connectorSet", "fuelSet"):
        if values[name] is not None:
            params[name] = ",".join(values[name])
    for name in ("minPowerKW", "maxPowerKW", "openingHours", "timeZone"):
        if values[name] is not None:
            params[name] = values[name]
    return params
