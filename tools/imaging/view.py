"""Where a map view falls in web-Mercator pixels, and which raster tiles cover it.

Zoom means what TomTom's Static Image means by it: the world is `256 * 2**zoom` pixels wide.
Orbis raster tiles are fetched 512 pixels square one zoom level down (the same scale, a quarter
of the requests); at zoom 0 the 256-pixel tile is the whole world. Longitudes wrap around the
antimeridian; rows beyond the poles are left to the background.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

WORLD_AT_ZOOM_0 = 256
"""Pixels across the world at zoom 0 (Static Image's scale)."""
MAX_LATITUDE = 85.0511287798
"""Web Mercator's edge: the square world's top and bottom."""
MAX_ZOOM = 22
MAX_TILES = 16
"""The most tiles one picture may need. A fixed bound, not a setting: at 512 pixels a tile, a
view of up to 1024 x 1024 pixels touches at most 3 x 3 tiles, so this is never reached by a valid
call; `tiles_for` refuses more rather than fetch them."""


def world_size(zoom: int) -> int:
    return WORLD_AT_ZOOM_0 << zoom


def to_pixels(lon: float, lat: float, zoom: int) -> tuple[float, float]:
    """`[lon, lat]` as world pixels at `zoom` (x east from the antimeridian, y south from the top)."""
    size = world_size(zoom)
    lat = max(-MAX_LATITUDE, min(MAX_LATITUDE, lat))
    sin = math.sin(math.radians(lat))
    x = (lon + 180.0) / 360.0 * size
    y = (0.5 - math.log((1 + sin) / (1 - sin)) / (4 * math.pi)) * size
    return x, y


def to_lon_lat(x: float, y: float, zoom: int) -> tuple[float, float]:
    """World pixels at `zoom` back to `[lon, lat]`."""
    size = world_size(zoom)
    lon = x / size * 360.0 - 180.0
    lat = math.degrees(math.atan(math.sinh(math.pi * (1 - 2 * y / size))))
    return lon, lat


@dataclass(frozen=True, slots=True)
class View:
    """A picture of `width` x `height` pixels centred on world pixel (`cx`, `cy`) at `zoom`."""

    zoom: int
    cx: float
    cy: float
    width: int
    height: int

    @classmethod
    def centred(cls, center: Sequence[float], zoom: int, width: int, height: int) -> View:
        cx, cy = to_pixels(center[0], center[1], zoom)
        return cls(zoom, cx, cy, width, height)

    def pixel(self, lon: float, lat: float) -> tuple[float, float]:
        """Where `[lon, lat]` falls in the picture; of the world's copies east and west, the one
        nearest the centre (a route across the antimeridian stays in one piece)."""
        x, y = to_pixels(lon, lat, self.zoom)
        size = world_size(self.zoom)
        x += round((self.cx - x) / size) * size
        return x - self.cx + self.width / 2, y - self.cy + self.height / 2

    def center(self) -> list[float]:
        lon, lat = to_lon_lat(self.cx % world_size(self.zoom), self.cy, self.zoom)
        return [round(lon, 6), round(lat, 6)]


def bbox_span(bbox: Sequence[float]) -> tuple[float, float, float, float]:
    """`[minLon, minLat, maxLon, maxLat]` with `maxLon` moved past 180 when the box crosses the
    antimeridian (minLon east of maxLon), so that west < east always."""
    west, south, east, north = bbox
    return west, south, east + 360.0 if east < west else east, north


def fit(bbox: Sequence[float], width: int, height: int) -> View:
    """The highest zoom at which `bbox` fits in `width` x `height` pixels, centred on it."""
    west, south, east, north = bbox_span(bbox)
    zoom = MAX_ZOOM
    while zoom > 0:
        (x0, y0), (x1, y1) = to_pixels(west, north, zoom), to_pixels(east, south, zoom)
        if x1 - x0 <= width and y1 - y0 <= height:
            break
        zoom -= 1
    (x0, y0), (x1, y1) = to_pixels(west, north, zoom), to_pixels(east, south, zoom)
    return View(zoom, (x0 + x1) / 2, (y0 + y1) / 2, width, height)


def extent(positions: Iterable[Sequence[float]]) -> list[float] | None:
    """The box around `positions` (None for none), widened a little when it is a single point
    or a line along a meridian or parallel, so that it has an area to fit."""
    lons, lats = [], []
    for lon, lat in positions:
        lons.append(lon)
        lats.append(lat)
    if not lons:
        return None
    west, east, south, north = min(lons), max(lons), min(lats), max(lats)
    pad_lon = max((east - west) * 0.08, 0.002)
    pad_lat = max((north - south) * 0.08, 0.002)
    return [
        max(-180.0, west - pad_lon),
        max(-MAX_LATITUDE, south - pad_lat),
        min(180.0, east + pad_lon),
        min(MAX_LATITUDE, north + pad_lat),
    ]


@dataclass(frozen=True, slots=True)
class Tile:
    """One raster tile to fetch (`zoom`, `x`, `y` on TomTom's grid) and where its top-left
    corner goes in the picture (`left`, `top`, possibly negative)."""

    zoom: int
    x: int
    y: int
    left: int
    top: int


class TooManyTiles(ValueError):
    """A view would need more than `MAX_TILES` tiles."""


def tile_grid(zoom: int) -> tuple[int, int]:
    """The tile zoom and tile size that draw view zoom `zoom` (512-pixel tiles one level down)."""
    return (zoom - 1, 512) if zoom > 0 else (0, 256)


def tiles_for(view: View) -> tuple[int, list[Tile]]:
    """The tile size and the tiles covering `view`, row by row; a tile beyond the poles is not
    listed, and one seen twice (a narrow world at low zoom) is listed at each place."""
    tile_zoom, side = tile_grid(view.zoom)
    count = 1 << tile_zoom
    left = math.floor(view.cx - view.width / 2)
    top = math.floor(view.cy - view.height / 2)
    first_col, last_col = left // side, (left + view.width - 1) // side
    first_row, last_row = top // side, (top + view.height - 1) // side
    tiles = [
        Tile(tile_zoom, col % count, row, col * side - left, row * side - top)
        for row in range(max(first_row, 0), min(last_row, count - 1) + 1)
        for col in range(first_col, last_col + 1)
    ]
    if len(tiles) > MAX_TILES:
        raise TooManyTiles(f"{len(tiles)} tiles (at most {MAX_TILES})")
    return side, tiles
