"""Benchmark of routing's body decoding: the whole JSON object, or only what the answer needs.

The body is bench_http.py's 8,000-point Calculate Route answer (388 kB, as the stub serves
it to TomTom Maps' v1-style `calculateRoute`). Per body, it times the key scrub's search, then,
for compact, either ``compact_routes(json_object(body))`` (what `next` did: every point a dict)
or ``decode_compact_routes(body)`` (the typed decoder); for ``response_detail: geometry``,
either the whole object through ``compact_routes`` and ``route_features`` or
``decode_route_geometry(body)`` (points read into arrays). The same route as Orbis Routing v3
answers it (``route_answer_v3``, what the stub serves Orbis) is timed through the decoders the
tool uses there: ``decode_compact_routes_v3`` for compact, and for geometry
``decode_routes_and_lines_v3`` and the LineString features (routing's ``_v3_geometry``). The
decoded objects are freed
inside the timing. Times are CPU time of this process (``time.process_time``),
which a shared machine disturbs less than wall time: median of 21 runs after 5 warm-ups, in
3 processes each, interleaved.

Usage: .venv/bin/python bench/bench_decode.py [--before DIR]

With ``--before DIR`` (a checkout of other code, e.g. ``git archive next | tar -x -C DIR``), the
whole-object rows are also timed with DIR's ``tools``: the whole path as it was, geometry
included.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

RUNS, WARM_UP, PROCESSES = 21, 5, 3


def measure(which: str, source: Path) -> float:
    """Median CPU ms per body of one way of decoding, in this process, with `source`'s code."""
    sys.path.insert(0, str(source))
    import orjson

    from bench.bench_http import route_answer
    from tools.shaping.geometry import route_features, with_geometry
    from tools.shaping.routes import compact_routes

    if which.startswith("v3"):  # only this tree's code reads v3 (a `--before` tree times the whole rows)
        from bench.bench_http import route_answer_v3 as route_answer
    content = json.dumps(route_answer(8000)).encode()
    key = b"a-key-that-is-not-in-the-body"

    def whole_object() -> dict:
        assert key not in content  # the scrub's search, then the client's decoding as it was
        body = orjson.loads(content)
        assert isinstance(body, dict)
        return body

    def whole() -> None:
        compact_routes(whole_object())

    def whole_geometry() -> None:
        body = whole_object()
        with_geometry(compact_routes(body), route_features(body))

    def typed() -> None:
        assert key not in content
        decode_compact_routes(content)

    def typed_geometry() -> None:
        assert key not in content
        decode_route_geometry(content)

    def v3() -> None:
        assert key not in content
        decode_compact_routes_v3(content)

    def v3_geometry() -> None:
        assert key not in content
        routing._v3_geometry(content)  # what tomtom-routing decodes an Orbis geometry answer with

    if which.startswith("typed"):
        from tools.shaping.geometry import decode_route_geometry
        from tools.shaping.routes import decode_compact_routes
    if which.startswith("v3"):
        from tools.definitions import routing
        from tools.shaping.routes import decode_compact_routes_v3
    run = {
        "whole": whole,
        "typed": typed,
        "whole_geometry": whole_geometry,
        "typed_geometry": typed_geometry,
        "v3": v3,
        "v3_geometry": v3_geometry,
    }[which]
    for _ in range(WARM_UP):
        run()
    times = []
    for _ in range(RUNS):
        start = time.process_time()
        run()
        times.append((time.process_time() - start) * 1e3)
    return statistics.median(times)


def main() -> None:
    if len(sys.argv) == 4 and sys.argv[1] == "--worker":
        print(measure(sys.argv[2], Path(sys.argv[3])))
        return
    before = Path(sys.argv[2]).resolve() if len(sys.argv) == 3 and sys.argv[1] == "--before" else None
    sys.path.insert(0, str(REPO))
    from bench.bench_http import route_answer, route_answer_v3

    size = len(json.dumps(route_answer(8000)))
    size_v3 = len(json.dumps(route_answer_v3(8000)))
    rows = [
        ("compact: whole object + compact_routes", "whole", REPO),
        ("compact: decode_compact_routes", "typed", REPO),
        ("compact, Orbis v3: decode_compact_routes_v3", "v3", REPO),
        ("geometry: whole object + compact_routes + route_features", "whole_geometry", REPO),
        ("geometry: decode_route_geometry", "typed_geometry", REPO),
        ("geometry, Orbis v3: decode_routes_and_lines_v3 + features", "v3_geometry", REPO),
    ]
    if before is not None:
        rows[0:0] = [("compact: before", "whole", before)]
        rows[4:4] = [("geometry: before", "whole_geometry", before)]
    results: dict[str, list[float]] = {label: [] for label, _, _ in rows}
    for _ in range(PROCESSES):  # interleaved
        for label, which, source in rows:
            command = [sys.executable, __file__, "--worker", which, str(source)]
            out = subprocess.run(command, check=True, capture_output=True, text=True)
            results[label].append(float(out.stdout))
    print(
        f"8,000-point route, {size / 1000:.0f} KB body ({size_v3 / 1000:.0f} KB as Orbis v3); CPU ms per body, "
        f"median of {RUNS} after {WARM_UP} warm-ups, median of {PROCESSES} processes"
    )
    print("| decoding | process medians ms | median ms |\n| --- | --- | ---: |")
    for label, values in results.items():
        print(f"| {label} | {' / '.join(f'{v:.2f}' for v in values)} | {statistics.median(values):.2f} |")


if __name__ == "__main__":
    main()
