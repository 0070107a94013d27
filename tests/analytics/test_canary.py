"""`manage.py tomtom_canary` against the local TomTom stub serving our recorded answers: a table
and exit 0 when every tool reads its answer, exit 1 and a drift row when one answer changes
shape, exit 2 when TomTom cannot be reached or the key is missing or refused; what it stores and
what /analytics/metrics exports from it; and a canary row for every tool the registry lists."""

from __future__ import annotations

import io
import json
import re
from typing import Any

import pytest
from django.core.management import CommandError, call_command
from prometheus_client.parser import text_string_to_metric_families

from analytics.canary import CanaryResult
from tests.conftest import CANARY_KEY, DATA, data, free_port
from tests.support.tomtom_stub import TomTomStub
from tools.canary import PROBES, NoRequest, Probe
from tools.registry import default_registry
from tools.tomtom.backends import Backend

ORBIS, MAPS = Backend.ORBIS.value, Backend.GENESIS.value
TOKEN = "canary-metrics-token"

ANSWERS: list[tuple[str, str, str]] = [
    # (method, path pattern, tests/data file); later routes win, so the general ones go first.
    ("GET", r".*/search/.*", "poi_search.json"),
    ("GET", r".*/poiSearch/.*", "poi_search.json"),
    ("GET", r".*/geocode(/.*)?", "geocode.json"),
    ("GET", r".*/reverseGeocode(/.*)?", "reverse_geocode.json"),
    ("GET", r".*/place\.json", "place_details.json"),
    ("GET", r".*/poiCategories\.json", "poi_categories.json"),
    ("GET", r".*/nearbySearch/.*", "ev_search.json"),
    ("GET", r".*/chargingAvailability\.json", "charging_availability.json"),
    ("POST", r".*/geometrySearch/.*", "poi_search.json"),
    ("POST", r".*/searchAlongRoute/.*", "along_route.json"),
    ("GET", r".*/calculateRoute/.*", "optimize_any_call.json"),
    ("POST", r".*/calculateLongDistanceEVRoute/.*", "ev_route.json"),
    ("GET", r".*/calculateReachableRange/.*", "reachable_range.json"),
    ("GET", r".*/incidentDetails", "traffic.json"),
    ("GET", r".*/flowSegmentData/.*", "flow_segment.json"),
    ("POST", r"/routing/waypointoptimization/1", "optimize_any_call.json"),
    # Orbis's newer versions, where this checkout's tools ask for them.
    ("GET", r"/maps/orbis/places/geocode(/.*)?", "geocode_v2.json"),
    ("GET", r"/maps/orbis/places/reverseGeocode(/.*)?", "reverse_geocode_v2.json"),
    ("POST", r"/maps/orbis/routing/routes/.*", "route_v3.json"),
]
IMAGES = [("GET", r"/map/1/staticimage"), ("GET", r"/maps/orbis/display/.*")]
ONE_CELL = {
    "data": [cell for cell in data("matrix.json")["data"] if cell["originIndex"] == cell["destinationIndex"] == 0]
}
"""The matrix of the canary's probe: one origin, one destination."""


def checked_on(backend: Backend) -> set[str]:
    """The tools the canary calls on `backend`: those listed there that reach TomTom."""
    return {
        tool.name
        for tool in default_registry()
        if tool.offered_to(backend, True) and isinstance(PROBES[tool.name], Probe)
    }


@pytest.fixture
def tomtom(settings) -> Any:
    with TomTomStub() as stub:
        for method, pattern, name in ANSWERS:
            stub.route(method, pattern, json_body=data(name))
        for method, pattern in IMAGES:
            stub.route(method, pattern, body=(DATA / "map_image.png").read_bytes())
        stub.route("POST", r"/routing/matrix/2", json_body=ONE_CELL)
        settings.TOMTOM_API_BASE_URL = stub.base_url
        settings.TOMTOM_API_KEY = CANARY_KEY
        settings.TOMTOM_TIMEOUT = 5.0
        yield stub


def canary(*args: str) -> tuple[int, str, str]:
    """Run the command: its exit code, its output and its error output."""
    out, err = io.StringIO(), io.StringIO()
    try:
        call_command("tomtom_canary", *args, stdout=out, stderr=err)
    except CommandError as error:
        return error.returncode, out.getvalue(), str(error)
    return 0, out.getvalue(), err.getvalue()


