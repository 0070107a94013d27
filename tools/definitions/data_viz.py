"""tomtom-data-viz: a caller's GeoJSON on the map, as markers, heatmap, clusters, lines, fills or
a choropleth.

The GeoJSON comes inline (`geojson`, text) or from an `https` `data_url`, downloaded under the
rules of tools.download. The model reads a summary (features, geometry types, extent, property
names, notes on the layers); the widget gets the data exactly as given, with the layers, as
refetchable app data: never altered, and when it is too large for the result the widget runs
this tool again through tomtom-get-app-data, on whatever replica answers (`visualise`).
No TomTom request is made.
"""

from __future__ import annotations

import asyncio
import math
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import orjson

from tools.context import CallContext
from tools.definition import Answer, define_tool
from tools.definitions.common import exclusive, show_ui
from tools.download import download
from tools.errors import conflicting, invalid
from tools.widgets import MAP_WIDGET

LAYER_TYPES = ["markers", "heatmap", "clusters", "line", "fill", "choropleth"]
MAX_FEATURES = 100_000
MAX_LAYERS = 10
MAX_INLINE_CHARS = 10_000_000
GEOMETRY_TYPES = frozenset(
    {"Point", "MultiPoint", "LineString", "MultiLineString", "Polygon", "MultiPolygon", "GeometryCollection"}
)
PROPERTY_KEYS = ("color_property", "size_property", "label_property", "heatmap_weight", "filter_property")
_NAME = {"type": "string", "minLength": 1, "maxLength": 100}

LAYER = {
    "type": "object",
    "properties": {
        "type": {"type": "string", "enum": LAYER_TYPES},
        "color": {"type": "string", "maxLength": 32, "description": "CSS colour, e.g. #d81b60."},
        "color_property": {**_NAME, "description": "Numeric property that picks the colour (choropleth)."},
        "color_scale": {"type": "array", "items": {"type": "string", "maxLength": 32}, "minItems": 2, "maxItems": 2,
                        "description": "[low colour, high colour] for color_property."},
        "size_property": {**_NAME, "description": "Numeric property that sizes markers."},
        "label_property": {**_NAME, "description": "Property shown as the popup title."},
        "popup_fields": {"type": "array", "items": _NAME, "maxItems": 20},
        "cluster_radius": {"type": "integer", "minimum": 10, "maximum": 200, "default": 50},
        "heatmap_weight": {**_NAME, "description": "Numeric property that weights the heatmap."},
        "heatmap_intensity": {"type": "number", "minimum": 0.1, "maximum": 5, "default": 1},
        "line_width": {"type": "number", "minimum": 0.5, "maximum": 20, "default": 3},
        "fill_opacity": {"type": "number", "minimum": 0, "maximum": 1, "default": 0.5},
        "filter_property": {**_NAME, "description": "Draw only features whose property is one of filter_values."},
        "filter_values": {"type": "array", "items": {"type": ["string", "number"]}, "minItems": 1, "maxItems": 100},
    },
    "required": ["type"],
    "additionalProperties": False,
}  # fmt: skip

INPUT_SCHEMA = {
    "type": "object",
    "properties": {
        "data_url": {"type": "string", "maxLength": 2048,
                     "description": "https URL of a GeoJSON file on a public host (at most 50 MB, 100,000 features)."},
        "geojson": {"type": "string", "maxLength": MAX_INLINE_CHARS,
                    "description": "GeoJSON text, instead of data_url."},
        "layers": {"type": "array", "items": LAYER, "minItems": 1, "maxItems": MAX_LAYERS,
                   "description": "How to draw the data, bottom layer first."},
        "title": {"type": "string", "maxLength": 200},
        "show_ui": show_ui(default=True),
    },
    "required": ["layers"],
    "additionalProperties": False,
}  # fmt: skip


@dataclass(frozen=True, slots=True)
class Visualisation:
    """What one run makes of the input: the model's summary and the widget's app data."""

    summary: dict[str, Any]
    app_data: dict[str, Any]
    source: str
    """`data_url` or `tool_input` (the app-status `source`)."""


async def visualise(arguments: dict[str, Any], context: CallContext) -> Visualisation:
    """Read the data, check it and the layers, and describe it (also run by tomtom-get-app-data)."""
    exclusive(arguments, "data_url", "geojson", message="give the data once: a data_url or inline geojson")
    if "data_url" in arguments:
        raw = await download(arguments["data_url"], context.config.downloads)
        name, source = "data_url", "data_url"
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise invalid(name, "the file is not UTF-8 text, so it is not GeoJSON") from None
    elif "geojson" in arguments:
        text, name, source = arguments["geojson"], "geojson", "tool_input"
    else:
        raise conflicting("data_url", "geojson", message="give the data to draw: a data_url or inline geojson")
    summary = await asyncio.to_thread(_describe, text, name, arguments)  # up to 50 MB: off the event loop
    app_data = {"data_viz": {"title": arguments.get("title"), "layers": arguments["layers"], "geojson": text}}
    return Visualisation(summary=summary, app_data=app_data, source=source)


