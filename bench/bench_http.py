"""tools/call latency and throughput through the production stack; prints a table.

gunicorn with 2 uvicorn workers serves `/mcp`; TomTom is a stub on loopback serving cached
bytes (tests/support/tomtom_stub.py, in its own process); load comes from `wrk`. Measures
compact `tomtom-geocode` and compact `tomtom-routing` over an 8,000-point route at 2 and 16
connections (p50, p99, calls/s), then worker resident memory after 10,000 calls and again after
a repeat run (growth).

    .venv/bin/python bench/bench_http.py [--seconds 10]

A/B against another checkout of the server (e.g. `git worktree add /tmp/before <commit>`):
compact geocode at 2 connections only, a fresh server per run, the two trees' runs interleaved
(before, this, before, this, ...) so that load from elsewhere hits both alike; each run prints the
load average, the summary gives medians. Both trees run on this virtualenv, each on a SQLite
database migrated by its own code.

    .venv/bin/python bench/bench_http.py --compare /tmp/before [--rounds 3] [--seconds 10]

Reference (the Node server on this kind of machine): geocode 490-650 calls/s, p50 2.5-3.5 ms at
2 connections; routing 100-108 calls/s; 113-129 MB idle, up to 375 MB under load.
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


def route_answer(points: int) -> dict:
    """A TomTom Calculate Route answer with one leg of `points` points (deterministic)."""
    line = [
        {"latitude": round(52.37 + 0.15 * i / points + 0.01 * math.sin(i / 37), 6),
         "longitude": round(4.90 + 8.5 * i / points + 0.01 * math.cos(i / 53), 6)}
        for i in range(points)
    ]  # fmt: skip
    summary = {"lengthInMeters": 657000, "travelTimeInSeconds": 23400, "trafficDelayInSeconds": 420,
               "trafficLengthInMeters": 12000, "departureTime": "2026-11-29T09:00:00+01:00",
               "arrivalTime": "2026-11-29T15:30:00+01:00"}  # fmt: skip
    sections = [{"startPointIndex": 0, "endPointIndex": points - 1, "sectionType": "TRAVEL_MODE", "travelMode": "car"}]
    sections += [{"startPointIndex": i, "endPointIndex": i + 40, "sectionType": "TRAFFIC", "simpleCategory": "JAM",
                  "effectiveSpeedInKmh": 30, "delayInSeconds": 60, "magnitudeOfDelay": 1}
                 for i in range(100, points - 50, 900)]  # fmt: skip
    return {"formatVersion": "0.0.12", "routes": [{"summary": summary, "legs": [{"summary": summary, "points": line}],
                                                   "sections": sections}]}  # fmt: skip


def geocode_answer() -> dict:
    return json.loads((REPO / "tests/data/geocode.json").read_text())


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


def wrk(url: str, body_file: Path, script: Path, connections: int, seconds: int) -> dict:
    done = subprocess.run(
        ["wrk", "-t", str(min(2, connections)), "-c", str(connections), "-d", f"{seconds}s", "--latency",
         "-s", str(script), url],
        capture_output=True, text=True, env={**os.environ, "BODY_FILE": str(body_file)}, check=True,
    )  # fmt: skip
    out = done.stdout

    def latency(pct: str) -> float:
        value, unit = re.search(rf"^\s+{pct}%\s+([\d.]+)(us|ms|s)", out, re.M).groups()
        return float(value) * {"us": 0.001, "ms": 1.0, "s": 1000.0}[unit]

    errors = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    return {
        "p50": latency("50"),
        "p99": latency("99"),
        "rps": float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1)),
        "requests": int(re.search(r"(\d+) requests in", out).group(1)),
        "errors": int(errors.group(1)) if errors else 0,
    }


def worker_rss_mb(master_pid: int) -> list[float]:
    children = subprocess.run(["pgrep", "-P", str(master_pid)], capture_output=True, text=True).stdout.split()
    sizes = []
    for pid in children:
        status = Path(f"/proc/{pid}/status").read_text()
        sizes.append(int(re.search(r"VmRSS:\s+(\d+) kB", status).group(1)) / 1024)
    return sorted(sizes)


def drive(url: str, body_file: Path, script: Path, calls: int) -> None:
    """Send at least `calls` calls (wrk, 16 connections, in bursts of a second)."""
    sent = 0
    while sent < calls:
        sent += wrk(url, body_file, script, 16, 1)["requests"]


def load_average() -> str:
    """`uptime`'s load averages (1, 5, 15 minutes)."""
    return re.search(r"load averages?: (.*)$", subprocess.run(["uptime"], capture_output=True, text=True).stdout
                     .strip()).group(1)  # fmt: skip