def checks(output: str) -> dict[tuple[str, str], dict[str, Any]]:
    return {(check["tool"], check["backend"]): check for check in json.loads(output)["checks"]}


def scrape(client, settings) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    settings.ANALYTICS_METRICS_TOKEN = TOKEN
    response = client.get("/analytics/metrics", HTTP_AUTHORIZATION=f"Bearer {TOKEN}")
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(response.text)
        for sample in family.samples
        if sample.name.startswith("tomtom_mcp_canary_")
    }


def test_every_listed_tool_has_a_canary_row_and_every_probe_fits_its_tool():
    registry = default_registry()
    assert sorted(tool.name for tool in registry if tool.name not in PROBES) == [], (
        "add a row to tools/canary.py PROBES"
    )
    assert sorted(set(PROBES) - {tool.name for tool in registry}) == [], "a PROBES row names no tool"
    for tool in registry:
        probe = PROBES[tool.name]
        if isinstance(probe, NoRequest):
            assert probe.reason, tool.name
            continue
        arguments = dict(probe.arguments) | ({"id": "528009002822995"} if probe.id_from else {})
        for backend in Backend:
            if tool.offered_to(backend, True):
                tool.parse(arguments, backend=backend)  # raises, naming the argument, when the probe is stale
    place_from = [probe.id_from for probe in PROBES.values() if isinstance(probe, Probe) and probe.id_from]
    names = [tool.name for tool in registry]
    assert all(names.index(source) < names.index("tomtom-place-details") for source in place_from)


@pytest.mark.django_db
def test_every_tool_reads_its_answer_on_both_backends(tomtom):
    code, output, _ = canary()

    assert code == 0
    lines = output.splitlines()
    assert lines[0].split() == ["tool", "backend", "version", "status", "latency", "drift"]
    rows = {(line.split()[0], line.split()[1]): line.split()[3] for line in lines[1:]}
    expected = {(tool, backend.value) for backend in Backend for tool in checked_on(backend)}
    assert rows == dict.fromkeys(expected, "ok")
    assert ("tomtom-traffic-flow", MAPS) in rows and ("tomtom-traffic-flow", ORBIS) not in rows
    assert CANARY_KEY not in output
    assert {request.headers["tomtom-user-agent"].split(" ")[1] for request in tomtom.requests} == {"tomtom-canary"}


@pytest.mark.django_db
def test_the_json_names_each_request_and_version_without_the_key(tomtom):
    code, output, _ = canary("--json")

    found = checks(output)
    assert code == 0
    flow = found[("tomtom-traffic-flow", MAPS)]
    assert flow["requests"] == ["GET /traffic/services/4/flowSegmentData/absolute/10/json"]
    assert flow["version"] == "4"
    assert found[("tomtom-map-image", MAPS)]["requests"] == ["GET /map/1/staticimage"]
    assert found[("tomtom-place-details", ORBIS)]["status"] == "ok"
    for check in found.values():
        assert check["requests"] and all(request.split(" ")[1].startswith("/") for request in check["requests"])
        assert check["latency_ms"] is not None and check["latency_ms"] >= 0
        assert re.fullmatch(r"[0-9]+(,[0-9]+)*", check["version"]), check
    assert CANARY_KEY not in output


@pytest.mark.django_db
def test_one_answer_of_a_wrong_shape_is_drift_and_exits_1(tomtom):
    tomtom.route("GET", r".*/incidentDetails", json_body={"incidents": "x"})

    code, output, error = canary("--json")

    found = checks(output)
    assert code == 1
    assert "tomtom-traffic" in error
    for backend in (ORBIS, MAPS):
        row = found[("tomtom-traffic", backend)]
        assert row["status"] == "drift"
        assert "`incidents` is a string" in row["detail"]
    assert {key for key, check in found.items() if check["status"] != "ok"} == {
        ("tomtom-traffic", ORBIS),
        ("tomtom-traffic", MAPS),
    }


