"""Server CPU per call, throughput and latency through the production stack; prints tables.

gunicorn with uvicorn workers serves `/mcp` (1 worker, then 2); TomTom is a stub on loopback
serving cached bytes (tests/support/tomtom_stub.py, in its own process); load comes from `wrk`
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

    .venv/bin/python bench/bench_http.py [--seconds 10] [--connections 2] [--workers 1 2] [--memory]

The Node reference server (v1.6.5, one process) on this kind of machine, same stub, in one
sitting: 2.18 / 12.4 / 14.1 / 5.51 CPU ms per call (geocode / routing / routing with the line /
tools/list); geocode 490-650 calls/s, routing 100-108 calls/s; 113-129 MB idle.
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


NODE_CPU_MS = {"geocode": 2.18, "routing": 12.4, "geometry": 14.1, "list": 5.51}
"""The Node reference server's CPU ms per call, measured beside this project (shared/bench/README.md)."""
TARGET_CPU_MS = {"geocode": 1.5, "routing": 4.0, "geometry": 7.0, "list": 1.5}
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
        sizes.append(int(re.search(r"VmRSS:\s+(\d+) kB", status).group(1)) / 1024)
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


def start_server(tmp: Path, stub_port: int, workers: int) -> tuple[subprocess.Popen, str]:
    port = free_port()
    env = {**os.environ, "TOMTOM_API_BASE_URL": f"http://127.0.0.1:{stub_port}", "DOTENV_PATH": "/nonexistent",
           "WEB_CONCURRENCY": str(workers), "BIND": f"127.0.0.1:{port}"}  # fmt: skip
    log = open(tmp / f"server-{workers}.log", "wb")  # noqa: SIM115
    server = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "-c", "gunicorn.conf.py", "tomtom_mcp.asgi:application"],
        cwd=Path.cwd(), env=env, stdout=log, stderr=subprocess.STDOUT,
    )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    for _ in range(300):
        try:
            if httpx.get(base + "/healthz", timeout=1).status_code == 200 and len(worker_pids(server.pid)) == workers:
                break
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    return server, base


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--connections", type=int, default=2)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--memory", action="store_true", help="also measure worker memory over 20,000 calls")
    parser.add_argument("--spread-connections", type=int, default=16, help="connections of the spread row")
    args = parser.parse_args()
    if shutil.which("wrk") is None:
        sys.exit("wrk is needed: apt-get install wrk")
    tmp = Path(tempfile.mkdtemp(prefix="bench-http-"))
    routes = [
        {"method": "GET", "pattern": r"/maps/orbis/places/geocode/.*", "body": json.dumps(geocode_answer())},
        {"method": "GET", "pattern": r"/maps/orbis/routing/calculateRoute/.*", "body": json.dumps(route_answer(8000))},
    ]
    (tmp / "routes.json").write_text(json.dumps(routes))
    (tmp / "post.lua").write_text(WRK_SCRIPT)
    route = {"locations": [[4.9041, 52.3676], [13.405, 52.52]]}
    bodies = {
        "geocode": call_body("tomtom-geocode", {"query": "Dam 1, Amsterdam"}),
        "routing": call_body("tomtom-routing", route),
        "geometry": call_body("tomtom-routing", {**route, "response_detail": "geometry"}),
        "list": json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
    }
    for name, body in bodies.items():
        (tmp / f"{name}.json").write_text(body)
    stub_port = free_port()
    stub = subprocess.Popen(
        [sys.executable, "-m", "tests.support.tomtom_stub", str(stub_port), str(tmp / "routes.json")],
        cwd=REPO, stdout=subprocess.DEVNULL,
    )  # fmt: skip
    script = tmp / "post.lua"
    rows: list[tuple[int, str, int, dict]] = []
    memory: list[tuple[float, float, float]] = []
    loads = [load_average()]
    try:
        for workers in args.workers:
            server, base = start_server(tmp, stub_port, workers)
            try:
                url = base + "/mcp"
                pids = worker_pids(server.pid)
                for name, body in bodies.items():
                    check = httpx.post(url, content=body, headers={"Content-Type": "application/json",
                                       "Accept": "application/json", "tomtom-api-key": "k"}).json()  # fmt: skip
                    assert "result" in check and not check["result"].get("isError"), check
                    wrk(url, tmp / f"{name}.json", script, max(2, workers * 2), 1)  # warm-up
                for name in bodies:
                    run = measured(url, tmp / f"{name}.json", script, pids, args.connections, args.seconds)
                    rows.append((workers, name, args.connections, run))
                if workers > 1:
                    spread = measured(url, tmp / "geocode.json", script, pids, args.spread_connections, args.seconds)
                    rows.append((workers, "geocode", args.spread_connections, spread))
                if args.memory:
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
        stub.terminate()

    print(f"\n### Server CPU per call: gunicorn + uvicorn workers, TomTom stubbed on loopback, wrk "
          f"{args.connections} connections x {args.seconds} s\n")  # fmt: skip
    print(f"Load average (uptime) before: {loads[0]}; after: {loads[-1]}\n")
    print("| call | workers | connections | CPU ms/call | Node CPU ms/call | target | calls/s | p50 ms | p99 ms "
          "| CPU per worker % | errors |")  # fmt: skip
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | ---: |")
    for workers, name, connections, r in rows:
        shares = "/".join(str(s) for s in r["shares"])
        print(f"| {LABELS[name]} | {workers} | {connections} | {r['cpu_ms']:.2f} | {NODE_CPU_MS[name]} "
              f"| <= {TARGET_CPU_MS[name]} | {r['rps']:,.0f} | {r['p50']:.2f} | {r['p99']:.2f} | {shares} "
              f"| {r['errors']} |")  # fmt: skip
    if memory:
        print("\n| worker RSS (MB) | idle | after 10,000 calls | after a repeat 10,000 | growth |")
        print("| --- | ---: | ---: | ---: | ---: |")
        for i, (a, b, c) in enumerate(memory):
            print(f"| worker {i + 1} | {a:.1f} | {b:.1f} | {c:.1f} | {c - b:+.1f} |")


if __name__ == "__main__":
    main()
