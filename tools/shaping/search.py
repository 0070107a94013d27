"""Compact shapes for the search family (geocode, reverse geocode, fuzzy, POI, nearby, EV...).

Compact keeps what answers the user: the type, the address, the point coordinates, the POI's
id (what tomtom-place-details takes), name and contact, the distance, a charging park's
connectors and live availability. It drops scores, viewports, entry points, data sources and the
ids of anything but a POI, and reports `total`, `returned` and `truncated` for the list.
Opening hours, time zone and speed limit come back only when the call asked TomTom for them,
and compact keeps them only then (`Requested`).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

from tools.shaping.points import lon_lat, pick
from tools.shaping.shape import ANY, ID, INTEGER, NUMBER, OBJECT, STRING, compile_spec, expect

ADDRESS_KEPT = (
    "freeformAddress",
    "streetNumber",
    "streetName",
    "municipality",
    "municipalitySubdivision",
    "neighbourhood",
    "postalCode",
    "countrySubdivision",
    "country",
    "countryCode",
)
POI_KEPT = ("name", "phone", "url", "categories", "brands")
STATUSES = ("available", "occupied", "reserved", "unknown", "outOfService")
"""Charging-point statuses in TomTom's availability answer, in the order compact lists them."""


@dataclass(frozen=True, slots=True)
class Requested:
    """Optional fields the call asked TomTom for; compact keeps a field only when asked."""

    opening_hours: bool = False
    time_zone: bool = False
    speed_limit: bool = False


NOTHING_REQUESTED = Requested()

_MOMENT = {"date": STRING, "hour": INTEGER, "minute": INTEGER}
RESULT_SPEC = {
    "id": ID,
    "type": STRING,
    "entityType": STRING,
    "address": OBJECT,
    "position": ANY,  # read by lon_lat, which checks it
    "dist": NUMBER,
    "poi": {
        "name": STRING,
        "brands": [{"name": STRING}],
        "openingHours": {"timeRanges": [{"startTime": _MOMENT, "endTime": _MOMENT}]},
        "timeZone": {"ianaId": STRING},
    },
    "chargingPark": {"connectors": [{"connectorType": ID, "ratedPowerKW": NUMBER, "currentType": ID}]},
    "chargingAvailability": {"connectors": [{"availability": {"current": dict.fromkeys(STATUSES, INTEGER)}}]},
}
"""What shaping reads of one search result (tools.shaping.shape); `along_route` extends it."""
SEARCH_ANSWER = compile_spec({"summary": {"totalResults": INTEGER}, "results": [RESULT_SPEC]})
REVERSE_ANSWER = compile_spec({"addresses": [{"address": OBJECT, "position": ANY}]})


def _number(value: Any) -> Any:
    """`22.0` -> `22`: whole numbers without a decimal point."""
    return int(value) if isinstance(value, float) and value.is_integer() else value


def _clock(moment: dict[str, Any]) -> tuple[str, str]:
    return str(moment.get("date", "")), f"{int(moment.get('hour') or 0):02d}:{int(moment.get('minute') or 0):02d}"


def opening_hours(hours: Any) -> list[str]:
    """TomTom's time ranges as `2026-09-24 10:00-17:00`, or `... 00:00 to 2026-10-01 00:00` across days."""
    ranges = hours.get("timeRanges") if isinstance(hours, dict) else None
    text = []
    for time_range in ranges or []:
        start_day, start = _clock(time_range.get("startTime") or {})
        end_day, end = _clock(time_range.get("endTime") or {})
        text.append(f"{start_day} {start}-{end}" if start_day == end_day else f"{start_day} {start} to {end_day} {end}")
    return text


_CONNECTOR_KEYS = ("type", "ratedPowerKW", "currentType", "count")