@pytest.mark.django_db
def test_a_refused_version_is_drift_but_a_key_refused_everywhere_is_a_key_problem(tomtom):
    tomtom.route("GET", r".*/incidentDetails", status=404, json_body={"errorText": "Unknown API version"})

    code, output, _ = canary("--json", "--backend", ORBIS)

    traffic = checks(output)[("tomtom-traffic", ORBIS)]
    assert code == 1
    assert traffic["status"] == "drift"
    assert "HTTP 404" in traffic["detail"] and "Unknown API version" in traffic["detail"]

    tomtom.route("GET", r".*", status=403, json_body={"errorText": "Forbidden"})
    tomtom.route("POST", r".*", status=403, json_body={"errorText": "Forbidden"})
    code, output, error = canary("--json", "--backend", ORBIS)

    assert code == 2
    assert {check["status"] for check in checks(output).values()} <= {"key", "skipped"}
    assert "key refused" in error


@pytest.mark.django_db
def test_a_key_refused_for_one_api_only_is_drift(tomtom):
    tomtom.route("GET", r".*/incidentDetails", status=403, json_body={"errorText": "Forbidden"})

    code, output, _ = canary("--json", "--backend", MAPS)

    traffic = checks(output)[("tomtom-traffic", MAPS)]
    assert code == 1
    assert traffic["status"] == "drift"
    assert "key refused for this API only" in traffic["detail"]


@pytest.mark.django_db
def test_tomtom_unreachable_exits_2_and_learns_nothing(settings):
    settings.TOMTOM_API_BASE_URL = f"http://127.0.0.1:{free_port()}"
    settings.TOMTOM_API_KEY = CANARY_KEY

    code, output, error = canary("--json", "--backend", MAPS)

    assert code == 2
    assert "unreachable" in error
    statuses = {check["status"] for check in checks(output).values()}
    assert statuses <= {"unreachable", "skipped"} and "unreachable" in statuses


@pytest.mark.django_db
def test_without_a_key_it_says_so_and_exits_2(settings):
    settings.TOMTOM_API_KEY = None

    code, output, error = canary()

    assert code == 2
    assert "TOMTOM_API_KEY" in error
    assert output == ""
    assert not CanaryResult.objects.exists()


@pytest.mark.django_db
def test_the_rows_and_gauges_keep_the_last_verdict_until_tomtom_answers_again(tomtom, client, settings):
    tomtom.route("GET", r".*/incidentDetails", json_body={"incidents": "x"})
    canary()

    rows = {(row.tool, row.backend): row for row in CanaryResult.objects.all()}
    assert set(rows) == {(tool, b.value) for b in Backend for tool in checked_on(b)}
    drifted = rows[("tomtom-traffic", ORBIS)]
    assert (drifted.status, drifted.drifted) == ("drift", True)
    assert drifted.requests and drifted.answered_at == drifted.checked_at
    assert (rows[("tomtom-geocode", MAPS)].status, rows[("tomtom-geocode", MAPS)].drifted) == ("ok", False)
    samples = scrape(client, settings)
    drift = {labels: value for (name, labels), value in samples.items() if name == "tomtom_mcp_canary_drift"}
    assert drift[(("backend", ORBIS), ("tool", "tomtom-traffic"))] == 1
    assert drift[(("backend", MAPS), ("tool", "tomtom-routing"))] == 0
    assert sum(drift.values()) == 2
    answered = {labels: value for (name, labels), value in samples.items() if "last_run" in name}
    assert answered == {(("backend", b.value),): drifted.answered_at.timestamp() for b in Backend}

    settings.TOMTOM_API_BASE_URL = f"http://127.0.0.1:{free_port()}"  # TomTom gone: nothing learned
    assert canary("--backend", ORBIS)[0] == 2

    again = CanaryResult.objects.get(tool="tomtom-traffic", backend=ORBIS)
    assert (again.status, again.drifted, again.answered_at) == ("unreachable", True, drifted.answered_at)
    assert again.checked_at > drifted.checked_at
    assert scrape(client, settings) == samples


@pytest.mark.django_db
def test_a_key_tomtom_echoes_back_reaches_neither_the_output_nor_the_rows(tomtom):
    tomtom.route("GET", r".*/incidentDetails", status=400, json_body={"errorText": f"bad key={CANARY_KEY} here"})

    code, output, error = canary("--json")

    assert code == 1
    assert "bad key=*** here" in checks(output)[("tomtom-traffic", MAPS)]["detail"]
    stored = list(CanaryResult.objects.values_list("detail", "requests"))
    assert CANARY_KEY not in output + error + json.dumps(stored)
