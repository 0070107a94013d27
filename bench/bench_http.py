"""Server CPU per call, throughput and latency through the production stack; prints tables.

gunicorn with uvicorn workers serves `/mcp` (1 worker, then 2); TomTom is a stub on loopback
serving cached bytes (tests/support/tomtom_stub.py, in its own process) in the shapes of the
Orbis APIs the server calls (Geocoding v2, Routing v3: `orbis_routes`); load comes from `wrk`
over keep-alive connections. For each of compact `tomtom-geocode`, compact `tomtom-routing`
over an 8,000-point route, `tomtom-routing` with `response_detail: geometry`, and `tools/list`,
it prints calls/s, p50/p99, and the server's CPU milliseconds per call: utime + stime from
`/proc/<pid>/stat` of every worker over the run, divided by the calls answered. CPU per call
holds on a noisy shared machine where calls/s does not; each worker's share of that CPU shows
whether connections were spread over the workers: each worker listens on a socket of its own
(`reuse_port`) and the kernel hands each new connection to one by a hash of its addresses, so
two connections land on one worker about half the time; with more than one worker, a geocode
row at `--spread-connections` (default 16) shows the spread over many. `--memory` adds worker
resident memory after 10,000 calls and again after a repeat run (growth).

Upstream connections: the stub keeps them alive, as TomTom does over HTTPS (`keep-alive`), or
answers `Connection: close` and closes each one (`per-call`: a TCP connect per tool call, as
the stand-in of the Node comparison did). Geocode is measured both ways (`--upstream`).

    .venv/bin/python bench/bench_http.py [--seconds 10] [--connections 2] [--workers 1 2] [--memory]
        [--upstream keep-alive per-call] [--reference]

`--reference` adds "per core": the Node reference server's CPU ms per call, recorded beside this
project in one sitting (`NODE_CPU_MS`), over ours, and the goal for each row.

A/B against another checkout (e.g. `git worktree add /tmp/base main`): `--compare TREE` runs
one worker from each tree in turn (before, this, before, this, ...), a fresh server per tree,
round and upstream mode, so that load from elsewhere hits both alike: compact geocode at 2 and
16 connections with per-call and keep-alive upstream connections, then `tools/list` and compact
routing (keep-alive); every run prints its load average, the summary gives medians. Each tree
runs with its own interpreter (TREE/.venv/bin/python when it exists, else this one: an older
checkout's dependencies differ, and this virtualenv's editable install would mix this tree's
modules into it), on a SQLite database migrated by its own code.

    .venv/bin/python bench/bench_http.py --compare /tmp/base [--rounds 3] [--seconds 10] [--reference]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _route_parts(points: int) -> tuple[list[tuple[float, float]], dict, list[int]]:
    """The made-up route both answer shapes word: its line ([lon, lat], deterministic), its
    summary (v2 names) and the first point of each traffic jam along it (41 points long)."""
    line = [
        (
            round(4.90 + 8.5 * i / points + 0.01 * math.cos(i / 53), 6),
            round(52.37 + 0.15 * i / points + 0.01 * math.sin(i / 37), 6),
        )
        for i in range(points)
    ]
    summary = {
        "lengthInMeters": 657000,
        "travelTimeInSeconds": 23400,
        "trafficDelayInSeconds": 420,
        "trafficLengthInMeters": 12000,
        "departureTime": "2026-11-29T09:00:00+01:00",
        "arrivalTime": "2026-11-29T15:30:00+01:00",
    }
    return line, summary, list(range(100, points - 50, 900))


def route_answer(points: int) -> dict:
    """A TomTom Maps (Routing v1) Calculate Route answer with one leg of `points` points: the
    shape `tomtom-maps` answers in and code older than Orbis Routing v3 expects on Orbis."""
    line, summary, jams = _route_parts(points)
    sections = [{"startPointIndex": 0, "endPointIndex": points - 1, "sectionType": "TRAVEL_MODE", "travelMode": "car"}]
    sections += [
        {
            "startPointIndex": i,
            "endPointIndex": i + 40,
            "sectionType": "TRAFFIC",
            "simpleCategory": "JAM",
            "effectiveSpeedInKmh": 30,
            "delayInSeconds": 60,
            "magnitudeOfDelay": 1,
        }
        for i in jams
    ]
    leg = {"summary": summary, "points": [{"latitude": lat, "longitude": lon} for lon, lat in line]}
    return {"formatVersion": "0.0.12", "routes": [{"summary": summary, "legs": [leg], "sections": sections}]}


V3_SUMMARY = {
    "travelTimeInSeconds": "travelDurationInSeconds",
    "trafficDelayInSeconds": "trafficDelayDurationInSeconds",
    "departureTime": "departureDateTime",
    "arrivalTime": "arrivalDateTime",
}
"""The summary members Routing v3 names differently (tests/data/PROVENANCE.md, route_v3.json)."""


def route_answer_v3(points: int) -> dict:
    """The same route as `route_answer`, as Orbis Routing v3 words it (the shape of
    tests/data/route_v3.json): renamed summary members, each leg's line a GeoJSON LineString
    in `path`, and the sections an object by type whose traffic items count along the path."""
    line, summary, jams = _route_parts(points)
    summary = {V3_SUMMARY.get(name, name): value for name, value in summary.items()}
    traffic = [
        {
            "startPathIndex": i,
            "endPathIndex": i + 40,
            "effectiveSpeedInKilometersPerHour": 30,
            "delayDurationInSeconds": 60,
            "delayMagnitude": "minor",
            "iconCategory": "jam",
        }
        for i in jams
    ]
    leg = {"summary": summary, "path": {"type": "LineString", "coordinates": [list(point) for point in line]}}
    return {"routes": [{"summary": summary, "legs": [leg], "sections": {"traffic": traffic}}]}


def tests_data(name: str) -> str:
    """One of the tests' own TomTom answers (tests/data, as `tests.conftest.data` reads them), as text."""
    return (REPO / "tests/data" / name).read_text()


