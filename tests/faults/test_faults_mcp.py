# ruff: noqa: E501 (the table of faults reads best one fault a line)
"""The fault-injecting TomTom stand-in against every tool family, through the MCP endpoint.

Each fault is served to every family at once (the calls run concurrently, so a slow fault costs
one deadline, not one per family); each call must end in the fault's error code, as a tool
error in a 200 JSON-RPC result, and within its deadline. Deadlines are short; elapsed time is
measured only to check that the deadline held, with a generous margin, never to assert speed.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from typing import Any

import pytest
from django.test import AsyncRequestFactory

from protocol.http import HttpSettings, McpEndpoint, build_http_app
from protocol.identity import SessionIds
from protocol.service import build_dispatcher
from tests.conftest import make_config
from tests.support import faults
from tests.support.tomtom_stub import TomTomStub
from tools.tomtom.client import ClientSettings

DEADLINE = 2.0
MARGIN = 3.0
MAX_RETRY_AFTER = 30
MiB = 2**20
AMSTERDAM, UTRECHT, BERLIN = [4.9041, 52.3676], [5.1215, 52.0907], [13.405, 52.52]
TOMTOM_MAPS = {"tomtom-maps-backend": "tomtom-maps"}

FAMILIES: dict[str, tuple[str, dict[str, Any], dict[str, str]]] = {
    "geocode": ("tomtom-geocode", {"query": "Dam 1, Amsterdam"}, {}),
    "reverse geocode": ("tomtom-reverse-geocode", {"position": AMSTERDAM}, {}),
    "fuzzy search": ("tomtom-fuzzy-search", {"query": "coffee"}, {}),
    "POI search": ("tomtom-poi-search", {"query": "pharmacy"}, {}),
    "nearby": ("tomtom-poi-search", {"position": AMSTERDAM, "brandSet": ["BENU"]}, {}),
    "POI categories": ("tomtom-poi-categories", {"filters": ["coffee"]}, {}),
    "area search": ("tomtom-area-search", {"query": "pharmacy", "center": AMSTERDAM, "radius": 1500}, {}),
    "EV search": ("tomtom-ev-search", {"position": AMSTERDAM}, {}),
    "search along route": (
        "tomtom-search-along-route",
        {"origin": AMSTERDAM, "destination": UTRECHT, "query": "petrol"},
        {},
    ),
    "routing": ("tomtom-routing", {"locations": [AMSTERDAM, BERLIN]}, {}),
    "routing, full": ("tomtom-routing", {"locations": [AMSTERDAM, BERLIN], "response_detail": "full"}, {}),
    "matrix routing": ("tomtom-matrix-routing", {"origins": [AMSTERDAM], "destinations": [UTRECHT]}, TOMTOM_MAPS),
    "waypoint optimization": (
        "tomtom-optimize-waypoints",
        {"stops": [AMSTERDAM, UTRECHT, BERLIN]},
        TOMTOM_MAPS,
    ),
    "EV routing": (
        "tomtom-ev-routing",
        {"locations": [AMSTERDAM, BERLIN], "maxChargeInkWh": 75, "currentChargeInkWh": 60},
        {},
    ),
    "reachable range": ("tomtom-reachable-range", {"origin": AMSTERDAM, "timeBudgetInSec": 1800}, {}),
    "traffic": ("tomtom-traffic", {"bbox": [4.8, 52.33, 4.95, 52.4]}, {}),
    "dynamic map": ("tomtom-dynamic-map", {"routePlans": [{"locations": [AMSTERDAM, UTRECHT]}]}, {}),
}
"""Family -> (tool, arguments, request headers): every tool that calls TomTom."""

WRONG_FOR_EVERY_FAMILY = {
    key: "x"
    for key in (
        "results",
        "addresses",
        "poiCategories",
        "routes",
        "reachableRange",
        "incidents",
        "data",
        "optimizedOrder",
        "summary",
        "matrix",
    )
}
"""A 200 answer whose every top-level member a family reads is a string."""


RELAYED = {"routing, full"}
"""Families that relay TomTom's answer as it came (`response_detail: full`): a wrong shape is
theirs to return, not ours to refuse."""


def far_date() -> str:
    return format_datetime(datetime.now(UTC) + timedelta(days=4000), usegmt=True)


def near_date() -> str:
    return format_datetime(datetime.now(UTC) + timedelta(seconds=120), usegmt=True)


# (id, how the stand-in answers, the error code every family must end with[, text of its message])
# A table, one case a line so the cases read down one column: the formatter leaves it as written.
# fmt: off
FAULTS: list[tuple[Any, ...]] = [
    ("429 Retry-After seconds", {"status": 429, "headers": {"Retry-After": "120"}}, "retry_later"),
    ("429 Retry-After zero", {"status": 429, "headers": {"Retry-After": "0"}}, "retry_later"),
    ("429 Retry-After date", {"status": 429, "headers": {"Retry-After": near_date()}}, "retry_later"),
    ("429 Retry-After far date", {"status": 429, "headers": {"Retry-After": far_date()}}, "retry_later"),
    ("429 Retry-After inf", {"status": 429, "headers": {"Retry-After": "inf"}}, "retry_later"),
    ("429 Retry-After 1e400", {"status": 429, "headers": {"Retry-After": "1e400"}}, "retry_later"),
    ("429 Retry-After garbage", {"status": 429, "headers": {"Retry-After": "soon"}}, "retry_later"),
    ("429 no Retry-After", {"status": 429}, "retry_later"),
    ("500", {"status": 500}, "unavailable"),
    ("502", {"status": 502}, "unavailable"),
    ("503", {"status": 503}, "unavailable"),
    ("504", {"status": 504}, "unavailable"),
    ("hang before headers", {"respond": faults.hang_before_headers}, "unavailable", "TOMTOM_TIMEOUT"),
    ("stall mid-body", {"respond": faults.stall_mid_body}, "unavailable", "TOMTOM_TIMEOUT"),
    ("drip-feed", {"respond": lambda: faults.drip_feed(interval=0.05)}, "unavailable", "TOMTOM_TIMEOUT"),
    ("reset", {"respond": faults.reset}, "unavailable"),
    ("invalid JSON", {"body": b'{"results": [1, 2'}, "malformed"),
    ("not UTF-8", {"body": b"\xff\xfe\xfa"}, "malformed"),
    ("an array", {"body": b"[1, 2]"}, "malformed"),
    ("wrong shape", {"json_body": WRONG_FOR_EVERY_FAMILY}, "malformed"),
    ("oversized, Content-Length", {"respond": lambda: faults.oversized(3 * MiB, declare_length=True)}, "malformed", "TOMTOM_MAX_BODY_BYTES"),
    ("oversized, chunked", {"respond": lambda: faults.oversized(3 * MiB)}, "malformed", "TOMTOM_MAX_BODY_BYTES"),
    ("decompression bomb", {"respond": lambda: faults.decompression_bomb(16 * MiB)}, "malformed", "TOMTOM_MAX_DECODED_BYTES"),
]
# fmt: on


@pytest.fixture(scope="module")
def module_stub() -> Iterator[TomTomStub]:
    with TomTomStub(record=False) as stub:
        yield stub


@pytest.fixture(scope="module")
def endpoint(module_stub: TomTomStub) -> McpEndpoint:
    client = ClientSettings(
        base_url=module_stub.base_url,
        total_timeout=DEADLINE,
        max_retries=2,
        backoff=0.01,
        max_retry_after=MAX_RETRY_AFTER,
        max_body_bytes=MiB,
        max_decoded_bytes=MiB,
    )
    settings = HttpSettings(allowed_origins=[], max_body_bytes=MiB, session_ids=SessionIds(["s"]))
    return build_http_app(build_dispatcher(), make_config(module_stub, client=client), settings)


def serve(stub: TomTomStub, answer: dict[str, Any]) -> None:
    stub.clear()
    for method in ("GET", "POST"):
        if "respond" in answer:
            stub.route(method, r".*", respond=answer["respond"]())
        else:
            stub.route(method, r".*", **{"json_body": {}, **answer})


async def call(endpoint: McpEndpoint, tool: str, arguments: dict[str, Any], headers: dict[str, str]) -> Any:
    """A `tools/call` through the endpoint: (the tool's error or answer, HTTP status, seconds)."""
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": tool, "arguments": arguments}}
    request = AsyncRequestFactory().post(
        "/mcp", json.dumps(body), content_type="application/json", headers={"Accept": "application/json", **headers}
    )
    started = time.monotonic()
    response = await endpoint.handle(request)
    elapsed = time.monotonic() - started
    result = json.loads(response.content)["result"]
    return json.loads(result["content"][0]["text"]), result.get("isError", False), response.status_code, elapsed


@pytest.mark.parametrize(
    ("answer", "code", "text"), [pytest.param(*f[1:3], f[3] if len(f) > 3 else None, id=f[0]) for f in FAULTS]
)
async def test_every_family_ends_with_the_fault_code_within_its_deadline(module_stub, endpoint, answer, code, text):
    serve(module_stub, answer)
    names = [name for name in FAMILIES if not (answer.get("json_body") is WRONG_FOR_EVERY_FAMILY and name in RELAYED)]
    outcomes = await asyncio.gather(*(call(endpoint, *FAMILIES[name]) for name in names))
    wrong = {}
    for name, (data, is_error, status, elapsed) in zip(names, outcomes, strict=True):
        error = data.get("error", {})
        if status != 200 or not is_error or error.get("code") != code or elapsed > DEADLINE + MARGIN:
            wrong[name] = (status, error or data, round(elapsed, 1))
        elif code == "retry_later" and not 1 <= error["retry_after"] <= MAX_RETRY_AFTER:
            wrong[name] = ("retry_after out of range", error)
        elif text is not None and text not in error["message"]:
            wrong[name] = (f"the message does not name {text}", error)
    assert wrong == {}
