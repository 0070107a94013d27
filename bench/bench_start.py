"""Benchmark of the one-line start: `uvx --from <the built wheel> tomtom-maps-mcp` to the first
`tools/list` answer over stdio, as a desktop client sees it.

Three starts, each a fresh process speaking JSON-RPC on its pipes (initialize, initialized,
tools/list), timed from spawn to the `tools/list` answer:

- cold: an empty uv cache and a new home: uv downloads and installs the dependencies from the
  package index, the server creates and migrates its embedded database;
- first: the same uv cache (its environment built), a new home: the first start of a new user;
- warm: the same cache and home: every later start.

Each row gives the wall time (what the user waits) and the CPU time of the whole process tree
(from `getrusage`, children: uv, Python, the server). The wheel is built first with uv.

Usage: .venv/bin/python bench/bench_start.py [--wheel PATH] [--runs N]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
UV = Path(sys.executable).with_name("uv")
TLS = {name: os.environ[name] for name in ("SSL_CERT_FILE", "SSL_CERT_DIR") if name in os.environ}
"""The machine's certificate authorities, for uv's downloads (not the server's environment)."""
MESSAGES = [
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "bench", "version": "1"},
        },
    },
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
]


def build_wheel(out: Path) -> Path:
    subprocess.run([UV, "build", "--wheel", "--out-dir", out, REPO], check=True, capture_output=True)
    (wheel,) = out.glob("tomtom_maps_mcp-*.whl")
    return wheel


def start(wheel: Path, cache: Path, home: Path) -> tuple[float, float, int]:
    """One start: (wall s, CPU s of the process tree, tools listed)."""
    env = {
        "HOME": str(home),
        "PATH": f"{UV.parent}:/usr/bin:/bin",
        "UV_CACHE_DIR": str(cache),
        "TOMTOM_API_KEY": "bench-key-not-sent",
        **TLS,
    }
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    process = subprocess.Popen(
        [UV, "tool", "run", "--python", sys.executable, "--from", wheel, "tomtom-maps-mcp"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=env,
    )
    assert process.stdin and process.stdout
    process.stdin.write("".join(json.dumps(message) + "\n" for message in MESSAGES))
    process.stdin.flush()
    answer: dict = {}
    while answer.get("id") != 2:
        answer = json.loads(process.stdout.readline())
    wall = time.perf_counter() - started
    process.stdin.close()
    process.wait(60)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, len(answer["result"]["tools"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--wheel", type=Path, help="a built wheel (default: build one with uv)")
    parser.add_argument("--runs", type=int, default=3, help="starts of each kind (default 3)")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-start-"))
    try:
        wheel = args.wheel or build_wheel(work / "dist")
        rows: dict[str, list[tuple[float, float, int]]] = {"cold": [], "first": [], "warm": []}
        for run in range(args.runs):
            cache, home = work / f"cache{run}", work / f"home{run}"
            home.mkdir()
            rows["cold"].append(start(wheel, cache, home))
            second_home = work / f"home{run}b"
            second_home.mkdir()
            rows["first"].append(start(wheel, cache, second_home))
            rows["warm"].append(start(wheel, cache, second_home))
        print(f"Wheel: {wheel.name}, {wheel.stat().st_size / 1024:.0f} KiB. Load average {os.getloadavg()[0]:.2f}.\n")
        print("| start | wall s (median) | wall s (each) | CPU s (median) | tools listed |")
        print("| --- | ---: | --- | ---: | ---: |")
        for kind, results in rows.items():
            walls = [wall for wall, _, _ in results]
            cpus = [cpu for _, cpu, _ in results]
            each = ", ".join(f"{wall:.1f}" for wall in walls)
            wall, cpu = statistics.median(walls), statistics.median(cpus)
            print(f"| {kind} | {wall:.1f} | {each} | {cpu:.1f} | {results[0][2]} |")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
