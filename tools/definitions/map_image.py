"""tomtom-map-image: a PNG map of an area, as image content, with the caller's pins, route and area.

For hosts that show no widget: "show me the route" answers with a picture on every backend.

- Orbis (no static image there): the picture is composed here from Map Display v2 raster tiles,
  GET `/maps/orbis/display/raster/tile/{zoom}/{x}/{y}` with `TomTom-Api-Version: 2`,
  `style=street-light` and `tileSize=512` (a public preview). The tiles covering the view (tools.imaging.view: at
  most 3 x 3, never over `MAX_TILES`) are fetched four at a time within the call's one
  deadline, through the call's TomTom session, then stitched, cropped to the view and credited
  (`CREDITS`, drawn in the corner) off the event loop.
- TomTom Maps: GET `/map/1/staticimage` (Static Image) with `layer=basic`, `style=main`,
  `format=png` and either `center` (`lon,lat`), `zoom`, `width` and `height`, or `bbox`
  (`minLon,minLat,maxLon,maxLat`) with the `zoom` at which the box fits the asked size: Static
  Image takes no `width` or `height` with a `bbox` and sizes the picture to the box, so its size
  can be smaller than asked (the text gives the size sent back).

The view is `center` + `zoom` (default 12), or a `bbox` (the highest zoom at which it fits
`width` x `height`), or, with neither, the box around what is drawn. `markers` (pins with
optional short labels), `path` (a route line) and `area` (an outline, shaded) are drawn on the
picture on both backends (Static Image draws none itself); the text says what the picture shows.

The answer is the image (MCP image content) and a short text. Bounded: `width` and `height` up to
`MAX_SIDE`, the tile count, each tile's bytes and pixels (tools.imaging.canvas), and the picture
sent, up to `MAX_IMAGE_BYTES`; what TomTom sends that is not a PNG (Static Image) or a PNG or
JPEG (tiles), or is larger, is `malformed`.
"""

from __future__ import annotations

import asyncio
import struct
from dataclasses import replace
from typing import Annotated, Any

from pydantic import Field, model_validator

from core.errors import ErrorCode, ToolError
from tools.context import CallContext
from tools.definition import Answer, Image, define_tool
from tools.definitions.common import BoundingBox, Position
from tools.imaging import canvas
from tools.imaging.canvas import Overlays
from tools.imaging.view import TooManyTiles, View, extent, fit, tiles_for
from tools.inputs import ToolInput, exclusive, requires, rule
from tools.tomtom.backends import CREDITS, Backend

MAX_SIDE = 1024
"""The largest width or height asked for, in pixels (TomTom takes more; a model needs no more)."""
MAX_IMAGE_BYTES = 2 * 1024 * 1024
"""The largest image passed on."""
MAX_MARKERS = 20
MAX_PATH_POINTS = 2_000
MAX_AREA_POINTS = 500
DEFAULT_ZOOM = 12
TILE_FETCHES = 4
"""Tiles fetched at once (a picture needs at most 9)."""
TILE_PATH = "/maps/orbis/display/raster/tile/{zoom}/{x}/{y}"
TILE_PARAMS = {"style": "street-light"}
IMAGE_ACCEPT = {"Accept": "image/png"}
"""Replaces the client's default `Accept: application/json`: the answer asked for is a picture."""
TILE_HEADERS = {"TomTom-Api-Version": "2", "Accept": "image/png, image/jpeg"}
"""Map Display v2 (the version travels in the header, as Orbis documents, not in the path)."""
PNG = b"\x89PNG\r\n\x1a\n"
Side = Annotated[int, Field(ge=64, le=MAX_SIDE)]
Label = Annotated[str, Field(max_length=40)]


class Pin(ToolInput):
    """A marker: where, and an optional short label drawn beside it."""

    position: Position
    label: Label | None = None


class MapImageInput(ToolInput):
    center: Position | None = None
    zoom: int | None = Field(None, ge=0, le=22, description="Default 12.")
    bbox: BoundingBox | None = Field(None, description="[minLon, minLat, maxLon, maxLat]")
    width: Side = 512
    height: Side = 512
    markers: list[Pin] | None = Field(None, max_length=MAX_MARKERS)
    path: list[Position] | None = Field(None, min_length=2, max_length=MAX_PATH_POINTS)
    area: list[Position] | None = Field(None, min_length=3, max_length=MAX_AREA_POINTS)

    @model_validator(mode="after")
    def _rules(self) -> MapImageInput:
        exclusive(self, "center", "bbox", message="give one view: center or bbox")
        if self.center is None and self.bbox is None and not (self.markers or self.path or self.area):
            raise rule("center", "bbox", message="give a view (center or bbox), or markers, path or area to frame")
        requires(self, "zoom", "center")
        return self

    def overlays(self) -> Overlays:
        return Overlays(
            markers=[(pin.position, pin.label) for pin in self.markers or ()],
            path=self.path or (),
            area=self.area or (),
        )

    def view(self) -> View:
        """The picture's view: the center at its zoom, the bbox fitted, or what is drawn, fitted."""
        if self.center is not None:
            zoom = DEFAULT_ZOOM if self.zoom is None else self.zoom
            return View.centred(self.center, zoom, self.width, self.height)
        box = self.bbox or extent(
            [*(pin.position for pin in self.markers or ()), *(self.path or ()), *(self.area or ())]
        )
        assert box is not None  # the rules above: a bbox, or something drawn
        return fit(box, self.width, self.height)