def geocode_answer() -> dict:
    """Orbis Geocoding v2's answer to a geocode (the tests' tests/data/geocode_v2.json)."""
    return json.loads(tests_data("geocode_v2.json"))


ORBIS_GEOCODE = r"/maps/orbis/places/geocode"
"""Orbis Geocoding v2: GET with the query as a parameter (tools/definitions/geocode.py)."""
ORBIS_REVERSE_GEOCODE = r"/maps/orbis/places/reverseGeocode"
"""Orbis Reverse Geocoding v2: GET with `position=lon,lat` (tools/definitions/reverse_geocode.py)."""
ORBIS_ROUTE = r"/maps/orbis/routing/routes/calculate"
"""Orbis Routing v3: POST with the whole request as JSON (tools/definitions/routing.py)."""


def call_body(name: str, arguments: dict) -> str:
    return json.dumps(
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": name, "arguments": arguments}}
    )


WRK_SCRIPT = """
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Accept"] = "application/json, text/event-stream"
wrk.headers["tomtom-api-key"] = "bench-key"
wrk.body = io.open(os.getenv("BODY_FILE")):read()
"""


def found(pattern: str, text: str) -> re.Match[str]:
    """The first match of `pattern` (multi-line) in a tool's or /proc's output; a run whose
    output lacks it stops with that output rather than an AttributeError."""
    match = re.search(pattern, text, re.M)
    if match is None:
        raise SystemExit(f"no {pattern!r} in:\n{text}")
    return match


def wrk(url: str, body_file: Path, script: Path, connections: int, seconds: int) -> dict:
    done = subprocess.run(
        [
            "wrk",
            "-t",
            str(min(2, connections)),
            "-c",
            str(connections),
            "-d",
            f"{seconds}s",
            "--latency",
            "-s",
            str(script),
            url,
        ],
        capture_output=True,
        text=True,
        env={**os.environ, "BODY_FILE": str(body_file)},
        check=True,
    )
    out = done.stdout

    def latency(pct: str) -> float:
        value, unit = found(rf"^\s+{pct}%\s+([\d.]+)(us|ms|s)", out).groups()
        return float(value) * {"us": 0.001, "ms": 1.0, "s": 1000.0}[unit]

    errors = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    return {
        "p50": latency("50"),
        "p99": latency("99"),
        "rps": float(found(r"Requests/sec:\s+([\d.]+)", out).group(1)),
        "requests": int(found(r"(\d+) requests in", out).group(1)),
        "errors": int(errors.group(1)) if errors else 0,
    }


