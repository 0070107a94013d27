"""tomtom-map-image: a PNG map of an area, as image content, for hosts that show no widget.

TomTom Maps only: GET `/map/1/staticimage` (Map Display API, Static Image) with `layer=basic`,
`style=main`, `format=png`, `width`, `height` and either `center` (`lon,lat`) with `zoom`, or `bbox`
(`minLon,minLat,maxLon,maxLat`). Orbis's Map Display API serves tiles only (no static image),
so the tool is not listed there (docs/adr/0032).

The result is the image (MCP image content) and a short text saying what it shows. The image
is bounded twice: `width` and `height` up to `MAX_SIDE` pixels, and the body up to
`MAX_IMAGE_BYTES`; a body that is not a PNG, or is larger, is `malformed`. Static Image draws
the base map only: no markers or routes (tomtom-dynamic-map draws those where widgets show).
"""

from __future__ import annotations

import struct
from typing import Annotated, Any

from pydantic import Field, model_validator

from core.errors import ErrorCode, ToolError
from tools.context import CallContext
from tools.definition import Answer, Image, define_tool
from tools.definitions.common import BoundingBox, Position
from tools.inputs import ToolInput, exactly_one, requires
from tools.tomtom.backends import Backend

MAX_SIDE = 1024
"""The largest width or height asked for, in pixels (TomTom takes more; a model needs no more)."""
MAX_IMAGE_BYTES = 2 * 1024 * 1024
"""The largest image passed on."""
PNG = b"\x89PNG\r\n\x1a\n"
Side = Annotated[int, Field(ge=64, le=MAX_SIDE)]


class MapImageInput(ToolInput):
    center: Position | None = Field(None, description="[lon, lat], with `zoom`.")
    zoom: int | None = Field(None, ge=0, le=22, description="0 world to 22 street; default 12.")
    bbox: BoundingBox | None = Field(None, description="Or the area, [minLon, minLat, maxLon, maxLat].")
    width: Side = 512
    height: Side = 512

    @model_validator(mode="after")
    def _rules(self) -> MapImageInput:
        exactly_one(self, "center", "bbox", what="view (center or bbox)")
        requires(self, "zoom", "center")
        return self


def build_request(input: MapImageInput, backend: Backend) -> tuple[str, dict[str, Any]]:
    """The path and query parameters (TomTom Maps; the tool is not offered on Orbis)."""
    params: dict[str, Any] = {
        "layer": "basic",
        "style": "main",
        "format": "png",
        "width": input.width,
        "height": input.height,
    }
    if input.center is not None:
        params["center"] = f"{input.center[0]},{input.center[1]}"
        params["zoom"] = 12 if input.zoom is None else input.zoom
    if input.bbox is not None:
        params["bbox"] = ",".join(str(v) for v in input.bbox)
    return "/map/1/staticimage", params


def png(content: bytes) -> tuple[bytes, int, int]:
    """The image, its width and height (from the PNG header), or `malformed`."""
    if len(content) > MAX_IMAGE_BYTES:
        raise ToolError(ErrorCode.MALFORMED, f"TomTom's image is over {MAX_IMAGE_BYTES:,} bytes; it was not passed on.")
    if not content.startswith(PNG) or content[12:16] != b"IHDR" or len(content) < 24:
        raise ToolError(ErrorCode.MALFORMED, "TomTom answered with something that is not a PNG image.")
    width, height = struct.unpack(">II", content[16:24])
    return content, width, height


async def run(input: MapImageInput, context: CallContext) -> Answer:
    session = context.tomtom
    image, width, height = await session.get(*build_request(input, session.backend), decode=png)
    shows: dict[str, Any] = {"center": input.center, "zoom": 12 if input.zoom is None else input.zoom}
    if input.bbox is not None:
        shows = {"bbox": input.bbox}
    data = {"image": {"format": "png", "width": width, "height": height, "bytes": len(image)}, **shows}
    return Answer(data, image=Image(image, "image/png"))


TOOL = define_tool(
    name="tomtom-map-image",
    title="TomTom Map Image",
    description=(
        "A PNG map of an area (center and zoom, or bbox) as an image, for hosts without map widgets; "
        "base map only, no markers or routes."
    ),
    input=MapImageInput,
    run=run,
    unavailable_on={Backend.ORBIS: "Orbis has no static map image: where widgets show, use tomtom-dynamic-map."},
)