def build_request(input: MapImageInput, backend: Backend) -> tuple[str, dict[str, Any]]:
    """Static Image's path and query parameters (TomTom Maps; Orbis composes tiles instead)."""
    params: dict[str, Any] = {"layer": "basic", "style": "main", "format": "png"}
    view = input.view()
    if input.bbox is not None:  # the picture is sized to the box: no width or height with it
        params["bbox"] = ",".join(str(v) for v in input.bbox)
        params["zoom"] = view.zoom
        return "/map/1/staticimage", params
    params["width"], params["height"] = input.width, input.height
    params["center"] = ",".join(str(v) for v in (input.center or view.center()))
    params["zoom"] = view.zoom
    return "/map/1/staticimage", params


def png(content: bytes) -> tuple[bytes, int, int]:
    """The image, its width and height (from the PNG header), or `malformed`."""
    if len(content) > MAX_IMAGE_BYTES:
        raise ToolError(ErrorCode.MALFORMED, f"TomTom's image is over {MAX_IMAGE_BYTES:,} bytes; it was not passed on.")
    if not content.startswith(PNG) or content[12:16] != b"IHDR" or len(content) < 24:
        raise ToolError(ErrorCode.MALFORMED, "TomTom answered with something that is not a PNG image.")
    width, height = struct.unpack(">II", content[16:24])
    return content, width, height


async def _tiles(context: CallContext, view: View) -> tuple[int, dict[tuple[int, int, int], bytes]]:
    """The tile size and each distinct tile the view needs, fetched `TILE_FETCHES` at a time;
    the first failure cancels the others and is the answer."""
    session = context.tomtom
    try:
        side, tiles = tiles_for(view)
    except TooManyTiles as error:  # unreachable within MAX_SIDE; refused rather than fetched
        raise ToolError(ErrorCode.INVALID_ARGUMENTS, f"The view needs {error}; ask for a smaller picture.") from None
    keys = sorted({(tile.zoom, tile.x, tile.y) for tile in tiles})
    gate = asyncio.Semaphore(TILE_FETCHES)

    async def fetch(key: tuple[int, int, int]) -> bytes:
        zoom, x, y = key
        async with gate:
            path = TILE_PATH.format(zoom=zoom, x=x, y=y)
            params = {**TILE_PARAMS, "tileSize": side}
            body: bytes = await session.get(path, params, decode=canvas.looks_like_tile, headers=TILE_HEADERS)
            return body

    tasks = [asyncio.ensure_future(fetch(key)) for key in keys]
    try:
        bodies = await asyncio.gather(*tasks)
    except BaseException:
        for task in tasks:
            task.cancel()
        raise
    return side, dict(zip(keys, bodies, strict=True))


def _composed(view: View, side: int, bodies: dict[tuple[int, int, int], bytes], overlays: Overlays) -> bytes:
    """The Orbis picture: tiles stitched, overlays drawn, credit in the corner, as a PNG (CPU)."""
    _, tiles = tiles_for(view)
    picture = canvas.stitch(view, side, ((tile, bodies[tile.zoom, tile.x, tile.y]) for tile in tiles))
    if overlays:
        picture = canvas.draw(picture, view, overlays)
    return canvas.encode(canvas.credit(picture, CREDITS[Backend.ORBIS]), MAX_IMAGE_BYTES)


def _drawn_on(image: bytes, view: View, overlays: Overlays) -> bytes:
    """Static Image's picture with the overlays drawn on it, as a PNG (CPU)."""
    picture = canvas.draw(canvas.open_picture(image), view, overlays)
    return canvas.encode(picture, MAX_IMAGE_BYTES)


def _shown(input: MapImageInput, view: View) -> dict[str, Any]:
    """What the text says the picture shows: its view, and what was drawn on it."""
    shows: dict[str, Any] = {"center": view.center() if input.center is None else input.center, "zoom": view.zoom}
    if input.bbox is not None:
        shows = {"bbox": input.bbox, "zoom": view.zoom}
    if input.markers:
        labels = [pin.label for pin in input.markers if pin.label]
        shows["markers"] = {"count": len(input.markers), **({"labels": labels} if labels else {})}
    if input.path:
        shows["path"] = {"points": len(input.path)}
    if input.area:
        shows["area"] = {"points": len(input.area)}
    return shows


async def run(input: MapImageInput, context: CallContext) -> Answer:
    session = context.tomtom
    overlays = input.overlays()
    view = input.view()
    if session.backend is Backend.ORBIS:
        side, bodies = await _tiles(context, view)
        image = await asyncio.to_thread(_composed, view, side, bodies, overlays)
        width, height = view.width, view.height
    else:
        image, width, height = await session.get(
            *build_request(input, session.backend), decode=png, headers=IMAGE_ACCEPT
        )
        if overlays:  # drawn where TomTom put the view: its centre, at the size it sent
            image = await asyncio.to_thread(_drawn_on, image, replace(view, width=width, height=height), overlays)
    data = {"image": {"format": "png", "width": width, "height": height, "bytes": len(image)}, **_shown(input, view)}
    return Answer(data, image=Image(image, "image/png"))


TOOL = define_tool(
    name="tomtom-map-image",
    title="TomTom Map Image",
    description="A PNG picture of a map, with markers, a route line or an area drawn on it.",
    input=MapImageInput,
    run=run,
)
