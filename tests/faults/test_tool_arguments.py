"""Property-based: arguments drawn from every registered tool's advertised input schema, valid
and broken, on every backend that serves it (the schema that backend lists), through the
dispatcher against the TomTom stand-in.

Whatever the arguments, a call ends in an answer or a closed-set error, never `internal`, never
`unsupported` (nothing listed is refused) and never an exception; an `invalid_arguments` error
names what is wrong (`argument` or `arguments`, and each of its `problems`, each a path rooted
in a name the caller sent or the schema lists), and a broken input is one it names. The
stand-in answers a generic valid body per tool family (our test answers in tests/data) and 404
to anything else. Hypothesis runs derandomized, with a bounded number of examples per tool.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator
from typing import Any, NamedTuple

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from protocol.service import build_dispatcher
from tests.conftest import DATA, data, make_config
from tests.support.schema_strategies import broken, valid
from tests.support.tomtom_stub import TomTomStub
from tools.context import CallContext
from tools.tomtom.backends import Backend
from tools.tomtom.client import close_shared_clients

DISPATCHER = build_dispatcher()
TOOLS = [
    pytest.param(tool.name, backend, id=f"{tool.name}@{backend.value}")
    for tool in DISPATCHER.registry
    for backend in Backend
    if tool.serves(backend)
]
EXAMPLES = settings(
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.data_too_large],
)
FAMILIES = {
    r".*/geocode/.*": "geocode.json",
    r"/maps/orbis/places/geocode": "geocode_v2.json",  # Orbis Geocoding v2: the query is a parameter
    r".*/reverseGeocode/.*": "reverse_geocode.json",
    r"/maps/orbis/places/reverseGeocode": "reverse_geocode_v2.json",
    r".*/(search|poiSearch|categorySearch|geometrySearch)/.*": "poi_search.json",
    r".*/nearbySearch/.*": "ev_search.json",
    r".*/poiCategories.*": "poi_categories.json",
    r".*/chargingAvailability.*": "charging_availability.json",
    r".*/searchAlongRoute/.*": "along_route.json",
    r".*/calculateRoute/.*": "route.json",
    r"/maps/orbis/routing/routes/calculate": "route_v3.json",  # Orbis Routing v3
    r".*/calculateReachableRange/.*": "reachable_range.json",
    r".*/calculateLongDistanceEVRoute/.*": "ev_route.json",
    r".*/incidentDetails.*": "traffic.json",
    r".*/routing/matrix/.*": "matrix.json",
    r".*/waypointoptimization/.*": "waypoint_optimization.json",
    r".*/place\.json": "place_details.json",
    r".*/flowSegmentData/.*": "flow_segment.json",
    r".*/batch/sync\.json": "batch_geocode.json",
}
"""Path pattern -> the generic valid answer of that family; any other path is the stub's 404."""
IMAGES = {r".*/staticimage": "map_image.png", r".*/display/raster/tile/.*": "map_image.png"}
"""Path pattern -> the image TomTom answers there (tests/data)."""


class Upstream(NamedTuple):
    """Where the stand-in listens (what `make_config` reads; short, for hypothesis's reports)."""

    base_url: str


@pytest.fixture(scope="module")
def family_stub() -> Iterator[Upstream]:
    with TomTomStub(record=False) as stub:
        for pattern, answer in FAMILIES.items():
            for method in ("GET", "POST"):
                stub.route(method, pattern, json_body=data(answer))
        for pattern, image in IMAGES.items():
            stub.route("GET", pattern, body=(DATA / image).read_bytes())
        yield Upstream(stub.base_url)


@pytest.fixture(scope="module")
def loop() -> Iterator[asyncio.AbstractEventLoop]:
    running = asyncio.new_event_loop()
    yield running
    running.run_until_complete(close_shared_clients())  # the loop's pooled TomTom session
    running.close()


def call(loop: asyncio.AbstractEventLoop, stub: Upstream, name: str, backend: Backend, arguments: Any) -> dict:
    context = CallContext(config=make_config(stub), transport="exec", client_name="hypothesis", backend=backend)
    outcome = loop.run_until_complete(DISPATCHER.call(name, arguments, context))
    assert isinstance(outcome.data, dict)
    error = outcome.data.get("error") if outcome.is_error else None
    if error is not None:
        assert error["code"] not in ("internal", "unsupported"), (arguments, error)
        assert error["message"]
    return error or {}


def roots(error: dict[str, Any]) -> set[str]:
    """The input names an `invalid_arguments` error points at (`locations[1][0]` -> `locations`),
    its own and each of its problems'."""
    paths = [error["argument"]] if "argument" in error else list(error.get("arguments", ()))
    for problem in error.get("problems", ()):
        paths += [problem["argument"]] if "argument" in problem else list(problem["arguments"])
    assert paths, error
    return {re.split(r"[.\[]", path, maxsplit=1)[0] for path in paths}


def listed_schema(name: str, backend: Backend) -> dict[str, Any]:
    return dict(DISPATCHER.registry.get(name).listing(backend, widgets=True).input_schema)


@pytest.mark.parametrize(("name", "backend"), TOOLS)
@settings(EXAMPLES, max_examples=30)
@given(data=st.data())
def test_valid_arguments_are_answered_or_refused_by_name(family_stub, loop, name, backend, data):
    schema = listed_schema(name, backend)
    arguments = data.draw(valid(schema), label="arguments")
    error = call(loop, family_stub, name, backend, arguments)
    if error.get("code") == "invalid_arguments":  # a rule between inputs JSON Schema cannot state
        assert roots(error) <= set(schema["properties"]), error


@pytest.mark.parametrize(("name", "backend"), TOOLS)
@settings(EXAMPLES, max_examples=50)
@given(data=st.data())
def test_a_broken_argument_is_refused_naming_it(family_stub, loop, name, backend, data):
    schema = listed_schema(name, backend)
    arguments, culprit, base = data.draw(broken(schema), label="arguments")
    error = call(loop, family_stub, name, backend, arguments)
    assert error.get("code") == "invalid_arguments", (arguments, error)
    named = roots(error)
    assert named <= set(schema["properties"]) | set(arguments), error
    if culprit not in named:  # then the valid draw broke a rule the schema cannot state, alone
        event("the valid draw broke a rule of its own")
        assert call(loop, family_stub, name, backend, base).get("code") == "invalid_arguments", (culprit, error)
