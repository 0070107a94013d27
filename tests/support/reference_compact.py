"""A test oracle: the public TomTom MCP server's compact rules for the search family, on REST shapes.

Restated from /work/shared/reference/tomtom-peer.md §3.2 (its newest trimmer). That server
deletes fields in place and keeps the rest; we apply the same deletions to TomTom's REST answer
so our compact answer can be held to at most the size of theirs. "Requested" names the optional
inputs the call gave (`openingHours`, `timeZone`, `mapcodes`, `extendedPostalCodesFor`,
`relatedPois`, `addressRanges`), whose fields it then keeps.
"""

from __future__ import annotations

import copy
from typing import Any

SUMMARY_DROPPED = ("queryTime", "fuzzyLevel", "geoBias")
RESULT_DROPPED = ("viewport", "boundingBox", "dataSources", "matchConfidence", "info", "score", "entryPoints")
KEPT_WHEN_REQUESTED = {"mapcodes": "mapcodes", "addressRanges": "addressRanges", "relatedPois": "relatedPois"}
ADDRESS_DROPPED = (
    "countryCodeISO3",
    "countrySubdivisionCode",
    "countrySubdivisionCodeIso",
    "countrySubdivisionName",
    "localName",
    "boundingBox",
)
CONNECTOR_KEPT = ("type", "ratedPowerKW", "currentType", "chargingSpeed")


def _drop(item: dict[str, Any], names: tuple[str, ...] | list[str]) -> None:
    for name in names:
        item.pop(name, None)


def _trim_address(address: dict[str, Any], requested: frozenset[str]) -> None:
    _drop(address, ADDRESS_DROPPED)
    if "extendedPostalCodesFor" not in requested:
        address.pop("extendedPostalCode", None)


def _trim_result(result: dict[str, Any], requested: frozenset[str]) -> None:
    _drop(result, RESULT_DROPPED)
    _drop(result, [field for field, given in KEPT_WHEN_REQUESTED.items() if given not in requested])
    if isinstance(result.get("address"), dict):
        _trim_address(result["address"], requested)
    poi = result.get("poi")
    if isinstance(poi, dict):
        poi.pop("localizedCategories", None)
        _drop(poi, [name for name in ("openingHours", "timeZone") if name not in requested])
    park = result.get("chargingPark")
    if isinstance(park, dict):
        park.pop("chargingStations", None)
        park["connectors"] = [
            {
                key: value
                for key, value in {**connector, "type": connector.get("connectorType"), "count": 1}.items()
                if key in (*CONNECTOR_KEPT, "count")
            }
            for connector in park.get("connectors") or []
        ]


def reference_compact(body: dict[str, Any], requested: frozenset[str] = frozenset()) -> dict[str, Any]:
    """The reference server's compact for a search or reverse-geocode REST answer."""
    trimmed = copy.deepcopy(body)
    _drop(trimmed.get("summary") or {}, SUMMARY_DROPPED)
    for result in [*(trimmed.get("results") or []), *(trimmed.get("addresses") or [])]:
        _trim_result(result, requested)
    return trimmed
