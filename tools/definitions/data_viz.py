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
from typing import Annotated, Any, Literal

import orjson
from pydantic import Field, PlainValidator, WithJsonSchema, model_validator

from core.errors import invalid
from tools.context import CallContext
from tools.definition import Answer, define_tool
from tools.definitions.common import ShowUi
from tools.download import download
from tools.inputs import ToolInput, exclusive, problem, rule
from tools.widgets import MAP_APP_URI

MAX_FEATURES = 100_000
MAX_LAYERS = 10
MAX_INLINE_CHARS = 10_000_000
MAX_FILTER_TEXT = 100
MAX_FILTER_NUMBER = 1e15
"""Filter values are bounded like every input: far beyond any property value a map filters on."""
GEOMETRY_TYPES = frozenset(
    {"Point", "MultiPoint", "LineString", "MultiLineString", "Polygon", "MultiPolygon", "GeometryCollection"}
)
PROPERTY_KEYS = ("color_property", "size_property", "label_property", "heatmap_weight", "filter_property")

LayerType = Literal["markers", "heatmap", "clusters", "line", "fill", "choropleth"]
PropertyName = Annotated[str, Field(min_length=1, max_length=100)]
Colour = Annotated[str, Field(max_length=32)]


def _filter_value(value: Any) -> str | int | float:
    # One check for both kinds: a union would name its branches in the error path.
    if isinstance(value, str):
        if len(value) > MAX_FILTER_TEXT:
            raise problem(f"should have at most {MAX_FILTER_TEXT} characters")
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if not (math.isfinite(value) and -MAX_FILTER_NUMBER <= value <= MAX_FILTER_NUMBER):
            raise problem(f"should be a number from {-MAX_FILTER_NUMBER:g} to {MAX_FILTER_NUMBER:g}")
        return value
    raise problem("should be text or a number")


FilterValue = Annotated[
    Any,
    PlainValidator(_filter_value),
    WithJsonSchema(
        {
            "type": ["string", "number"],
            "maxLength": MAX_FILTER_TEXT,
            "minimum": -MAX_FILTER_NUMBER,
            "maximum": MAX_FILTER_NUMBER,
        }
    ),
]
"""A property value to keep: text or a finite number, both bounded. One `type` list, not
`anyOf`, so every host reads it (tools.schema)."""


class Layer(ToolInput):
    # One way of drawing the data; an option left out is the widget's default for it.
    type: LayerType
    color: Colour | None = Field(None, description="CSS colour, e.g. #d81b60.")
    color_property: PropertyName | None = Field(
        None, description="Numeric property that picks the colour (choropleth)."
    )
    color_scale: list[Colour] | None = Field(
        None, min_length=2, max_length=2, description="[low colour, high colour] for color_property."
    )
    size_property: PropertyName | None = Field(None, description="Numeric property that sizes markers.")
    label_property: PropertyName | None = Field(None, description="Property shown as the popup title.")
    popup_fields: list[PropertyName] | None = Field(None, max_length=20)
    cluster_radius: int = Field(50, ge=10, le=200)
    heatmap_weight: PropertyName | None = Field(None, description="Numeric property that weights the heatmap.")
    heatmap_intensity: float = Field(1, ge=0.1, le=5)
    line_width: float = Field(3, ge=0.5, le=20)
    fill_opacity: float = Field(0.5, ge=0, le=1)
    filter_property: PropertyName | None = Field(
        None, description="Draw only features whose property is one of filter_values."
    )
    filter_values: list[FilterValue] | None = Field(None, min_length=1, max_length=100)

    def as_given(self) -> dict[str, Any]:
        """The layer as the caller wrote it (what the widget draws with): no defaults added."""
        return self.model_dump(exclude_unset=True, exclude_none=True)


class DataVizInput(ToolInput):
    # The data comes once, by `data_url` or inline `geojson` (also tomtom-get-app-data's `arguments`).
    data_url: str | None = Field(
        None,
        max_length=2048,
        description="https URL of a GeoJSON file on a public host (at most 50 MB, 100,000 features).",
    )
    geojson: str | None = Field(None, max_length=MAX_INLINE_CHARS, description="GeoJSON text, instead of data_url.")
    layers: list[Layer] = Field(
        min_length=1, max_length=MAX_LAYERS, description="How to draw the data, bottom layer first."
    )
    title: str | None = Field(None, max_length=200)
    show_ui: ShowUi = True

    @model_validator(mode="after")
    def _one_source(self) -> DataVizInput:
        exclusive(self, "data_url", "geojson", message="give the data once: a data_url or inline geojson")
        if self.data_url is None and self.geojson is None:
            raise rule("data_url", "geojson", message="give the data to draw: a data_url or inline geojson")
        return self


@dataclass(frozen=True, slots=True)
class Visualisation:
    """What one run makes of the input: the model's summary and the widget's app data."""

    summary: dict[str, Any]
    app_data: dict[str, Any]
    source: str
    """`data_url` or `tool_input` (the app-status `source`)."""


async def visualise(input: DataVizInput, context: CallContext) -> Visualisation:
    """Read the data, check it, and describe it with the layers (also run by tomtom-get-app-data)."""
    if input.data_url is not None:
        raw = await download(input.data_url, context.config.downloads)
        name, source = "data_url", "data_url"
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise invalid(name, "the file is not UTF-8 text, so it is not GeoJSON") from None
    else:
        assert input.geojson is not None  # the model's rule: one of the two
        text, name, source = input.geojson, "geojson", "tool_input"
    layers = [layer.as_given() for layer in input.layers]
    summary = await asyncio.to_thread(_describe, text, name, layers, input.title)  # up to 50 MB: off the event loop
    app_data = {"data_viz": {"title": input.title, "layers": layers, "geojson": text}}
    return Visualisation(summary=summary, app_data=app_data, source=source)


def _describe(text: str, name: str, layers: list[dict[str, Any]], title: str | None) -> dict[str, Any]:
    """The model's summary of GeoJSON `text` (given as `name`), which is checked on the way."""
    try:
        data = orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        raise invalid(name, f"is not JSON ({exc})") from None
    return _summary(_features(data, name), layers, title)


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


def _summary(features: list[dict[str, Any]], layers: list[dict[str, Any]], title: str | None) -> dict[str, Any]:
    kinds = Counter(f["geometry"]["type"] for f in features if f.get("geometry"))
    names: Counter[str] = Counter()
    for feature in features:
        properties = feature.get("properties")
        if isinstance(properties, dict):
            names.update(properties.keys())
    summary: dict[str, Any] = {"features": len(features), "geometry_types": dict(kinds)}
    if title:
        summary["title"] = title
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


async def run(input: DataVizInput, context: CallContext) -> Answer:
    shown = input.show_ui
    viz = await visualise(input, context)
    return Answer(viz.summary, viz.app_data if shown else None, show_ui=shown, refetchable=True)


TOOL = define_tool(
    name="tomtom-data-viz",
    title="TomTom Data Visualization",
    description=(
        "Draw your own GeoJSON (https data_url or inline) on an interactive map as markers, heatmap, "
        "clusters, lines, fills or a choropleth; answers with a summary of the data."
    ),
    input=DataVizInput,
    run=run,
    widget=MAP_APP_URI,
    needs_widget=True,
)
