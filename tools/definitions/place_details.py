"""tomtom-place-details: one place by the id a search result carries (phone, website, hours, open now).

Place by Id on both backends: Orbis GET `/maps/orbis/places/place.json?apiVersion=1`, TomTom
Maps GET `/search/2/place.json`, with `entityId`, `language`, and always `openingHours=nextSevenDays`
and `timeZone=iana`: the questions this tool answers ("is it open now?") need both, so they are
not inputs. The answer is a Search API answer (`{summary, results: [...]}`) of at most one
result; none means TomTom knows no place with that id (`invalid_arguments` on `id`).

Compact is the search family's compact place (id, name, phone, url, categories, brands, address,
position, opening hours as local ranges, IANA time zone) plus `openNow`, worked out from the
ranges in the place's own time zone when TomTom gave both.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import Field

from core.errors import ToolError, invalid
from tools.context import CallContext
from tools.definition import define_tool
from tools.definitions.common import FULL, Language, PointsDetail
from tools.definitions.search_common import search_path
from tools.inputs import ToolInput
from tools.shaping.search import SEARCH_ANSWER, Requested, compact_result
from tools.shaping.shape import expect
from tools.tomtom.backends import Backend

ASKED = Requested(opening_hours=True, time_zone=True)


def now_utc() -> datetime:
    """The current time, in UTC (tests replace it)."""
    return datetime.now(UTC)


class PlaceDetailsInput(ToolInput):
    id: Annotated[
        str,
        Field(min_length=1, max_length=200, description="A search result's `id`."),
    ]
    response_detail: PointsDetail = "compact"
    language: Language | None = None


def build_request(input: PlaceDetailsInput, backend: Backend) -> tuple[str, dict[str, Any]]:
    """The path and query parameters for this call on this backend."""
    path, params = search_path(backend, "place.json")
    params["entityId"] = input.id
    if input.language is not None:
        params["language"] = input.language
    params["openingHours"] = "nextSevenDays"
    params["timeZone"] = "iana"
    return path, params


def open_now(result: dict[str, Any], now: datetime) -> bool | None:
    """Whether `now` falls in one of the place's opening ranges, read in its own time zone;
    None when TomTom gave no ranges or no (known) zone."""
    poi = result.get("poi") or {}
    zone, hours = (poi.get("timeZone") or {}).get("ianaId"), poi.get("openingHours")
    if not zone or not isinstance(hours, dict) or not hours.get("timeRanges"):
        return None
    try:
        local = now.astimezone(ZoneInfo(zone)).replace(tzinfo=None)
    except (ZoneInfoNotFoundError, ValueError):
        return None
    for time_range in hours["timeRanges"]:
        start, end = _moment(time_range.get("startTime")), _moment(time_range.get("endTime"))
        if start is not None and end is not None and start <= local < end:
            return True
    return False


def _moment(value: Any) -> datetime | None:
    if not isinstance(value, dict):
        return None
    try:
        day = datetime.fromisoformat(str(value.get("date")))
        return day.replace(hour=int(value.get("hour") or 0), minute=int(value.get("minute") or 0))
    except (TypeError, ValueError):
        return None


def unknown_id(id: str) -> ToolError:
    return invalid("id", f"TomTom knows no place with the id {id!r}; send the `id` of a search result")


def compact_place(body: dict[str, Any], id: str, now: datetime) -> dict[str, Any]:
    expect(body, SEARCH_ANSWER)
    results = [r for r in body.get("results") or [] if isinstance(r, dict)]
    if not results:
        raise unknown_id(id)
    place = compact_result(results[0], ASKED)
    place.setdefault("id", id)
    is_open = open_now(results[0], now)
    if is_open is not None:
        place["openNow"] = is_open
    return {"place": place}


async def run(input: PlaceDetailsInput, context: CallContext) -> dict[str, Any]:
    session = context.tomtom
    body = await session.get(*build_request(input, session.backend))
    if input.response_detail == FULL:
        if not body.get("results"):
            raise unknown_id(input.id)
        return body
    return compact_place(body, input.id, now_utc())


TOOL = define_tool(
    name="tomtom-place-details",
    title="TomTom Place Details",
    description="One place by a search result's `id`: phone, website, address, this week's hours, open now.",
    input=PlaceDetailsInput,
    run=run,
)