def connectors(park: dict[str, Any]) -> list[dict[str, Any]]:
    """A charging park's connectors: one entry per type, power and current, with how many there are."""
    counts = Counter(
        (c.get("connectorType"), _number(c.get("ratedPowerKW")), c.get("currentType"))
        for c in park.get("connectors") or []
        if isinstance(c, dict)
    )
    return [
        pick({"type": kind, "ratedPowerKW": power, "currentType": current, "count": count}, _CONNECTOR_KEYS)
        for (kind, power, current), count in counts.items()
    ]


def availability(answer: dict[str, Any]) -> dict[str, int]:
    """Charging points by status, summed over the connectors of a TomTom availability answer.

    `available` is always present; other statuses only when some point has them. Empty when
    the answer lists no connectors (TomTom knows nothing live about the station).
    """
    listed = [c for c in answer.get("connectors") or [] if isinstance(c, dict)]
    if not listed:
        return {}
    totals: Counter[str] = Counter()
    for connector in listed:
        current = (connector.get("availability") or {}).get("current") or {}
        for status in STATUSES:
            if isinstance(current.get(status), int):
                totals[status] += current[status]
    return {status: totals[status] for status in STATUSES if status == "available" or totals[status]}


def compact_result(result: dict[str, Any], requested: Requested = NOTHING_REQUESTED) -> dict[str, Any]:
    item: dict[str, Any] = pick(result, ("type", "entityType"))
    if result.get("type") == "POI" and result.get("id") is not None:
        item = {"id": str(result["id"]), **item}
    if isinstance(result.get("address"), dict):
        item["address"] = pick(result["address"], ADDRESS_KEPT)
    if "position" in result:
        item["position"] = lon_lat(result["position"])
    if isinstance(result.get("poi"), dict):
        source = result["poi"]
        poi = pick(source, POI_KEPT)
        if "brands" in poi:
            poi["brands"] = [b.get("name") for b in poi["brands"] if isinstance(b, dict) and b.get("name")]
        if requested.opening_hours and source.get("openingHours"):
            poi["openingHours"] = opening_hours(source["openingHours"])
        if requested.time_zone and isinstance(source.get("timeZone"), dict) and source["timeZone"].get("ianaId"):
            poi["timeZone"] = source["timeZone"]["ianaId"]
        item["poi"] = poi
    if "dist" in result:
        item["distanceInMeters"] = round(float(result["dist"]))
    if isinstance(result.get("chargingPark"), dict):
        item["chargingPark"] = {"connectors": connectors(result["chargingPark"])}
    # Not a TomTom field: tomtom-ev-search attaches TomTom's availability answer for the station here.
    if isinstance(result.get("chargingAvailability"), dict):
        counts = availability(result["chargingAvailability"])
        if counts:
            item["availability"] = counts
    return item


def listing(items: list[dict[str, Any]], total: int) -> dict[str, Any]:
    """`total`, `returned` and `truncated` for a list answer."""
    return {"total": total, "returned": len(items), "truncated": total > len(items)}


def compact_search(body: dict[str, Any], requested: Requested = NOTHING_REQUESTED) -> dict[str, Any]:
    expect(body, SEARCH_ANSWER)
    results = [compact_result(r, requested) for r in body.get("results") or [] if isinstance(r, dict)]
    summary = body.get("summary") or {}
    total = summary.get("totalResults", len(results))
    return {"results": results, **listing(results, total)}


def compact_reverse(body: dict[str, Any], requested: Requested = NOTHING_REQUESTED) -> dict[str, Any]:
    """A Reverse Geocode answer: each address with its point coordinates (and speed limit if asked)."""
    expect(body, REVERSE_ANSWER)
    kept = (*ADDRESS_KEPT, "speedLimit") if requested.speed_limit else ADDRESS_KEPT
    results = []
    for entry in body.get("addresses") or []:
        if not isinstance(entry, dict):
            continue
        item: dict[str, Any] = {"address": pick(entry.get("address") or {}, kept)}
        if "position" in entry:
            item["position"] = lon_lat(entry["position"])
        results.append(item)
    return {"results": results, **listing(results, len(results))}
