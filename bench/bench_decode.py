"""Benchmark of compact routing's body decoding: the whole JSON object, or only what compact needs.

The body is bench_http.py's 8,000-point Calculate Route answer (383 KB, as the stub serves it). Per body, it
times the key scrub's search, then either ``compact_routes(json_object(body))`` (what `next`
did: every point a dict) or ``decode_compact_routes(body)`` (the typed decoder), the decoded
objects freed inside the timing. Times are CPU time of this process (``time.process_time``),
which a shared machine disturbs less than wall time: median of 21 runs after 5 warm-ups, in
3 processes each, interleaved.

Usage: .venv/bin/python bench/bench_decode.py
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

RUNS, WARM_UP, PROCESSES = 21, 5, 3


def measure(which: str) -> float:
    """Median CPU ms per body of one way of decoding, in this process."""
    from bench.bench_http import route_answer
    from tools.shaping.routes import compact_routes, decode_compact_routes
    from tools.tomtom.client import json_object

    content = json.dumps(route_answer(8000)).encode()
    key = b"a-key-that-is-not-in-the-body"

    def whole() -> None:
        assert key not in content
        compact_routes(json_object(content))

    def typed() -> None:
        assert key not in content
        decode_compact_routes(content)

    run = whole if which == "whole" else typed
    for _ in range(WARM_UP):
        run()
    times = []
    for _ in range(RUNS):
        start = time.process_time()
        run()
        times.append((time.process_time() - start) * 1e3)
    return statistics.median(times)


def main() -> None:
    if len(sys.argv) == 2:
        print(measure(sys.argv[1]))
        return
    from bench.bench_http import route_answer

    size = len(json.dumps(route_answer(8000)))
    results: dict[str, list[float]] = {"whole": [], "typed": []}
    for _ in range(PROCESSES):
        for which in results:
            out = subprocess.run([sys.executable, __file__, which], check=True, capture_output=True, text=True)
            results[which].append(float(out.stdout))
    print(f"8,000-point route, {size / 1000:.0f} KB body; CPU ms per body, median of {RUNS} after {WARM_UP} warm-ups")
    print("| decoding | process medians ms | median ms |\n| --- | --- | ---: |")
    for which, label in (("whole", "whole object + compact_routes (next)"), ("typed", "decode_compact_routes")):
        values = results[which]
        print(f"| {label} | {' / '.join(f'{v:.2f}' for v in values)} | {statistics.median(values):.2f} |")


if __name__ == "__main__":
    main()
