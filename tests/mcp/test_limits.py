"""A result over MCP_MAX_FULL_CHARS is refused with what to ask for instead."""

import pytest

from protocol.service import build_dispatcher
from tests.conftest import make_config
from tools.context import CallContext
from tools.tomtom.client import ClientSettings

pytestmark = pytest.mark.asyncio
PATH = {"type": "LineString", "coordinates": [[4.9, 52.3], [5.1, 52.1]]}
BIG_ROUTE_V3 = {  # a route over the limit, as Orbis Routing v3 answers it
    "routes": [
        {"summary": {"lengthInMeters": 1, "travelDurationInSeconds": 1}, "legs": [{"path": PATH}], "note": "x" * 5_000}
    ]
}


def small_results(stub) -> CallContext:
    client = ClientSettings(base_url=stub.base_url, total_timeout=5.0, max_retries=0, max_full_chars=2_000)
    return CallContext(config=make_config(stub, client=client), transport="exec", client_name="pytest")


@pytest.mark.parametrize(
    ("tool", "arguments", "path", "instead"),
    [
        (
            "tomtom-routing",
            {"locations": [[4.9, 52.3], [5.1, 52.1]]},
            r"/maps/orbis/routing/.*",
            "`compact` or `geometry`",
        ),
        ("tomtom-geocode", {"query": "Dam"}, r"/maps/orbis/places/geocode", "use `compact` instead"),
    ],
)
async def test_a_full_answer_over_the_limit_names_response_detail(stub, tool, arguments, path, instead):
    for method in ("GET", "POST"):  # Orbis Routing v3 is a POST
        stub.route(method, path, json_body={"results": [], **BIG_ROUTE_V3})
    outcome = await build_dispatcher().call(tool, {**arguments, "response_detail": "full"}, small_results(stub))
    error = outcome.data["error"]
    assert (error["code"], error["argument"]) == ("invalid_arguments", "response_detail")
    assert "over the 2,000 a result may have (MCP_MAX_FULL_CHARS)" in error["message"] and instead in error["message"]


async def test_a_compact_answer_under_the_limit_is_untouched(stub):
    stub.route("POST", r"/maps/orbis/routing/.*", json_body=BIG_ROUTE_V3)
    outcome = await build_dispatcher().call(
        "tomtom-routing", {"locations": [[4.9, 52.3], [5.1, 52.1]]}, small_results(stub)
    )
    assert not outcome.is_error, outcome.text
    assert outcome.data["routes"][0]["start"] == [4.9, 52.3] and "note" not in outcome.text
