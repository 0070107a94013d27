"""Soak: worker memory over 20,000 tools/call and after a decompression-bomb burst; prints a table.

gunicorn with 2 uvicorn workers serves `/mcp` (no worker recycling); TomTom is the loopback
stub in its own process, answering the Orbis requests in their APIs' current shapes (Geocoding
and Reverse Geocoding v2, Routing v3: bench_http's `orbis_routes`); load comes from an asyncio
httpx client (exact call counts) at 4 keep-alive connections, cycling through compact
`tomtom-geocode`, `tomtom-reverse-geocode`, `tomtom-fuzzy-search` and `tomtom-routing` calls.
Resident memory (VmRSS) of each worker is printed after warm-up, every 5,000 calls, after a
burst of 100 calls whose TomTom answer is a gzip bomb (a `tomtom-fuzzy-search` for "bomb", the
query being in the request's path; 200 KB inflating to 200 MiB; the client stops at
TOMTOM_MAX_DECODED_BYTES and answers `malformed`), and after 5,000 more calls.

    .venv/bin/python bench/bench_soak.py [--calls 20000] [--bombs 100] [--step 5000]

Targets: worker RSS flat within 10 MB from the first 5,000 calls to the last, and under 150 MB
per worker throughout (the bomb burst included).
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
from bench_http import REPO, call_body, free_port, orbis_routes, tests_data, worker_rss_mb

sys.path.insert(0, str(REPO))
from tests.support.faults import gzip_bomb

ORBIS_PLACES = "/maps/orbis/places"

STEP = 5_000
CONNECTIONS = 4

HEADERS = {"Content-Type": "application/json", "Accept": "application/json", "tomtom-api-key": "bench-key"}


def drive(url: str, bodies: list[str], calls: int, expect: str = "ok") -> None:
    """Send exactly `calls` calls over CONNECTIONS keep-alive connections, cycling through
    `bodies`; every answer must be a JSON-RPC result whose tool outcome is `expect`."""

    async def run() -> None:
        limits = httpx.Limits(max_connections=CONNECTIONS, max_keepalive_connections=CONNECTIONS)
        async with httpx.AsyncClient(limits=limits, timeout=60, headers=HEADERS) as client:
            counter = iter(range(calls))

            async def connection() -> None:
                for n in counter:
                    response = await client.post(url, content=bodies[n % len(bodies)])
                    if response.status_code != 200 or outcome(response.json()) != expect:
                        raise SystemExit(f"call {n}: {response.status_code} {response.text[:300]}")

            await asyncio.gather(*(connection() for _ in range(CONNECTIONS)))

    asyncio.run(run())


def outcome(answer: dict) -> str:
    result = answer["result"]
    return json.loads(result["content"][0]["text"]).get("error", {}).get("code", "ok")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=20_000)
    parser.add_argument("--bombs", type=int, default=100)
    parser.add_argument("--step", type=int, default=STEP, help="print RSS after every STEP calls")
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="bench-soak-"))
    search = f"{ORBIS_PLACES}/search"
    bomb = {  # a search: its query is in the path the stub matches (Geocoding v2 sends it as a parameter)
        "method": "GET",
        "pattern": rf"{search}/bomb\.json",
        "headers": {"Content-Encoding": "gzip"},
        "body_base64": base64.b64encode(gzip_bomb(200 * 2**20)).decode(),
    }
    fuzzy = {"method": "GET", "pattern": rf"{search}/.*", "body": tests_data("poi_search.json")}
    routes = [bomb, fuzzy, *orbis_routes(2000)]
    (tmp / "routes.json").write_text(json.dumps(routes[::-1]))  # the stub's newest route wins: bomb last
    calls = {
        "geocode": call_body("tomtom-geocode", {"query": "Dam 1, Amsterdam"}),
        "reverse": call_body("tomtom-reverse-geocode", {"position": [4.89273, 52.37314]}),
        "fuzzy": call_body("tomtom-fuzzy-search", {"query": "pharmacy"}),
        "routing": call_body("tomtom-routing", {"locations": [[4.9041, 52.3676], [13.405, 52.52]]}),
        "bomb": call_body("tomtom-fuzzy-search", {"query": "bomb"}),
    }
    mix = [calls[name] for name in ("geocode", "reverse", "fuzzy", "routing")]
    stub_port, port = free_port(), free_port()
    stub = subprocess.Popen(
        [sys.executable, "-m", "tests.support.tomtom_stub", str(stub_port), str(tmp / "routes.json")],
        cwd=REPO,
        stdout=subprocess.DEVNULL,
    )
    env = {
        **os.environ,
        "TOMTOM_API_BASE_URL": f"http://127.0.0.1:{stub_port}",
        "DOTENV_PATH": "/nonexistent",
        "WEB_CONCURRENCY": "2",
        "BIND": f"127.0.0.1:{port}",
        "GUNICORN_MAX_REQUESTS": "0",
        "LOG_LEVEL": "WARNING",
    }
    log = open(tmp / "server.log", "wb")  # noqa: SIM115
    server = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "-c", "gunicorn.conf.py", "tomtom_mcp.asgi:application"],
        cwd=REPO,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    base = f"http://127.0.0.1:{port}"
    url = base + "/mcp"
    rows: list[tuple[str, list[float]]] = []
    try:
        for _ in range(300):
            try:
                if httpx.get(base + "/healthz", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.1)
        for name, body in calls.items():
            drive(url, [body], 1, expect="malformed" if name == "bomb" else "ok")
        drive(url, mix, 1_000)  # warm-up
        rows.append(("after warm-up (1,000 calls)", worker_rss_mb(server.pid)))
        sent = 0
        started = time.monotonic()
        while sent < args.calls:
            drive(url, mix, args.step)
            sent += args.step
            rows.append((f"after {sent:,} calls", worker_rss_mb(server.pid)))
        seconds = time.monotonic() - started
        drive(url, [calls["bomb"]], args.bombs, expect="malformed")
        rows.append((f"after a burst of {args.bombs} bomb answers", worker_rss_mb(server.pid)))
        drive(url, mix, args.step)
        rows.append((f"after {sent + args.step:,} calls (bombs not counted)", worker_rss_mb(server.pid)))
    finally:
        server.terminate()
        stub.terminate()
        server.wait(20)
        log.close()
    tracebacks = (tmp / "server.log").read_text(errors="replace").count("Traceback")

    workers = len(rows[0][1])
    print(f"\n### Soak: {sent:,} tools/call through gunicorn + {workers} uvicorn workers at {CONNECTIONS} connections")
    print(f"({sent / seconds:,.0f} calls/s; TomTom stubbed on loopback; load from an asyncio httpx client)\n")
    print("| worker RSS (MB) | " + " | ".join(f"worker {i + 1}" for i in range(workers)) + " |")
    print("| --- |" + " ---: |" * workers)
    for label, sizes in rows:
        print(f"| {label} | " + " | ".join(f"{size:.1f}" for size in sizes) + " |")
    first = rows[1][1]
    last = rows[-3][1]
    growth = max(b - a for a, b in zip(first, last, strict=False))
    peak = max(max(sizes) for _, sizes in rows)
    print(f"\nGrowth from {args.step:,} calls to {sent:,}: {growth:+.1f} MB (target: within 10 MB);")
    print(f"largest worker: {peak:.1f} MB (target: under 150 MB); tracebacks in the server log: {tracebacks}.")


if __name__ == "__main__":
    main()
