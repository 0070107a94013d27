"""Point coordinates: always `[longitude, latitude]` (RFC 7946 order), 5 decimals (about 1 m)."""

from __future__ import annotations

import math
from typing import Any

from core.errors import ErrorCode, ToolError


def lon_lat(position: Any) -> list[float]:
    """`{"lat", "lon"}`, `{"latitude", "longitude"}` or `"lat,lon"` -> `[lon, lat]`."""
    try:
        if isinstance(position, str):
            lat, lon = (float(part) for part in position.split(","))
        elif "lat" in position:
            lat, lon = float(position["lat"]), float(position["lon"])
        else:
            lat, lon = float(position["latitude"]), float(position["longitude"])
    except (TypeError, ValueError, KeyError):
        raise ToolError(ErrorCode.MALFORMED, "TomTom answered with a position we cannot read.") from None
    if not (math.isfinite(lat) and math.isfinite(lon) and -90 <= lat <= 90 and -180 <= lon <= 180):
        raise ToolError(ErrorCode.MALFORMED, "TomTom answered with a position outside the world.")
    return [round(lon, 5), round(lat, 5)]


def lat_lon_text(point: list[float]) -> str:
    """`[lon, lat]` -> `"lat,lon"`, the order TomTom paths and parameters use."""
    return f"{point[1]},{point[0]}"


def pick(source: dict[str, Any], keys: tuple[str, ...]) -> dict[str, Any]:
    """The listed keys that are present and carry a value (no None, empty string or empty list)."""
    return {k: source[k] for k in keys if k in source and source[k] not in (None, "", [], {})}
