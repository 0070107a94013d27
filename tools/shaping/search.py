"""Compact shapes for the search family (geocode, reverse geocode, fuzzy, POI, nearby...).

Compact keeps what answers the user: the type, the address, the point coordinates, the POI's
name and contact, the distance. It drops scores, viewports, entry points, data sources and
internal ids, and reports `total`, `returned` and `truncated` for the list.
"""

from __future__ import annotations

from typing import Any

from tools.shaping.points import lon_lat, pick

ADDRESS_KEPT = (
    "freeformAddress", "streetNumber", "streetName", "municipality", "municipalitySubdivision",
    "neighbourhood", "postalCode", "countrySubdivision", "country", "countryCode",
)  # fmt: skip
POI_KEPT = ("name", "phone", "url", "categories", "brands", "openingHours", "timeZone")


def compact_result(result: dict[str, Any]) -> dict[str, Any]:
    item: dict[str, Any] = pick(result, ("type", "entityType"))
    if isinstance(result.get("address"), dict):
        item["address"] = pick(result["address"], ADDRESS_KEPT)
    if "position" in result:
        item["position"] = lon_lat(result["position"])
    if isinstance(result.get("poi"), dict):
        poi = pick(result["poi"], POI_KEPT)
        if "brands" in poi:
            poi["brands"] = [b.get("name") for b in poi["brands"] if isinstance(b, dict) and b.get("name")]
        item["poi"] = poi
    if "dist" in result:
        item["distanceInMeters"] = round(float(result["dist"]))
    return item


def compact_search(body: dict[str, Any]) -> dict[str, Any]:
    results = [compact_result(r) for r in body.get("results") or [] if isinstance(r, dict)]
    summary = body.get("summary") or {}
    total = summary.get("totalResults", len(results))
    return {"results": results, "total": total, "returned": len(results), "truncated": total > len(results)}
