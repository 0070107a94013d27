"""tomtom-traffic-flow: Flow Segment Data on TomTom Maps; not offered on Orbis."""

import pytest

from tests.conftest import CANARY_KEY, data
from tools.tomtom.backends import Backend

pytestmark = pytest.mark.asyncio

PATH = "/traffic/services/4/flowSegmentData/absolute/{zoom}/json"
A10 = [4.8799, 52.3386]


async def test_request_and_compact_answer(stub, dispatcher, context):
    stub.route("GET", PATH.format(zoom=12), json_body=data("flow_segment.json"))
    context.backend = Backend.GENESIS
    outcome = await dispatcher.call("tomtom-traffic-flow", {"position": A10, "zoom": 12}, context)
    assert not outcome.is_error, outcome.text
    assert stub.requests[-1].query == {"point": ["52.3386,4.8799"], "unit": ["KMPH"], "key": [CANARY_KEY]}
    assert outcome.data == {
        "flow": {
            "road": "motorway",
            "currentSpeed": 41,
            "freeFlowSpeed": 100,
            "currentTravelTime": 131,
            "freeFlowTravelTime": 54,
            "confidence": 0.96,
            "roadClosure": False,
            "delaySec": 77,
            "from": [4.87302, 52.33843],
            "to": [4.88793, 52.33879],
        },
        "units": {"speed": "km/h", "time": "s"},
    }
    assert len(outcome.text) < 300


async def test_zoom_defaults_to_major_roads(stub, dispatcher, context):
    stub.route("GET", PATH.format(zoom=10), json_body=data("flow_segment.json"))
    context.backend = Backend.GENESIS
    assert not (await dispatcher.call("tomtom-traffic-flow", {"position": A10}, context)).is_error
    assert stub.requests[-1].path == PATH.format(zoom=10)


async def test_a_closed_road_says_so(stub, dispatcher, context):
    body = data("flow_segment.json")
    body["flowSegmentData"].update(roadClosure=True, currentSpeed=0)
    stub.route("GET", PATH.format(zoom=10), json_body=body)
    context.backend = Backend.GENESIS
    flow = (await dispatcher.call("tomtom-traffic-flow", {"position": A10}, context)).data["flow"]
    assert (flow["roadClosure"], flow["currentSpeed"]) == (True, 0)


@pytest.mark.parametrize(
    "body",
    [
        {"something": "else"},
        {"flowSegmentData": {"currentSpeed": "fast"}},
        {"flowSegmentData": {"roadClosure": "no"}},
        {"flowSegmentData": {"coordinates": {"coordinate": [{"latitude": 52.3}]}}},
    ],
)
async def test_bad_data_is_malformed(stub, dispatcher, context, body):
    stub.route("GET", PATH.format(zoom=10), json_body=body)
    context.backend = Backend.GENESIS
    outcome = await dispatcher.call("tomtom-traffic-flow", {"position": A10}, context)
    assert outcome.data["error"]["code"] == "malformed", outcome.text


async def test_on_orbis_it_says_what_to_do_instead(stub, dispatcher, context):
    outcome = await dispatcher.call("tomtom-traffic-flow", {"position": A10}, context)
    error = outcome.data["error"]
    assert (error["code"], error["backend"]) == ("unsupported", "tomtom-orbis-maps")
    assert "tomtom-traffic" in error["message"] and "tomtom-maps-backend: tomtom-maps" in error["message"]
    assert stub.requests == []
