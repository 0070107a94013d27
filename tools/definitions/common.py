"""Schema fragments and argument helpers shared by the tool modules."""

from __future__ import annotations

from typing import Any

from tools.definition import Answer
from tools.errors import conflicting

COMPACT, GEOMETRY, FULL = "compact", "geometry", "full"


def response_detail(*, geometry: bool) -> dict[str, Any]:
    values = [COMPACT, GEOMETRY, FULL] if geometry else [COMPACT, FULL]
    text = (
        "compact (default): the answer; geometry: compact plus GeoJSON lines/polygons to draw; "
        "full: TomTom's untrimmed answer (large)."
        if geometry
        else "compact (default): the answer; full: TomTom's untrimmed answer."
    )
    return {"type": "string", "enum": values, "default": COMPACT, "description": text}


def position(description: str = "[longitude, latitude]") -> dict[str, Any]:
    return {
        "type": "array",
        "description": description,
        "items": {"type": "number"},
        "minItems": 2,
        "maxItems": 2,
    }


def bbox(description: str) -> dict[str, Any]:
    return {"type": "array", "description": description, "items": {"type": "number"}, "minItems": 4, "maxItems": 4}


def check_position(name: str, value: list[float]) -> None:
    from tools.errors import invalid

    lon, lat = value
    if not -180 <= lon <= 180:
        raise invalid(f"{name}[0]", f"longitude {lon} is outside -180..180 (positions are [longitude, latitude])")
    if not -90 <= lat <= 90:
        raise invalid(f"{name}[1]", f"latitude {lat} is outside -90..90 (positions are [longitude, latitude])")


def check_bbox(name: str, value: list[float]) -> None:
    from tools.errors import invalid

    min_lon, min_lat, max_lon, max_lat = value
    check_position(name, [min_lon, min_lat])
    check_position(name, [max_lon, max_lat])
    if min_lat >= max_lat:
        raise invalid(name, "must be [minLon, minLat, maxLon, maxLat] with minLat below maxLat")
    if min_lon == max_lon:
        raise invalid(name, "must have a width: minLon equals maxLon")


def exclusive(arguments: dict[str, Any], *names: str, message: str = "give only one of these") -> None:
    given = [name for name in names if name in arguments]
    if len(given) > 1:
        raise conflicting(*given, message=message)


def requires(arguments: dict[str, Any], name: str, needed: str) -> None:
    if name in arguments and needed not in arguments:
        raise conflicting(name, needed, message=f"`{name}` needs `{needed}`")


def detail(arguments: dict[str, Any]) -> str:
    return arguments.get("response_detail", COMPACT)


def show_ui(default: bool = False) -> dict[str, Any]:
    """The `show_ui` input of a tool drawn by a widget; the tool also passes `meta=MAP_WIDGET`
    (tools.widgets) and returns `answer(...)`. docs/widgets.md has the recipe."""
    return {
        "type": "boolean",
        "default": default,
        "description": "Also draw the answer on a map where the host shows MCP Apps; the text is unchanged.",
    }


def answer(arguments: dict[str, Any], data: dict[str, Any], app_data: Any = None) -> Answer:
    """`data` for the model and, when `show_ui` (default false) is on, `app_data` for the widget:
    for a TomTom tool, TomTom's untrimmed answer (the client already took the key out of it)."""
    shown = bool(arguments.get("show_ui", False))
    return Answer(data, app_data if shown else None, show_ui=shown)