def geocode_run(tree: Path, tmp: Path, stub_url: str, seconds: int) -> dict:
    """One fresh gunicorn (2 uvicorn workers) from `tree`: warm-up, then geocode at 2 connections."""
    database = tmp / f"{tree.name}.sqlite3"
    port = free_port()
    env = {**os.environ, "TOMTOM_API_BASE_URL": stub_url, "DOTENV_PATH": "/nonexistent", "WEB_CONCURRENCY": "2",
           "BIND": f"127.0.0.1:{port}", "DATABASE_URL": f"sqlite:///{database}"}  # fmt: skip
    for name in ("DJANGO_STATIC_ROOT", "PYTHONPATH"):
        env.pop(name, None)
    if not database.exists():
        subprocess.run([sys.executable, "manage.py", "migrate", "--no-input", "-v", "0"], cwd=tree, env=env,
                       check=True)  # fmt: skip
    with open(tmp / f"{tree.name}-server.log", "ab") as log:
        server = subprocess.Popen(
            [sys.executable, "-m", "gunicorn", "-c", "gunicorn.conf.py", "tomtom_mcp.asgi:application"],
            cwd=tree, env=env, stdout=log, stderr=subprocess.STDOUT,
        )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(300):
            try:
                if httpx.get(base + "/healthz", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.1)
        url, script, body = base + "/mcp", tmp / "post.lua", tmp / "geocode.json"
        check = httpx.post(url, content=body.read_text(), headers={"Content-Type": "application/json",
                           "Accept": "application/json", "tomtom-api-key": "k"}).json()  # fmt: skip
        assert check["result"]["isError"] is False, check
        wrk(url, body, script, 16, 2)  # warm-up
        return {**wrk(url, body, script, 2, seconds), "load": load_average()}
    finally:
        server.terminate()
        server.wait(20)


