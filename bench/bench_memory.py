"""Worker memory after each tool path: resident set (VmRSS) and its high-water mark (VmHWM); prints a table.

gunicorn with one uvicorn worker serves `/mcp` (as `make serve-prod` does); TomTom is the loopback
stub in its own process, answering every family with its recorded answer (tests/data/: Orbis
Geocoding and Reverse Geocoding v2 in their shapes) and a route between two points with an
8,000-point one (Orbis Routing v3's shape, or v1's on TomTom Maps). The worker's VmRSS and
VmHWM (/proc/<pid>/status) are read when it is idle, then after each path has run `--calls`
times: every tool that calls TomTom, compact; the geometry-bearing ones with `response_detail:
"geometry"`; the widget tools with `show_ui`; `tools/list`. The step from one row to the next
is what that path added: the first simplification (search along a route caps the route's line)
used to add 110-135 MB (numba and llvmlite).

    .venv/bin/python bench/bench_memory.py [--calls 20] [--before DIR]

``--before DIR`` also measures the server in DIR (a checkout of the code to compare with, run
with DIR/.venv/bin/python when it exists), interleaved: before, after. Target: the worker's
VmHWM after every path at most 180 MB; the Node reference server (one process) held 171 MB after
every path (peak 353 MB) in the sitting of shared/bench/README.md.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
from bench_http import (
    ORBIS_GEOCODE,
    ORBIS_REVERSE_GEOCODE,
    ORBIS_ROUTE,
    REPO,
    call_body,
    found,
    free_port,
    load_average,
    route_answer,
    route_answer_v3,
    tree_python,
    worker_pids,
)

AMSTERDAM, UTRECHT, BERLIN = [4.9041, 52.3676], [5.1215, 52.0907], [13.405, 52.52]
ROTTERDAM, HAARLEM = [4.4777, 51.9244], [4.6462, 52.3874]
TOMTOM_MAPS = {"tomtom-maps-backend": "tomtom-maps"}
ANSWERS = {
    ORBIS_GEOCODE: "geocode_v2.json",
    ORBIS_REVERSE_GEOCODE: "reverse_geocode_v2.json",
    r".*/geocode/.*": "geocode.json",
    r".*/reverseGeocode/.*": "reverse_geocode.json",
    r".*/(search|poiSearch|categorySearch|geometrySearch)/.*": "poi_search.json",
    r".*/nearbySearch/.*": "ev_search.json",
    r".*/poiCategories.*": "poi_categories.json",
    r".*/chargingAvailability.*": "charging_availability.json",
    r".*/searchAlongRoute/.*": "along_route.json",
    r".*/calculateReachableRange/.*": "reachable_range.json",
    r".*/calculateLongDistanceEVRoute/.*": "ev_route.json",
    r".*/incidentDetails.*": "traffic.json",
    r".*/routing/matrix/.*": "matrix.json",
    r".*/waypointoptimization/.*": "waypoint_optimization.json",
}
"""Path pattern -> the recorded answer of that family (tests/data/): Orbis Geocoding and Reverse
Geocoding v2 answer their own shapes; the older paths (TomTom Maps, and Orbis in code before v2:
a `--before` checkout) theirs. A route between two points is 8,000 points long: Orbis Routing v3's
POST gets `route_answer_v3(8000)`, a v1-style `calculateRoute` (TomTom Maps, older code)
`route_answer(8000)`; one through more stops (the waypoint optimizer's, on TomTom Maps)
tests/data/optimized_route.json."""

ROUTE = {"locations": [AMSTERDAM, BERLIN]}
PATHS: list[tuple[str, str, dict, dict]] = [
    ("tomtom-geocode", "tomtom-geocode", {"query": "Dam 1, Amsterdam"}, {}),
    ("tomtom-reverse-geocode", "tomtom-reverse-geocode", {"position": AMSTERDAM}, {}),
    ("tomtom-fuzzy-search", "tomtom-fuzzy-search", {"query": "coffee"}, {}),
    ("tomtom-poi-search", "tomtom-poi-search", {"query": "pharmacy"}, {}),
    ("tomtom-poi-search nearest", "tomtom-poi-search", {"position": AMSTERDAM, "brandSet": ["BENU"]}, {}),
    ("tomtom-poi-categories", "tomtom-poi-categories", {"filters": ["coffee"]}, {}),
    ("tomtom-area-search", "tomtom-area-search", {"query": "pharmacy", "center": AMSTERDAM, "radius": 1500}, {}),
    ("tomtom-ev-search", "tomtom-ev-search", {"position": AMSTERDAM}, {}),
    (
        "tomtom-search-along-route",
        "tomtom-search-along-route",
        {"origin": AMSTERDAM, "destination": UTRECHT, "query": "petrol"},
        {},
    ),
    ("tomtom-routing (8,000 points)", "tomtom-routing", ROUTE, {}),
    ("tomtom-routing, full", "tomtom-routing", {**ROUTE, "response_detail": "full"}, {}),
    (
        "tomtom-matrix-routing",
        "tomtom-matrix-routing",
        {"origins": [AMSTERDAM, UTRECHT], "destinations": [ROTTERDAM, AMSTERDAM]},
        TOMTOM_MAPS,
    ),
    (
        "tomtom-optimize-waypoints",
        "tomtom-optimize-waypoints",
        {"stops": [AMSTERDAM, UTRECHT, ROTTERDAM, HAARLEM]},
        TOMTOM_MAPS,
    ),
    (
        "tomtom-ev-routing",
        "tomtom-ev-routing",
        {"locations": [AMSTERDAM, BERLIN], "maxChargeInkWh": 75, "currentChargeInkWh": 60},
        {},
    ),
    ("tomtom-reachable-range", "tomtom-reachable-range", {"origin": AMSTERDAM, "timeBudgetInSec": 1800}, {}),
    ("tomtom-traffic", "tomtom-traffic", {"bbox": [4.8, 52.33, 4.95, 52.4]}, {}),
    ("tomtom-routing, geometry", "tomtom-routing", {**ROUTE, "response_detail": "geometry"}, {}),
    (
        "tomtom-reachable-range, geometry",
        "tomtom-reachable-range",
        {"origin": AMSTERDAM, "timeBudgetInSec": 1800, "response_detail": "geometry"},
        {},
    ),
    (
        "tomtom-ev-routing, geometry",
        "tomtom-ev-routing",
        {
            "locations": [AMSTERDAM, BERLIN],
            "maxChargeInkWh": 75,
            "currentChargeInkWh": 60,
            "response_detail": "geometry",
        },
        {},
    ),
    (
        "tomtom-area-search, geometry",
        "tomtom-area-search",
        {"query": "pharmacy", "center": AMSTERDAM, "radius": 1500, "response_detail": "geometry"},
        {},
    ),
    (
        "tomtom-search-along-route, geometry",
        "tomtom-search-along-route",
        {"origin": AMSTERDAM, "destination": UTRECHT, "query": "petrol", "response_detail": "geometry"},
        {},
    ),
    (
        "tomtom-traffic, geometry",
        "tomtom-traffic",
        {"bbox": [4.8, 52.33, 4.95, 52.4], "response_detail": "geometry"},
        {},
    ),
    ("tomtom-routing, show_ui (widget)", "tomtom-routing", {**ROUTE, "show_ui": True}, {}),
    ("tomtom-geocode, show_ui (widget)", "tomtom-geocode", {"query": "Dam 1, Amsterdam", "show_ui": True}, {}),
    ("tomtom-dynamic-map", "tomtom-dynamic-map", {"routePlans": [{"locations": [AMSTERDAM, UTRECHT]}]}, {}),
]
"""(row label, tool, arguments, extra request headers), in the order they run."""
FORMER_TOOLS = {"tomtom-poi-search nearest": "tomtom-nearby"}
"""Row label -> the tool that served that path in older code (a `--before` checkout): the path's
first call is made again with it when the tool of `PATHS` refuses the arguments there."""

HEADERS = {"Content-Type": "application/json", "Accept": "application/json", "tomtom-api-key": "bench-key"}


def memory_mb(pid: int) -> tuple[float, float]:
    """VmRSS and VmHWM of process `pid`, in MB."""
    status = Path(f"/proc/{pid}/status").read_text()
    rss, hwm = (int(found(rf"{key}:\s+(\d+) kB", status).group(1)) / 1024 for key in ("VmRSS", "VmHWM"))
    return rss, hwm


def start(source: Path, python: str, stub_port: int, log: Path) -> tuple[subprocess.Popen, str]:
    """One worker from `source` on a SQLite database (beside `log`) that its own code migrated."""
    port = free_port()
    env = {
        **os.environ,
        "TOMTOM_API_BASE_URL": f"http://127.0.0.1:{stub_port}",
        "DOTENV_PATH": "/nonexistent",
        "WEB_CONCURRENCY": "1",
        "BIND": f"127.0.0.1:{port}",
        "LOG_LEVEL": "WARNING",
        "DATABASE_URL": f"sqlite:///{log.with_suffix('.sqlite3')}",
    }
    env.pop("PYTHONPATH", None)
    subprocess.run([python, "manage.py", "migrate", "--no-input", "-v", "0"], cwd=source, env=env, check=True)
    server = subprocess.Popen(
        [python, "-m", "gunicorn", "-c", "gunicorn.conf.py", "tomtom_mcp.asgi:application"],
        cwd=source,
        env=env,
        stdout=log.open("wb"),
        stderr=subprocess.STDOUT,
    )
    base = f"http://127.0.0.1:{port}"
    for _ in range(600):
        try:
            if httpx.get(base + "/healthz", timeout=1).status_code == 200 and worker_pids(server.pid):
                return server, base
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    server.terminate()
    raise SystemExit(f"the server in {source} did not start; see {log}")


def measure(source: Path, python: str, stub_port: int, calls: int, log: Path) -> list[tuple[str, float, float]]:
    """Rows of (path, VmRSS, VmHWM) for one fresh server from `source`."""
    server, base = start(source, python, stub_port, log)
    try:
        (pid,) = worker_pids(server.pid)
        time.sleep(1.0)
        rows = [("idle (started, no call yet)", *memory_mb(pid))]
        with httpx.Client(timeout=60) as client:
            for label, tool, arguments, headers in PATHS:
                for call in range(calls):
                    answer = client.post(
                        base + "/mcp", content=call_body(tool, arguments), headers={**HEADERS, **headers}
                    ).json()
                    if answer["result"].get("isError") and call == 0 and label in FORMER_TOOLS:
                        tool = FORMER_TOOLS[label]  # older code: the path had a tool of its own
                        answer = client.post(
                            base + "/mcp", content=call_body(tool, arguments), headers={**HEADERS, **headers}
                        ).json()
                        print(f"{source}: row {label!r} called {tool} (that path's tool in this code)")
                    if answer["result"].get("isError"):
                        raise SystemExit(f"{label}: {answer['result']['content'][0]['text'][:300]}")
                rows.append((label, *memory_mb(pid)))
            listing = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
            for _ in range(calls):
                client.post(base + "/mcp", content=listing, headers=HEADERS).raise_for_status()
            rows.append(("tools/list", *memory_mb(pid)))
        return rows
    finally:
        server.terminate()
        server.wait(20)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=20, help="calls of each path")
    parser.add_argument("--before", type=Path, help="a checkout of the code to compare with")
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="bench-memory-"))
    routes = [
        {"method": method, "pattern": pattern, "body": (REPO / "tests/data" / answer).read_text()}
        for pattern, answer in ANSWERS.items()
        for method in ("GET", "POST")
    ]
    route = json.dumps(route_answer(8000))
    routes += [{"method": method, "pattern": r".*/calculateRoute/.*", "body": route} for method in ("GET", "POST")]
    routes += [{"method": "POST", "pattern": ORBIS_ROUTE, "body": json.dumps(route_answer_v3(8000))}]
    optimized = (REPO / "tests/data/optimized_route.json").read_text()  # three stops or more: the optimizer's route
    routes += [
        {"method": method, "pattern": r".*/calculateRoute/[^/]*:[^/]*:[^/]*/.*", "body": optimized}
        for method in ("GET", "POST")
    ]
    (tmp / "routes.json").write_text(json.dumps(routes))
    stub_port = free_port()
    stub = subprocess.Popen(
        [sys.executable, "-m", "tests.support.tomtom_stub", str(stub_port), str(tmp / "routes.json")],
        cwd=REPO,
        stdout=subprocess.DEVNULL,
    )
    sides = {"after": REPO} if args.before is None else {"before": args.before.resolve(), "after": REPO}
    results, loads = {}, {}
    try:
        for side, source in sides.items():
            loads[side] = load_average()
            results[side] = measure(source, tree_python(source), stub_port, args.calls, tmp / f"server-{side}.log")
    finally:
        stub.terminate()

    print(
        f"\n### Worker memory after each path: gunicorn + 1 uvicorn worker, {args.calls} calls of each path, "
        "TomTom stubbed on loopback\n"
    )
    print("Load average (uptime) at the start of each run: " + "; ".join(f"{s}: {v}" for s, v in loads.items()) + "\n")
    head, rule = "| path |", "| --- |"
    for side in sides:
        head += f" {side} RSS MB | {side} step | {side} VmHWM MB |"
        rule += " ---: | ---: | ---: |"
    print(head + "\n" + rule)
    for i, (label, *_) in enumerate(results[next(iter(sides))]):
        row = f"| {label} |"
        for side in sides:
            _, rss, hwm = results[side][i]
            step = rss - results[side][i - 1][1] if i else 0.0
            row += f" {rss:.1f} | {step:+.1f} | {hwm:.1f} |"
        print(row)
    for side in sides:
        peak = max(hwm for _, _, hwm in results[side])
        print(
            f"\n{side}: peak VmHWM {peak:.1f} MB (target: at most 180 MB; the Node server after every path: "
            "171 MB, peak 353 MB)"
        )


if __name__ == "__main__":
    main()
