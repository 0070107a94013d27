"""Pictures stitched from raster tiles, and the caller's markers, route and area drawn on them.

Every function here is CPU work on at most a 1024 x 1024 picture (tens of milliseconds): the tool
runs it with `asyncio.to_thread`, never on the event loop.

Decoding is bounded before any pixel is read: a tile must be a PNG or JPEG (`looks_like_tile`,
by its first bytes, while the request is still in hand) whose header declares at most
`MAX_TILE_SIDE` pixels a side; anything else is `malformed`, as is a picture that fails to
decode. Pillow's own decompression-bomb guard (`Image.MAX_IMAGE_PIXELS`) is left as it is; the
side check stops far below it.
"""

from __future__ import annotations

import io
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cache

from PIL import Image, ImageDraw, ImageFont, UnidentifiedImageError

from core.errors import ErrorCode, ToolError
from tools.imaging.view import Tile, View

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
JPEG_SIGNATURE = b"\xff\xd8\xff"
FORMATS = ("PNG", "JPEG")
MAX_TILE_BYTES = 1024 * 1024
"""The largest tile body read (a 512-pixel map tile is tens of kilobytes)."""
MAX_TILE_SIDE = 1024
"""The largest tile side decoded, checked from the header before any pixel is."""
MAX_PICTURE_SIDE = 2048
"""The largest picture TomTom's Static Image may send back for us to draw on."""

BACKGROUND = (232, 232, 232)
"""What shows where no tile is (beyond the poles)."""
ROUTE = (30, 136, 229)
MARKER = (229, 57, 53)
AREA_LINE = (123, 31, 162)
AREA_FILL = (123, 31, 162, 56)
HALO = (255, 255, 255)
INK = (33, 33, 33)
MARKER_RADIUS = 8


@dataclass(frozen=True, slots=True)
class Overlays:
    """What the caller asked to see on the map: labelled pins, a route line, an area's outline."""

    markers: Sequence[tuple[Sequence[float], str | None]] = ()
    path: Sequence[Sequence[float]] = ()
    area: Sequence[Sequence[float]] = ()

    def __bool__(self) -> bool:
        return bool(self.markers or self.path or self.area)


def looks_like_tile(content: bytes) -> bytes:
    """A tile body as sent, if it is a PNG or JPEG within `MAX_TILE_BYTES`; `malformed` otherwise.
    Cheap (first bytes only): the TomTom session's `decode`."""
    if len(content) > MAX_TILE_BYTES:
        raise ToolError(ErrorCode.MALFORMED, f"TomTom sent a map tile over {MAX_TILE_BYTES:,} bytes; it was not used.")
    if not (content.startswith(PNG_SIGNATURE) or content.startswith(JPEG_SIGNATURE)):
        raise ToolError(
            ErrorCode.MALFORMED, "TomTom answered a map tile with something that is not a PNG or JPEG image."
        )
    return content


def _open(content: bytes, max_side: int, what: str) -> Image.Image:
    """`content` decoded as RGB, if its header declares at most `max_side` pixels a side."""
    try:
        picture = Image.open(io.BytesIO(content), formats=FORMATS)
        if max(picture.size) > max_side:
            raise ToolError(ErrorCode.MALFORMED, f"TomTom's {what} is over {max_side} pixels a side; it was not used.")
        picture.load()
        return picture.convert("RGB")
    except ToolError:
        raise
    except (UnidentifiedImageError, OSError, ValueError, SyntaxError, Image.DecompressionBombError):
        raise ToolError(ErrorCode.MALFORMED, f"TomTom's {what} could not be decoded as an image.") from None


def stitch(view: View, side: int, tiles: Iterable[tuple[Tile, bytes]]) -> Image.Image:
    """The view's picture: each tile decoded and pasted where it falls (cropped by the frame)."""
    picture = Image.new("RGB", (view.width, view.height), BACKGROUND)
    for tile, content in tiles:
        image = _open(content, MAX_TILE_SIDE, "map tile")
        if image.size != (side, side):
            image = image.resize((side, side))
        picture.paste(image, (tile.left, tile.top))
    return picture


def open_picture(content: bytes) -> Image.Image:
    """A whole picture TomTom rendered (Static Image), decoded to draw on."""
    return _open(content, MAX_PICTURE_SIDE, "image")


@cache
def _font(size: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    return ImageFont.load_default(size=size)


def draw(picture: Image.Image, view: View, overlays: Overlays) -> Image.Image:
    """`picture` with the area (filled, outlined), then the route, then the pins and their labels
    on top, each where its positions fall in `view`."""
    layer = Image.new("RGBA", picture.size, (0, 0, 0, 0))
    pen = ImageDraw.Draw(layer)
    if overlays.area:
        ring = [view.pixel(lon, lat) for lon, lat in overlays.area]
        pen.polygon(ring, fill=AREA_FILL)
        pen.line([*ring, ring[0]], fill=AREA_LINE, width=3, joint="curve")
    if overlays.path:
        line = [view.pixel(lon, lat) for lon, lat in overlays.path]
        pen.line(line, fill=HALO, width=9, joint="curve")
        pen.line(line, fill=ROUTE, width=5, joint="curve")
    font = _font(13)
    for (lon, lat), label in overlays.markers:
        x, y = view.pixel(lon, lat)
        r = MARKER_RADIUS
        pen.ellipse((x - r, y - r, x + r, y + r), fill=MARKER, outline=HALO, width=2)
        if label:
            pen.text((x + r + 3, y), label, font=font, fill=INK, anchor="lm", stroke_width=2, stroke_fill=HALO)
    return Image.alpha_composite(picture.convert("RGBA"), layer).convert("RGB")


def credit(picture: Image.Image, text: str) -> Image.Image:
    """`picture` with `text` (the map data's credit) in its bottom-right corner, on a pale band."""
    pen = ImageDraw.Draw(picture, "RGBA")
    font = _font(11)
    left, top, right, bottom = pen.textbbox((0, 0), text, font=font)
    width, height = right - left + 8, bottom - top + 6
    x, y = picture.width - width, picture.height - height
    pen.rectangle((x, y, picture.width, picture.height), fill=(255, 255, 255, 200))
    pen.text((x + 4 - left, y + 3 - top), text, font=font, fill=INK)
    return picture


def encode(picture: Image.Image, max_bytes: int) -> bytes:
    """`picture` as a PNG within `max_bytes`: full colour, or, when that is larger, 256 colours."""
    out = io.BytesIO()
    picture.save(out, "PNG", compress_level=6)
    if out.tell() > max_bytes:
        out = io.BytesIO()
        picture.quantize(256).save(out, "PNG", compress_level=9)
    if out.tell() > max_bytes:
        raise ToolError(ErrorCode.MALFORMED, f"The map picture is over {max_bytes:,} bytes; it was not passed on.")
    return out.getvalue()
