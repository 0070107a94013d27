"""Traffic incidents: the compact list, most severe first, capped.

Each incident becomes one flat object with names instead of codes. Over the cap, the list is
cut after sorting by severity (indefinite > major > moderate > minor > unknown; ties keep
TomTom's order) and `incidentsByCategory` counts what the whole answer held.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from tools.shaping.shape import ANY, INTEGER, NUMBER, STRING, compile_spec, expect

CATEGORIES = {
    0: "other",
    1: "accident",
    2: "fog",
    3: "danger",
    4: "rain",
    5: "frost",
    6: "jam",
    7: "lane-closed",
    8: "road-closed",
    9: "roadworks",
    10: "wind",
    11: "flooding",
    14: "broken-down-vehicle",
}
CATEGORY_CODES = {name: code for code, name in CATEGORIES.items()}
MAGNITUDES = {0: "unknown", 1: "minor", 2: "moderate", 3: "major", 4: "indefinite"}
SEVERITY = {4: 4, 3: 3, 2: 2, 1: 1, 0: 0}

FIELDS = (
    "{incidents{type,geometry{type,coordinates},properties{id,iconCategory,magnitudeOfDelay,"
    "events{description,code,iconCategory},startTime,endTime,from,to,length,delay,roadNumbers,"
    "timeValidity}}}"
)
"""The projection we ask TomTom for: what compact and geometry use, nothing more."""
FULL_FIELDS = (
    "{incidents{type,geometry{type,coordinates},properties{id,iconCategory,magnitudeOfDelay,"
    "events{description,code,iconCategory},startTime,endTime,from,to,length,delay,roadNumbers,"
    "timeValidity,probabilityOfOccurrence,numberOfReports,lastReportTime,"
    "tmc{citation,country,tableNumber,tableVersion,direction,points{location,offset}}}}}"
)
"""For `full`: every incident field TomTom documents (its own default is type, geometry and icon only)."""

INCIDENT = {
    "geometry": {"type": STRING, "coordinates": ANY},  # coordinates: checked by tools.geometry
    "properties": {
        "iconCategory": INTEGER,
        "magnitudeOfDelay": INTEGER,
        "length": NUMBER,
        "delay": NUMBER,
        "from": STRING,
        "to": STRING,
        "startTime": STRING,
        "endTime": STRING,
        "events": [{"description": STRING}],
    },
}
TRAFFIC_ANSWER = compile_spec({"incidents": [INCIDENT]})
"""An Incident Details answer as shaping reads it (tools.shaping.shape)."""


def _properties(incident: dict[str, Any]) -> dict[str, Any]:
    """An incident's `properties` object; empty when TomTom sent none."""
    properties: dict[str, Any] = incident.get("properties") or {}
    return properties


def _named(names: dict[int, str], code: object, default: str) -> str:
    """The name of a TomTom code; `default` when the code is absent, not an integer or unknown."""
    return names.get(code, default) if isinstance(code, int) else default


def by_severity(incidents: list[dict[str, Any]]) -> list[dict[str, Any]]:
    def severity(incident: dict[str, Any]) -> int:
        magnitude = (incident.get("properties") or {}).get("magnitudeOfDelay")
        return -SEVERITY.get(magnitude if isinstance(magnitude, int) else 0, 0)

    return sorted(incidents, key=severity)


def compact_incident(incident: dict[str, Any], *, with_validity: bool) -> dict[str, Any]:
    props = _properties(incident)
    item: dict[str, Any] = {
        "category": _named(CATEGORIES, props.get("iconCategory"), "other"),
        "magnitudeOfDelay": _named(MAGNITUDES, props.get("magnitudeOfDelay"), "unknown"),
    }
    for source, target in (("from", "from"), ("to", "to")):
        if props.get(source):
            item[target] = props[source]
    if isinstance(props.get("length"), (int, float)):
        item["lengthInMeters"] = round(props["length"])
    if isinstance(props.get("delay"), (int, float)):
        item["delayInSeconds"] = round(props["delay"])
    if props.get("roadNumbers"):
        item["roadNumbers"] = props["roadNumbers"]
    for key in ("startTime", "endTime"):
        if props.get(key):
            item[key] = props[key]
    if with_validity and props.get("timeValidity"):
        item["timeValidity"] = props["timeValidity"]
    events = list(dict.fromkeys(e.get("description") for e in props.get("events") or [] if e.get("description")))
    if events:
        item["events"] = events
    return item


def capped_incidents(body: dict[str, Any], cap: int) -> tuple[list[dict[str, Any]], int]:
    """The incidents compact and geometry show, in order, and how many TomTom returned."""
    expect(body, TRAFFIC_ANSWER)
    incidents = [i for i in body.get("incidents") or [] if isinstance(i, dict)]
    return by_severity(incidents)[:cap], len(incidents)


def compact_traffic(body: dict[str, Any], cap: int, *, with_validity: bool) -> dict[str, Any]:
    shown, total = capped_incidents(body, cap)
    answer: dict[str, Any] = {
        "incidents": [compact_incident(i, with_validity=with_validity) for i in shown],
        "total": total,
        "returned": len(shown),
        "truncated": total > len(shown),
    }
    if total > len(shown):
        counts = Counter(
            _named(CATEGORIES, _properties(i).get("iconCategory"), "other") for i in body.get("incidents") or []
        )
        answer["incidentsByCategory"] = dict(counts.most_common())
    return answer
