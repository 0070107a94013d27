"""TomTom's attribution is on every result that shows TomTom data, and no other.

Every tool in `build_dispatcher()` is in one of two tables: the TomTom tools of
tests/tools/test_inputs_reach_request.py (`TOOLS`: a TomTom answer and a baseline call), whose
results on every backend that serves them and in every `response_detail` carry the
backend's attribution; or `NO_TOMTOM_DATA` here (a call that shows none), whose results carry
none. A tool in neither fails `test_every_tool_is_in_a_table`, so a new TomTom tool is checked
as soon as it has its row in `TOOLS`.
"""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from protocol.appdata import APP_DATA_KEY
from protocol.service import build_dispatcher
from tests.conftest import DATA, apps_extension, data
from tests.tools.test_inputs_reach_request import TOOLS
from tests.widgets.test_data_viz import GEOJSON, LAYERS, https, over_https  # noqa: F401 (the fixture)
from tools.context import CallContext
from tools.tomtom.backends import Backend

EXPECTED = {Backend.ORBIS: "© TomTom, © OpenStreetMap", Backend.GENESIS: "© TomTom"}
AMSTERDAM, UTRECHT = [4.9041, 52.3676], [5.1215, 52.0907]

NO_TOMTOM_DATA: dict[str, dict[str, Any]] = {
    "tomtom-report-app-status": {
        "tool": "tomtom-routing",
        "outcome": "drawn",
        "source": "inline",
        "duration_ms": 5,
        "features": 2,
    },
    "tomtom-get-map-key": {},
    "tomtom-data-viz": {"geojson": GEOJSON, "layers": LAYERS},
    "tomtom-get-app-data": {
        "tool": "tomtom-data-viz",
        "reason": "host_dropped",
        "arguments": {"data_url": "https://data.example/data.geojson", "layers": LAYERS},
    },
    "tomtom-dynamic-map": {"markers": [{"position": AMSTERDAM, "label": "Dam"}]},  # no route plans: no TomTom call
}
"""Calls whose results show no TomTom data (the widget's own map credits its tiles)."""


def registered() -> list[str]:
    return [tool.name for tool in build_dispatcher().registry]


def test_every_tool_is_in_a_table():
    missing = [name for name in registered() if name not in TOOLS and name not in NO_TOMTOM_DATA]
    assert not missing, (
        f"{missing}: add a row to TOOLS in tests/tools/test_inputs_reach_request.py (a tool that calls TomTom), "
        "or to NO_TOMTOM_DATA here (a call whose result shows no TomTom data)"
    )


def tomtom_cases() -> list[Any]:
    cases = []
    for tool in build_dispatcher().registry:
        if tool.name not in TOOLS:
            continue
        details = tool.input_schema["properties"].get("response_detail", {}).get("enum", [None])
        for backend in Backend:
            if tool.serves(backend):
                for detail in details:
                    cases.append(pytest.param(tool.name, backend, detail, id=f"{tool.name}@{backend.value}:{detail}"))
    return cases


def answer_with(stub, tool: str, backend: Backend) -> None:
    row = TOOLS[tool]
    if "image" in row:  # a picture, not JSON (tomtom-map-image)
        stub.route("GET", ".*", body=(DATA / row["image"]).read_bytes())
        return
    answer = data(row.get("answer_on", {}).get(backend, row["answer"]))
    for method in ("GET", "POST"):
        stub.route(method, ".*", json_body=answer)


@pytest.mark.parametrize(("tool", "backend", "detail"), tomtom_cases())
async def test_a_tomtom_result_carries_the_attribution(stub, context, tool, backend, detail):
    answer_with(stub, tool, backend)
    context.backend = backend
    arguments = {**TOOLS[tool]["baseline"], **({"response_detail": detail} if detail else {})}
    outcome = await build_dispatcher().call(tool, arguments, context)
    assert not outcome.is_error, outcome.text
    assert stub.requests, f"{tool} sent nothing to TomTom"
    assert orjson.loads(outcome.text)["attribution"] == EXPECTED[backend]
    assert outcome.text.count('"attribution"') == 1


@pytest.mark.parametrize("tool", list(NO_TOMTOM_DATA))
async def test_a_result_without_tomtom_data_has_no_attribution(stub, https, tool):  # noqa: F811
    context = over_https(stub, https)
    outcome = await build_dispatcher().call(tool, NO_TOMTOM_DATA[tool], context)
    assert not outcome.is_error, outcome.text
    assert stub.requests == []
    assert "attribution" not in outcome.data and "© TomTom" not in outcome.text


async def test_an_error_shows_no_tomtom_data_and_no_attribution(stub, context):
    stub.route("GET", ".*", status=500, json_body={"error": "boom"})
    outcome = await build_dispatcher().call("tomtom-geocode", {"query": "Dam 1"}, context)
    assert outcome.is_error and "attribution" not in outcome.data


async def test_the_widget_gets_the_same_text_and_the_model_reads_it_once(stub, config):
    answer_with(stub, "tomtom-routing", Backend.ORBIS)
    context = CallContext(config=config, transport="stdio", client_name="pytest")
    outcome = await build_dispatcher().call(
        "tomtom-routing", {"locations": [AMSTERDAM, UTRECHT], "show_ui": True}, context
    )
    assert outcome.meta is not None and outcome.meta[APP_DATA_KEY]
    text = orjson.loads(outcome.text)
    assert text["attribution"] == EXPECTED[Backend.ORBIS]
    assert "attribution" not in outcome.meta  # once per result: in the text, not again in _meta


async def test_over_mcp_the_text_carries_it(stub, config):
    from mcp import Client

    from protocol.server import build_server

    answer_with(stub, "tomtom-geocode", Backend.GENESIS)
    server = build_server(
        build_dispatcher(),
        lambda ctx: CallContext(config=config, transport="stdio", client_name="pytest", backend=Backend.GENESIS),
    )
    async with Client(server, extensions=[apps_extension()]) as client:
        result = await client.call_tool("tomtom-geocode", {"query": "Dam 1"})
    assert orjson.loads(result.content[0].text)["attribution"] == "© TomTom"