NODE_CPU_MS = {
    ("geocode", 2): 2.80,
    ("geocode", 16): 2.84,
    ("routing", 2): 20.8,
    ("routing", 16): 13.4,
    ("geometry", 2): 18.9,
    ("geometry", 16): 17.4,
    ("list", 2): 5.82,
}
"""The Node reference server's (v1.6.5, one Node 22 process) CPU ms per call by call and
connections, measured beside this project in one sitting on 2026-12-02 (../shared/bench/README.md),
on a machine shared with other jobs (load average up to 15). On a quiet machine every figure,
ours and Node's, is a quarter to a third of that: compare a quiet run of ours with a quiet
figure of Node's (ADR 33's last sitting: geocode 1.435 ms at 2 connections, 1.214 at 16)."""
GOAL_PER_CORE = {"geocode": 1.5, "routing": 3.0, "geometry": 2.0, "list": 5.0}
"""Node's CPU ms per call over ours that each call must reach (issue 36)."""
UPSTREAM = ("per-call", "keep-alive")
LABELS = {
    "geocode": "tomtom-geocode (compact)",
    "routing": "tomtom-routing (compact, 8,000-point route)",
    "geometry": "tomtom-routing (geometry)",
    "list": "tools/list",
}
CLOCK_TICK = os.sysconf("SC_CLK_TCK")


def worker_pids(master_pid: int) -> list[int]:
    children = subprocess.run(["pgrep", "-P", str(master_pid)], capture_output=True, text=True).stdout.split()
    return sorted(int(pid) for pid in children)


def cpu_seconds(pid: int) -> float:
    """utime + stime of process `pid` (all its threads), in seconds."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICK  # fields 14 and 15 of stat(5)


def worker_rss_mb(master_pid: int) -> list[float]:
    sizes = []
    for pid in worker_pids(master_pid):
        status = Path(f"/proc/{pid}/status").read_text()
        sizes.append(int(found(r"VmRSS:\s+(\d+) kB", status).group(1)) / 1024)
    return sorted(sizes)


def load_average() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip().split("load average:")[-1].strip()


def drive(url: str, body_file: Path, script: Path, calls: int) -> None:
    """Send at least `calls` calls (wrk, 16 connections, in bursts of a second)."""
    sent = 0
    while sent < calls:
        sent += wrk(url, body_file, script, 16, 1)["requests"]


def measured(url: str, body_file: Path, script: Path, pids: list[int], connections: int, seconds: int) -> dict:
    """One wrk run with the workers' CPU over it: `cpu_ms` per call and each worker's `shares`."""
    before = [cpu_seconds(pid) for pid in pids]
    result = wrk(url, body_file, script, connections, seconds)
    spent = [cpu_seconds(pid) - b for pid, b in zip(pids, before, strict=True)]
    total = sum(spent)
    result["cpu_ms"] = total * 1000 / max(1, result["requests"])
    result["shares"] = [round(100 * s / total) if total else 0 for s in spent]
    return result


def tree_python(tree: Path) -> str:
    """The interpreter of checkout `tree`: its own virtualenv's when it has one, else this one."""
    own = tree / ".venv" / "bin" / "python"
    return str(own) if own.exists() else sys.executable


