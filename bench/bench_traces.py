"""Server CPU per call with traces off and on (docs/adr/0035-traces.md); prints a table.

The production stack of bench/bench_http.py (gunicorn, one uvicorn worker, TomTom stubbed on
loopback in its own process, load from `wrk` over keep-alive connections), started once per
setting and measured in interleaved rounds (off, on, sampled out, off, on, ...), since CPU per
call on a shared machine drifts with its load:

- `off`: the default (`TRACES_ENABLED` unset);
- `on`: every call traced (three spans for a geocode: the MCP request, the tool call, the TomTom
  request) and exported over OTLP/HTTP to a collector stand-in on loopback, a process of its own
  that answers 200 and counts the spans' requests; the worker's export thread is in its CPU;
- `sampled out`: on, but `OTEL_TRACES_SAMPLER=always_off` (spans made, none recorded or sent).

CPU ms per call is utime + stime of the worker (every thread) from `/proc/<pid>/stat` over a run,
divided by the calls answered.

    .venv/bin/python bench/bench_traces.py [--seconds 10] [--connections 2] [--rounds 2]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_http import (  # a script beside this one
    ORBIS_GEOCODE,
    REPO,
    WRK_SCRIPT,
    call_body,
    free_port,
    geocode_answer,
    load_average,
    measured,
    start_server,
    worker_pids,
    wrk,
)

COLLECTOR = """
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

received = {"requests": 0, "bytes": 0}

class Handler(BaseHTTPRequestHandler):
    def do_POST(self):
        received["bytes"] += len(self.rfile.read(int(self.headers["Content-Length"])))
        received["requests"] += 1
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_GET(self):
        body = ("%(requests)d %(bytes)d" % received).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass

ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Handler).serve_forever()
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--connections", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    if shutil.which("wrk") is None:
        sys.exit("wrk is needed: apt-get install wrk")
    tmp = Path(tempfile.mkdtemp(prefix="bench-traces-"))
    routes = [{"method": "GET", "pattern": ORBIS_GEOCODE, "body": json.dumps(geocode_answer())}]  # Geocoding v2
    (tmp / "routes.json").write_text(json.dumps(routes))
    (tmp / "post.lua").write_text(WRK_SCRIPT)
    body = tmp / "geocode.json"
    body.write_text(call_body("tomtom-geocode", {"query": "Dam 1, Amsterdam"}))
    stub_port, collector_port = free_port(), free_port()
    collector_url = f"http://127.0.0.1:{collector_port}"
    helpers = [
        subprocess.Popen(
            [sys.executable, "-m", "tests.support.tomtom_stub", str(stub_port), str(tmp / "routes.json")],
            cwd=REPO,
            stdout=subprocess.DEVNULL,
        ),
        subprocess.Popen([sys.executable, "-c", COLLECTOR, str(collector_port)]),
    ]
    settings = {
        "off": {},
        "on": {"TRACES_ENABLED": "true", "OTEL_EXPORTER_OTLP_ENDPOINT": collector_url},
        "sampled out": {
            "TRACES_ENABLED": "true",
            "OTEL_EXPORTER_OTLP_ENDPOINT": collector_url,
            "OTEL_TRACES_SAMPLER": "always_off",
        },
    }
    results: dict[str, list[dict]] = {name: [] for name in settings}
    loads = [load_average()]
    saved = dict(os.environ)
    try:
        for _ in range(args.rounds):
            for name, env in settings.items():
                os.environ.clear()
                os.environ.update({k: v for k, v in saved.items() if not k.startswith(("OTEL_", "TRACES_"))})
                os.environ.update(env)
                server, base = start_server(tmp, f"http://127.0.0.1:{stub_port}", 1)
                try:
                    url = base + "/mcp"
                    check = httpx.post(
                        url,
                        content=body.read_text(),
                        headers={
                            "Content-Type": "application/json",
                            "Accept": "application/json",
                            "tomtom-api-key": "k",
                        },
                    ).json()
                    assert "result" in check and not check["result"].get("isError"), check
                    wrk(url, body, tmp / "post.lua", args.connections, 1)  # warm-up
                    results[name].append(
                        measured(url, body, tmp / "post.lua", worker_pids(server.pid), args.connections, args.seconds)
                    )
                finally:
                    server.terminate()
                    server.wait(20)
        loads.append(load_average())
        exported = httpx.get(collector_url).text.split()
    finally:
        os.environ.clear()
        os.environ.update(saved)
        for helper in helpers:
            helper.terminate()

    print(
        f"\n### Server CPU per tomtom-geocode call, traces off and on: gunicorn, 1 uvicorn worker, wrk "
        f"{args.connections} connections x {args.seconds} s, {args.rounds} interleaved rounds\n"
    )
    print(f"Load average (uptime) before: {loads[0]}; after: {loads[-1]}\n")
    print("| traces | CPU ms/call (each round) | mean | vs off | calls/s (mean) | p50 ms | p99 ms | errors |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    mean = {name: sum(r["cpu_ms"] for r in runs) / len(runs) for name, runs in results.items()}
    for name, runs in results.items():
        each = " / ".join(f"{r['cpu_ms']:.2f}" for r in runs)
        rps = sum(r["rps"] for r in runs) / len(runs)
        p50 = sum(r["p50"] for r in runs) / len(runs)
        p99 = sum(r["p99"] for r in runs) / len(runs)
        errors = sum(r["errors"] for r in runs)
        print(
            f"| {name} | {each} | {mean[name]:.2f} | {mean[name] - mean['off']:+.2f} | {rps:,.0f} | {p50:.2f} "
            f"| {p99:.2f} | {errors} |"
        )
    print(f"\nThe collector stand-in received {exported[0]} OTLP/HTTP export requests ({int(exported[1]):,} bytes).")


if __name__ == "__main__":
    main()