def _describe(text: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """The model's summary of GeoJSON `text` (given as `name`), which is checked on the way."""
    try:
        data = orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        raise invalid(name, f"is not JSON ({exc})") from None
    return _summary(_features(data, name), arguments["layers"], arguments)


def _features(data: Any, name: str) -> list[dict[str, Any]]:
    """The features of a FeatureCollection, a Feature or a bare geometry, checked lightly."""
    kind = data.get("type") if isinstance(data, dict) else None
    if kind == "FeatureCollection":
        features = data.get("features")
        if not isinstance(features, list):
            raise invalid(name, "is a FeatureCollection without a `features` list")
    elif kind == "Feature":
        features = [data]
    elif kind in GEOMETRY_TYPES:
        features = [{"type": "Feature", "geometry": data, "properties": {}}]
    else:
        raise invalid(name, "is not GeoJSON: expected a FeatureCollection, a Feature or a geometry")
    if len(features) > MAX_FEATURES:
        raise invalid(name, f"has {len(features):,} features; at most {MAX_FEATURES:,} are drawn")
    for index, feature in enumerate(features):
        geometry = feature.get("geometry") if isinstance(feature, dict) else "not a feature"
        if not (geometry is None or (isinstance(geometry, dict) and geometry.get("type") in GEOMETRY_TYPES)):
            raise invalid(name, f"feature {index} is not a GeoJSON Feature with a geometry")
    return features


def _summary(features: list[dict[str, Any]], layers: list[dict[str, Any]], arguments: dict[str, Any]) -> dict[str, Any]:
    kinds = Counter(f["geometry"]["type"] for f in features if f.get("geometry"))
    names: Counter[str] = Counter()
    for feature in features:
        properties = feature.get("properties")
        if isinstance(properties, dict):
            names.update(properties.keys())
    summary: dict[str, Any] = {"features": len(features), "geometry_types": dict(kinds)}
    if arguments.get("title"):
        summary["title"] = arguments["title"]
    extent = _extent(features)
    if extent is not None:
        summary["bbox"] = extent
    summary["properties"] = [name for name, _ in names.most_common(30)]
    summary["layers"] = [layer["type"] for layer in layers]
    notes = [
        f"layers[{i}].{key}: no feature has the property {layer[key]!r}"
        for i, layer in enumerate(layers)
        for key in PROPERTY_KEYS
        if key in layer and layer[key] not in names
    ]
    if notes:
        summary["notes"] = notes
    return summary


def _extent(features: list[dict[str, Any]]) -> list[float] | None:
    """[minLon, minLat, maxLon, maxLat] over every position, 5 decimals; None without any."""
    west = south = math.inf
    east = north = -math.inf
    for feature in features:
        for lon, lat in _positions(feature.get("geometry")):
            west, east = min(west, lon), max(east, lon)
            south, north = min(south, lat), max(north, lat)
    if west > east:
        return None
    return [round(west, 5), round(south, 5), round(east, 5), round(north, 5)]


def _positions(geometry: Any) -> Iterator[tuple[float, float]]:
    if not isinstance(geometry, dict):
        return
    if geometry.get("type") == "GeometryCollection":
        for part in geometry.get("geometries") or []:
            yield from _positions(part)
        return
    stack = [geometry.get("coordinates")]
    while stack:
        item = stack.pop()
        if isinstance(item, list) and item:
            first = item[0]
            if isinstance(first, (int, float)) and len(item) >= 2 and isinstance(item[1], (int, float)):
                if math.isfinite(first) and math.isfinite(item[1]):
                    yield float(first), float(item[1])
            else:
                stack.extend(item)


async def run(arguments: dict[str, Any], context: CallContext) -> Answer:
    shown = bool(arguments.get("show_ui", True))
    viz = await visualise(arguments, context)
    return Answer(viz.summary, viz.app_data if shown else None, show_ui=shown, refetchable=True)


TOOL = define_tool(
    name="tomtom-data-viz",
    title="TomTom Data Visualization",
    description=(
        "Draw your own GeoJSON (an https data_url or inline text) on an interactive map as markers, "
        "heatmap, clusters, lines, fills or a choropleth. Answers with a summary of the data."
    ),
    input_schema=INPUT_SCHEMA,
    run=run,
    requires=(),
    meta=MAP_WIDGET,
)