def start_server(tmp: Path, stub_url: str, workers: int, tree: Path | None = None) -> tuple[subprocess.Popen, str]:
    """gunicorn with `workers` uvicorn workers, from `tree` (default: the current directory,
    its own database) or, for an A/B, from `tree` with its own interpreter on a SQLite database
    its code migrated."""
    port = free_port()
    python = sys.executable if tree is None else tree_python(tree)
    env = {
        **os.environ,
        "TOMTOM_API_BASE_URL": stub_url,
        "DOTENV_PATH": "/nonexistent",
        "WEB_CONCURRENCY": str(workers),
        "BIND": f"127.0.0.1:{port}",
    }
    if tree is not None:
        database = tmp / f"{tree.name}.sqlite3"
        env["DATABASE_URL"] = f"sqlite:///{database}"
        env.pop("PYTHONPATH", None)
        if not database.exists():
            subprocess.run([python, "manage.py", "migrate", "--no-input", "-v", "0"], cwd=tree, env=env, check=True)
    log = open(tmp / f"server-{(tree or Path.cwd()).name}-{workers}.log", "ab")  # noqa: SIM115
    server = subprocess.Popen(
        [python, "-m", "gunicorn", "-c", "gunicorn.conf.py", "tomtom_mcp.asgi:application"],
        cwd=tree or Path.cwd(),
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    base = f"http://127.0.0.1:{port}"
    for _ in range(300):
        try:
            if httpx.get(base + "/healthz", timeout=1).status_code == 200 and len(worker_pids(server.pid)) == workers:
                return server, base
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    server.terminate()
    server.wait(20)
    raise SystemExit(f"the server in {tree or Path.cwd()} did not start; see {log.name}")


def orbis_routes(route_points: int) -> list[dict]:
    """The stub's routes for the Orbis requests this server sends (geocode, reverse geocode, a
    route of `route_points` points), each answered in its API's current shape; then, so that an
    older checkout (`--compare`, bench_memory's `--before`) is measured on its own requests, the
    requests Orbis code sent before Geocoding v2 and Routing v3, answered in their old shapes.
    The paths do not overlap: each request meets one route."""
    return [
        {"method": "GET", "pattern": ORBIS_GEOCODE, "body": json.dumps(geocode_answer())},
        {"method": "GET", "pattern": ORBIS_REVERSE_GEOCODE, "body": tests_data("reverse_geocode_v2.json")},
        {"method": "POST", "pattern": ORBIS_ROUTE, "body": json.dumps(route_answer_v3(route_points))},
        {"method": "GET", "pattern": r"/maps/orbis/places/geocode/.*", "body": tests_data("geocode.json")},
        {
            "method": "GET",
            "pattern": r"/maps/orbis/places/reverseGeocode/.*",
            "body": tests_data("reverse_geocode.json"),
        },
        {
            "method": "GET",
            "pattern": r"/maps/orbis/routing/calculateRoute/.*",
            "body": json.dumps(route_answer(route_points)),
        },
    ]


def start_stubs(tmp: Path) -> dict[str, tuple[subprocess.Popen, str]]:
    """One stub per upstream mode (`UPSTREAM`), each serving geocode and the 8,000-point route
    (`orbis_routes`); the `per-call` one says `Connection: close` and closes the connection after
    each answer."""
    stubs = {}
    for mode in UPSTREAM:
        close = {"headers": {"Connection": "close"}} if mode == "per-call" else {}
        routes = [{**route, **close} for route in orbis_routes(8000)]
        (tmp / f"routes-{mode}.json").write_text(json.dumps(routes))
        port = free_port()
        stub = subprocess.Popen(
            [sys.executable, "-m", "tests.support.tomtom_stub", str(port), str(tmp / f"routes-{mode}.json")],
            cwd=REPO,
            stdout=subprocess.DEVNULL,
        )
        stubs[mode] = (stub, f"http://127.0.0.1:{port}")
    for _, url in stubs.values():
        for _ in range(100):
            try:
                httpx.get(url + "/", timeout=1)
                break
            except httpx.HTTPError:
                time.sleep(0.1)
    return stubs


def write_bodies(tmp: Path) -> dict[str, str]:
    route = {"locations": [[4.9041, 52.3676], [13.405, 52.52]]}
    bodies = {
        "geocode": call_body("tomtom-geocode", {"query": "Dam 1, Amsterdam"}),
        "routing": call_body("tomtom-routing", route),
        "geometry": call_body("tomtom-routing", {**route, "response_detail": "geometry"}),
        "list": json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
    }
    for name, body in bodies.items():
        (tmp / f"{name}.json").write_text(body)
    (tmp / "post.lua").write_text(WRK_SCRIPT)
    return bodies


def check_and_warm(url: str, tmp: Path, names: list[str], connections: int) -> None:
    """Each call answers without an error; then a second of load each (warm-up)."""
    for name in names:
        headers = {"Content-Type": "application/json", "Accept": "application/json", "tomtom-api-key": "k"}
        check = httpx.post(url, content=(tmp / f"{name}.json").read_text(), headers=headers).json()
        assert "result" in check and not check["result"].get("isError"), check
        wrk(url, tmp / f"{name}.json", tmp / "post.lua", connections, 1)


def per_core(name: str, connections: int, cpu_ms: float) -> str:
    """Node's CPU ms per call over ours, against the goal ("-" where nothing was recorded)."""
    node = NODE_CPU_MS.get((name, connections))
    if node is None:
        return "- | - | -"
    ratio = node / cpu_ms
    return f"{node} | {ratio:.2f}x | {'met' if ratio >= GOAL_PER_CORE[name] else 'NOT met'} (>= {GOAL_PER_CORE[name]}x)"


def median(values: list[float]) -> float:
    ordered = sorted(values)
    middle = len(ordered) // 2
    return ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2


COMPARED = {
    "per-call": [("geocode", 2), ("geocode", 16)],
    "keep-alive": [("geocode", 2), ("geocode", 16), ("list", 2), ("routing", 2)],
}
"""The rows of an A/B, by upstream mode."""


def compare(before: Path, rounds: int, seconds: int, reference: bool) -> None:
    """Interleaved A/B of one worker from `before` and one from this tree (module docstring)."""
    tmp = Path(tempfile.mkdtemp(prefix="bench-http-ab-"))
    write_bodies(tmp)
    stubs = start_stubs(tmp)
    trees = {"before": before.resolve(), "this": REPO}
    results: dict[tuple[str, str, str, int], list[float]] = {}
    print(
        f"\n### A/B, server CPU per call: before = {trees['before']}, this = {REPO}; one uvicorn worker, "
        f"wrk {seconds} s per run, runs interleaved\n"
    )
    print(
        "| round | tree | upstream | call | connections | CPU ms/call | calls/s | p50 ms | errors "
        "| load (1, 5, 15 min) |"
    )
    print("| ---: | --- | --- | --- | ---: | ---: | ---: | ---: | ---: | --- |")
    try:
        for run in range(1, rounds + 1):
            for label, tree in trees.items():
                for mode, rows in COMPARED.items():
                    server, base = start_server(tmp, stubs[mode][1], 1, tree)
                    try:
                        url, pids = base + "/mcp", worker_pids(server.pid)
                        check_and_warm(url, tmp, sorted({name for name, _ in rows}), 16)
                        for name, connections in rows:
                            load = load_average()
                            r = measured(url, tmp / f"{name}.json", tmp / "post.lua", pids, connections, seconds)
                            results.setdefault((label, mode, name, connections), []).append(r["cpu_ms"])
                            print(
                                f"| {run} | {label} | {mode} | {LABELS[name]} | {connections} "
                                f"| {r['cpu_ms']:.3f} | {r['rps']:,.0f} | {r['p50']:.2f} | {r['errors']} "
                                f"| {load} |",
                                flush=True,
                            )
                    finally:
                        server.terminate()
                        server.wait(20)
    finally:
        for stub, _ in stubs.values():
            stub.terminate()
    print(f"\n### Medians of {rounds} rounds, CPU ms per call\n")
    head = "| upstream | call | connections | before | this | change |"
    rule = "| --- | --- | ---: | ---: | ---: | ---: |"
    if reference:
        head += " Node | per core before | per core this | goal |"
        rule += " ---: | ---: | ---: | --- |"
    print(head + "\n" + rule)
    for mode, rows in COMPARED.items():
        for name, connections in rows:
            old = median(results[("before", mode, name, connections)])
            new = median(results[("this", mode, name, connections)])
            change = 100 * (new - old) / old
            line = f"| {mode} | {LABELS[name]} | {connections} | {old:.3f} | {new:.3f} | {change:+.1f} % |"
            if reference:
                node = NODE_CPU_MS[(name, connections)]
                goal = GOAL_PER_CORE[name]
                met = "met" if node / new >= goal else "NOT met"
                line += f" {node} | {node / old:.2f}x | {node / new:.2f}x | >= {goal}x: {met} |"
            print(line)
    shutil.rmtree(tmp, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--connections", type=int, default=2)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--memory", action="store_true", help="also measure worker memory over 20,000 calls")
    parser.add_argument("--spread-connections", type=int, default=16, help="connections of the spread row")
    parser.add_argument(
        "--upstream",
        nargs="+",
        choices=UPSTREAM,
        default=list(UPSTREAM),
        help="upstream connection modes for geocode (the other calls: keep-alive)",
    )
    parser.add_argument("--reference", action="store_true", help="per core against the recorded Node figures")
    parser.add_argument("--compare", type=Path, metavar="TREE", help="interleaved A/B against this checkout")
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds per tree with --compare")
    args = parser.parse_args()
    if shutil.which("wrk") is None:
        sys.exit("wrk is needed: apt-get install wrk")
    if args.compare:
        compare(args.compare, args.rounds, args.seconds, args.reference)
        return
    tmp = Path(tempfile.mkdtemp(prefix="bench-http-"))
    bodies = write_bodies(tmp)
    stubs = start_stubs(tmp)
    script = tmp / "post.lua"
    rows: list[tuple[int, str, str, int, dict]] = []
    memory: list[tuple[float, float, float]] = []
    loads = [load_average()]
    try:
        for workers in args.workers:
            for mode in UPSTREAM:
                names = list(bodies) if mode == "keep-alive" else ["geocode"]
                if mode not in args.upstream:
                    names = [name for name in names if name != "geocode"]
                if not names:
                    continue
                server, base = start_server(tmp, stubs[mode][1], workers)
                try:
                    url = base + "/mcp"
                    pids = worker_pids(server.pid)
                    check_and_warm(url, tmp, names, max(2, workers * 2))
                    for name in names:
                        run = measured(url, tmp / f"{name}.json", script, pids, args.connections, args.seconds)
                        rows.append((workers, mode, name, args.connections, run))
                    if "geocode" in names and (workers > 1 or args.reference):
                        spread = measured(
                            url, tmp / "geocode.json", script, pids, args.spread_connections, args.seconds
                        )
                        rows.append((workers, mode, "geocode", args.spread_connections, spread))
                    if args.memory and mode == "keep-alive":
                        idle = worker_rss_mb(server.pid)
                        drive(url, tmp / "geocode.json", script, 10_000)
                        first = worker_rss_mb(server.pid)
                        drive(url, tmp / "geocode.json", script, 10_000)
                        repeat = worker_rss_mb(server.pid)
                        memory += list(zip(idle, first, repeat, strict=False))
                finally:
                    server.terminate()
                    server.wait(20)
            loads.append(load_average())
    finally:
        for stub, _ in stubs.values():
            stub.terminate()

    print(
        f"\n### Server CPU per call: gunicorn + uvicorn workers, TomTom stubbed on loopback, wrk "
        f"{args.connections} connections x {args.seconds} s\n"
    )
    print(f"Load average (uptime) before: {loads[0]}; after each worker count: {'; '.join(loads[1:])}\n")
    head = (
        "| call | upstream | workers | connections | CPU ms/call | calls/s | p50 ms | p99 ms | CPU per worker % "
        "| errors |"
    )
    rule = "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- | ---: |"
    if args.reference:
        head += " Node CPU ms/call | per core | goal |"
        rule += " ---: | ---: | --- |"
    print(head + "\n" + rule)
    for workers, mode, name, connections, r in rows:
        shares = "/".join(str(s) for s in r["shares"])
        line = (
            f"| {LABELS[name]} | {mode} | {workers} | {connections} | {r['cpu_ms']:.2f} | {r['rps']:,.0f} "
            f"| {r['p50']:.2f} | {r['p99']:.2f} | {shares} | {r['errors']} |"
        )
        if args.reference:
            line += f" {per_core(name, connections, r['cpu_ms'] * workers)} |" if workers == 1 else " - | - | - |"
        print(line)
    if memory:
        print("\n| worker RSS (MB) | idle | after 10,000 calls | after a repeat 10,000 | growth |")
        print("| --- | ---: | ---: | ---: | ---: |")
        for i, (a, b, c) in enumerate(memory):
            print(f"| worker {i + 1} | {a:.1f} | {b:.1f} | {c:.1f} | {c - b:+.1f} |")


if __name__ == "__main__":
    main()
