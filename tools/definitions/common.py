"""Input types every tool family shares, and the one helper that makes an `Answer`.

Each type carries its bounds and its checks; the field says what it is
(`position: Position | None = Field(None, description="Bias toward [lon, lat].")`). Positions are
`[lon, lat]` in descriptions: the server's instructions say once that they are [longitude, latitude].

- `Position`: `[longitude, latitude]`, each in range (the error names `position[0]` or `[1]`).
- `BoundingBox`: `[minLon, minLat, maxLon, maxLat]`, south below north, with a width.
- `PointsDetail` / `GeometryDetail`: `response_detail` of a tool without / with geometry. A
  point-only tool asked for `geometry` says so (and the dispatcher adds which tools have it).
- `ShowUi`: `show_ui` of a tool drawn by a widget (`answer` reads it).
- `Language`, `Countries`, `Limit`: the common search inputs (give the default at the field).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BeforeValidator, Field

from tools.definition import Answer
from tools.inputs import ToolInput, problem

COMPACT, GEOMETRY, FULL = "compact", "geometry", "full"
POINTS_ONLY = "points_only"
"""The error kind of `geometry` asked of a point-only tool (the registry hints which tools have it)."""


def _lon_lat(value: list[float]) -> list[float]:
    lon, lat = value
    if not -180 <= lon <= 180:
        raise problem(f"longitude {lon:g} is outside -180..180 (positions are [longitude, latitude])", item=0)
    if not -90 <= lat <= 90:
        raise problem(f"latitude {lat:g} is outside -90..90 (positions are [longitude, latitude])", item=1)
    return value


def _box(value: list[float]) -> list[float]:
    min_lon, min_lat, max_lon, max_lat = value
    for index, (lon, lat) in enumerate(((min_lon, min_lat), (max_lon, max_lat))):
        if not -180 <= lon <= 180:
            raise problem(f"longitude {lon:g} is outside -180..180", item=2 * index)
        if not -90 <= lat <= 90:
            raise problem(f"latitude {lat:g} is outside -90..90", item=2 * index + 1)
    if min_lat >= max_lat:
        raise problem("must be [minLon, minLat, maxLon, maxLat] with minLat below maxLat")
    if min_lon == max_lon:
        raise problem("must have a width: minLon equals maxLon")
    return value


Position = Annotated[list[float], Field(min_length=2, max_length=2), AfterValidator(_lon_lat)]
"""`[longitude, latitude]`; a field says what the position is (a list of them says `[[longitude, latitude], ...]`)."""
BoundingBox = Annotated[list[float], Field(min_length=4, max_length=4), AfterValidator(_box)]
"""`[minLon, minLat, maxLon, maxLat]`; a field says so in its description."""


def _points_only(value: Any) -> Any:
    if value == GEOMETRY:
        raise problem("this tool returns points only, so it has no 'geometry'; use compact or full.", kind=POINTS_ONLY)
    return value


def _said_once(schema: dict[str, Any]) -> None:
    schema.pop("default", None)


SAID_IN_INSTRUCTIONS = Field(json_schema_extra=_said_once)
"""`response_detail` is listed without a description or its default: the server's instructions
say once, for every tool, what each value means and that compact is the default (docs/adr/0032)."""
PointsDetail = Annotated[Literal["compact", "full"], BeforeValidator(_points_only), SAID_IN_INSTRUCTIONS]
"""`response_detail` of a point-only tool: compact (the answer) or full (TomTom's untrimmed answer)."""
GeometryDetail = Annotated[Literal["compact", "geometry", "full"], SAID_IN_INSTRUCTIONS]
"""`response_detail` of a tool with geometry: compact, geometry (compact plus GeoJSON to draw) or
full (TomTom's untrimmed answer, large)."""
ShowUi = Annotated[bool, Field(description="Also draw it on a map; the text is unchanged.")]


def _language(value: str) -> str:
    if len(value) < 2:
        raise problem(f"{value!r} is not a language tag such as en-GB")
    return value


Language = Annotated[str, Field(max_length=35), AfterValidator(_language)]
"""An IETF language tag such as en-GB (listed bare: the name says it, a wrong one is answered)."""
CountryCode = Annotated[str, Field(pattern="^[A-Za-z]{2}$")]
Countries = Annotated[list[CountryCode], Field(max_length=50)]
"""Only these countries (ISO 3166-1 alpha-2 codes; listed bare: the name and pattern say it)."""


Limit = Annotated[int, Field(ge=1, le=100)]


def answer(input: ToolInput, data: dict[str, Any], app_data: Any = None) -> Answer:
    """`data` for the model and, when the caller set `show_ui`, `app_data` for the widget: for a
    TomTom tool, TomTom's untrimmed answer (the client already took the key out of it)."""
    shown = bool(getattr(input, "show_ui", False))
    return Answer(data, app_data if shown else None, show_ui=shown)
