"""Fitting app data into the tool result: time and size for the routes of ADR 0008.

For each made-up route (tests/support/long_routes.py: 8,240, 20,571 and 39,414 points, with
traffic, country and toll sections and progress points) it times `deliver` (the whole step from
a tool's answer to the result's text and `_meta`: fitting, encoding, sizes) and prints the median,
the serialised result's characters, the points kept, the error bound reported, and what the app
data would take as is (gzip + base64).

    .venv/bin/python bench/bench_fitting.py [--runs 15]

Reference: the Node server states about 200 ms for a 3,300 km route; the target here is at most
40 ms for 39,414 points.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from protocol.appdata import RESULT_LIMIT, deliver  # noqa: E402
from tests.support.long_routes import ROUTES, route_answer  # noqa: E402
from tools.definition import Answer  # noqa: E402
from tools.shaping.appdata import encode  # noqa: E402
from tools.shaping.routes import compact_routes  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=15)
    runs = parser.parse_args().runs
    print(
        f"| Route points | As is (gzip, base64) | Fitting, median of {runs} | Result chars | Points kept | Max error |"
    )
    print("| ---: | ---: | ---: | ---: | ---: | ---: |")
    for points in sorted(ROUTES):
        body = route_answer(points)
        answer = Answer(compact_routes(body), body, show_ui=True)
        deliver("tomtom-routing", answer, "0" * 16)  # warm-up
        times, delivery = [], None
        for _ in range(runs):
            started = time.perf_counter()
            delivery = deliver("tomtom-routing", answer, "0" * 16)
            times.append((time.perf_counter() - started) * 1000)
        assert delivery is not None and delivery.fitted is not None and delivery.result_chars < RESULT_LIMIT
        report = delivery.fitted.simplification
        kept = f"{report.points:,}" if report else f"{points:,} (all)"
        error = f"{report.max_error_m} m" if report else "—"
        as_is = len(encode(body))
        print(
            f"| {points:,} | {as_is / 1000:,.0f} KB | {statistics.median(times):.1f} ms | {delivery.result_chars:,} "
            f"| {kept} | {error} |"
        )


if __name__ == "__main__":
    main()