def compare(before: Path, rounds: int, seconds: int) -> None:
    before = before.resolve()
    tmp = Path(tempfile.mkdtemp(prefix="bench-http-ab-"))
    routes = [{"method": "GET", "pattern": r"/maps/orbis/places/geocode/.*", "body": json.dumps(geocode_answer())}]
    (tmp / "routes.json").write_text(json.dumps(routes))
    (tmp / "post.lua").write_text(WRK_SCRIPT)
    (tmp / "geocode.json").write_text(call_body("tomtom-geocode", {"query": "Dam 1, Amsterdam"}))
    stub_port = free_port()
    stub = subprocess.Popen(
        [sys.executable, "-m", "tests.support.tomtom_stub", str(stub_port), str(tmp / "routes.json")],
        cwd=REPO, stdout=subprocess.DEVNULL,
    )  # fmt: skip
    trees = {f"before ({before})": before, f"this tree ({REPO})": REPO}
    results: dict[str, list[dict]] = {label: [] for label in trees}
    print("\n### A/B: compact tomtom-geocode at 2 connections, runs interleaved\n")
    print("| run | tree | calls/s | p50 ms | p99 ms | errors | load (1, 5, 15 min) |")
    print("| ---: | --- | ---: | ---: | ---: | ---: | --- |")
    try:
        for run in range(1, rounds + 1):
            for label, tree in trees.items():
                r = geocode_run(tree, tmp, f"http://127.0.0.1:{stub_port}", seconds)
                results[label].append(r)
                print(f"| {run} | {label} | {r['rps']:,.0f} | {r['p50']:.2f} | {r['p99']:.2f} | {r['errors']} "
                      f"| {r['load']} |", flush=True)  # fmt: skip
    finally:
        stub.terminate()
        stub.wait(10)

    def median(values: list[float]) -> float:
        ordered = sorted(values)
        middle = len(ordered) // 2
        return ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2

    print(f"\n| tree | median calls/s ({rounds} runs) | median p50 ms |\n| --- | ---: | ---: |")
    medians = {label: median([r["rps"] for r in runs]) for label, runs in results.items()}
    for label, runs in results.items():
        print(f"| {label} | {medians[label]:,.0f} | {median([r['p50'] for r in runs]):.2f} |")
    first, second = medians.values()
    print(f"\nThis tree vs before: {100 * (second - first) / first:+.1f} % calls/s (budget: no worse than -5 %).")
    shutil.rmtree(tmp, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--compare", type=Path, metavar="TREE", help="A/B geocode against this checkout")
    parser.add_argument("--rounds", type=int, default=3, help="interleaved runs per tree with --compare")
    args = parser.parse_args()
    if shutil.which("wrk") is None:
        sys.exit("wrk is needed: apt-get install wrk")
    if args.compare:
        compare(args.compare, args.rounds, args.seconds)
        return
    tmp = Path(tempfile.mkdtemp(prefix="bench-http-"))
    routes = [
        {"method": "GET", "pattern": r"/maps/orbis/places/geocode/.*", "body": json.dumps(geocode_answer())},
        {"method": "GET", "pattern": r"/maps/orbis/routing/calculateRoute/.*", "body": json.dumps(route_answer(8000))},
    ]
    (tmp / "routes.json").write_text(json.dumps(routes))
    (tmp / "post.lua").write_text(WRK_SCRIPT)
    (tmp / "geocode.json").write_text(call_body("tomtom-geocode", {"query": "Dam 1, Amsterdam"}))
    (tmp / "routing.json").write_text(call_body("tomtom-routing", {"locations": [[4.9041, 52.3676], [13.405, 52.52]]}))
    stub_port, port = free_port(), free_port()
    stub = subprocess.Popen(
        [sys.executable, "-m", "tests.support.tomtom_stub", str(stub_port), str(tmp / "routes.json")],
        cwd=REPO, stdout=subprocess.DEVNULL,
    )  # fmt: skip
    env = {**os.environ, "TOMTOM_API_BASE_URL": f"http://127.0.0.1:{stub_port}", "DOTENV_PATH": "/nonexistent",
           "WEB_CONCURRENCY": "2", "BIND": f"127.0.0.1:{port}"}  # fmt: skip
    log = open(tmp / "server.log", "wb")  # noqa: SIM115
    server = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "-c", "gunicorn.conf.py", "tomtom_mcp.asgi:application"],
        cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT,
    )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(200):
            try:
                if httpx.get(base + "/healthz", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.1)
        url = base + "/mcp"
        script = tmp / "post.lua"
        for name in ("geocode", "routing"):
            check = httpx.post(url, content=(tmp / f"{name}.json").read_text(),
                               headers={"Content-Type": "application/json", "Accept": "application/json",
                                        "tomtom-api-key": "k"}).json()  # fmt: skip
            assert check["result"]["isError"] is False, check
        wrk(url, tmp / "geocode.json", script, 16, 2)  # warm-up
        idle = worker_rss_mb(server.pid)
        rows = []
        for name in ("geocode", "routing"):
            for connections in (2, 16):
                result = wrk(url, tmp / f"{name}.json", script, connections, args.seconds)
                rows.append((name, connections, result))
        drive(url, tmp / "geocode.json", script, 10_000)
        after_first = worker_rss_mb(server.pid)
        drive(url, tmp / "geocode.json", script, 10_000)
        after_repeat = worker_rss_mb(server.pid)
    finally:
        server.terminate()
        stub.terminate()
        server.wait(20)
        log.close()

    print("\n### tools/call through gunicorn + 2 uvicorn workers (TomTom stubbed on loopback, load from wrk)\n")
    print("| tool (compact) | connections | calls/s | p50 ms | p99 ms | errors |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for name, connections, r in rows:
        label = "tomtom-geocode" if name == "geocode" else "tomtom-routing (8,000-point route)"
        print(f"| {label} | {connections} | {r['rps']:,.0f} | {r['p50']:.2f} | {r['p99']:.2f} | {r['errors']} |")
    print("\n| worker RSS (MB) | idle | after 10,000 calls | after a repeat 10,000 | growth |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for i, (a, b, c) in enumerate(zip(idle, after_first, after_repeat, strict=False)):
        print(f"| worker {i + 1} | {a:.1f} | {b:.1f} | {c:.1f} | {c - b:+.1f} |")
    print("\nTargets: geocode >= 750 calls/s and p50 <= 3 ms at 2 connections; routing >= 150 calls/s;"
          " <= 150 MB per worker after 10,000 calls and no growth over a repeat run.")  # fmt: skip


if __name__ == "__main__":
    main()
