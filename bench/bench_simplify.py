"""Benchmark of the vertex-cap simplifier (tools.geometry.simplify) on five reference lines.

Inputs are the five Features that ``../shared/bench/gen_lines.py`` writes (road_7577,
synthetic_30308, synthetic_90924, zigzag_50000, ring_801); when ../shared is absent, seeded
equivalents are generated here. What is timed, per input, is what the issue compares with the
reference server: ``cap_geometry`` + the Feature + its JSON (orjson, the server's serialiser).
Each figure is the median of 21 runs after 5 warm-ups in one process, CPU time
(``time.process_time``: a shared machine disturbs it less than wall time), and the table shows
the median of 3 such processes, run interleaved with the "before" code when it is given.

A second figure times the same call on the same Features with their positions already in
numpy arrays, as the server's own tools hand lines over (tools.shaping.geometry decodes TomTom's
points straight into arrays): the difference is the cost of reading Python lists of floats,
which a JSON parser in Python cannot avoid and Node's engine pays almost nothing for.

``--cold`` times instead the first call in a fresh process (a worker's first simplification,
its modules imported as at start-up) against the warm median in that process, per input: the
first may cost at most 50 ms more.

Usage: .venv/bin/python bench/bench_simplify.py [--before DIR] [--cold]

DIR is a checkout of the code to compare with, e.g. ``git worktree add DIR <commit>``; its
``tools`` package is imported instead of this one's in the "before" processes, run by
DIR/.venv/bin/python when it exists (the dependencies of that code, numba included before it
was dropped), else by this interpreter.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

REPO = Path(__file__).resolve().parent.parent
GENERATOR = next(
    (path for up in (REPO.parent, REPO.parent.parent) if (path := up / "shared" / "bench" / "gen_lines.py").is_file()),
    REPO.parent / "shared" / "bench" / "gen_lines.py",
)  # ../shared from the main checkout, ../../shared from a worktree under wt/
NAMES = ("road_7577", "synthetic_30308", "synthetic_90924", "zigzag_50000", "ring_801")
REFERENCE = {  # name: (median ms, max_error_m): ../shared/bench/README.md, the latest side-by-side sitting
    "road_7577": (0.71, 10),
    "synthetic_30308": (1.44, 93),
    "synthetic_90924": (3.49, 690),
    "zigzag_50000": (3.21, 34),
    "ring_801": (0.11, 0),
}
SITTINGS = {  # name: the reference's median in each sitting of ../shared/bench/README.md (first, 12-01, 12-02)
    "road_7577": (0.69, 1.10, 0.71),
    "synthetic_30308": (1.25, 1.61, 1.44),
    "synthetic_90924": (2.96, 3.93, 3.49),
    "zigzag_50000": (2.66, 3.76, 3.21),
    "ring_801": (0.11, 0.13, 0.11),
}
TARGET = 1.5  # within 1.5 times the reference's figure
COLD_LIMIT_MS = 50.0  # a first call may cost this much more than a warm one
RUNS, WARM_UP, PROCESSES = 21, 5, 3
DEG_M = 6_371_008.8 * math.pi / 180


def load_inputs() -> tuple[dict[str, dict[str, Any]], str]:
    """The five Features, and where they came from."""
    if GENERATOR.is_file():
        with tempfile.TemporaryDirectory() as folder:
            subprocess.run([sys.executable, str(GENERATOR), folder], check=True, capture_output=True)
            return {n: json.loads((Path(folder) / f"{n}.json").read_text()) for n in NAMES}, str(GENERATOR)
    return own_inputs(), "seeded equivalents (../shared absent)"


def own_inputs() -> dict[str, dict[str, Any]]:
    """Stand-ins for gen_lines.py: a seeded road-like random walk, chained copies of it, the
    same zigzag and a star-shaped noisy ring."""
    rnd = random.Random(20261129)
    road, heading, lon, lat = [], 0.0, 4.9, 52.37
    for _ in range(7577):
        road.append([round(lon, 6), round(lat, 6)])
        heading += rnd.gauss(0.0, 0.08)
        step = rnd.uniform(40.0, 130.0)
        lat += math.sin(heading) * step / DEG_M
        lon += math.cos(heading) * step / (DEG_M * math.cos(math.radians(lat)))

    def chain(copies: int) -> list[list[float]]:
        dlon = road[-1][0] - road[0][0] + road[1][0] - road[0][0]
        dlat = road[-1][1] - road[0][1] + road[1][1] - road[0][1]
        return [[round(x + k * dlon, 6), round(y + k * dlat, 6)] for k in range(copies) for x, y in road]

    zigzag = [[round(4.0 + i * 1e-4, 6), round(52.0 + (3e-4 if i % 2 else 0.0), 6)] for i in range(50000)]
    ring = []
    for i in range(800):
        a = 2 * math.pi * i / 800
        r = 25000 * (1 + 0.18 * math.sin(3 * a + 0.7) + 0.05 * rnd.uniform(-1, 1))
        ring.append(
            [
                round(4.9 + r * math.cos(a) / (DEG_M * math.cos(math.radians(52.37))), 6),
                round(52.37 + r * math.sin(a) / DEG_M, 6),
            ]
        )
    ring.append(ring[0])
    lines = {"road_7577": road, "synthetic_30308": chain(4), "synthetic_90924": chain(12), "zigzag_50000": zigzag}
    features = {n: feature(n, "LineString", c) for n, c in lines.items()}
    features["ring_801"] = feature("ring_801", "Polygon", [ring])
    return features


def feature(name: str, kind: str, coordinates: list[Any]) -> dict[str, Any]:
    return {"type": "Feature", "properties": {"name": name}, "geometry": {"type": kind, "coordinates": coordinates}}


def timings_ms(run: Callable[[], object]) -> list[float]:
    """CPU ms of ``RUNS`` runs after ``WARM_UP`` (compilation and caches warm), sorted."""
    for _ in range(WARM_UP):
        run()
    out = []
    for _ in range(RUNS):
        start = time.process_time()
        run()
        out.append((time.process_time() - start) * 1e3)
    return sorted(out)


def capper(source: Path) -> Callable[[dict[str, Any]], bytes]:
    """cap + Feature + JSON with the ``tools`` package under ``source``."""
    sys.path.insert(0, str(source))
    from tools.geometry.simplify import cap_geometry

    def capped_json(feature: dict[str, Any]) -> bytes:
        geometry, report = cap_geometry(feature["geometry"])
        properties = dict(feature["properties"])
        if report is not None:
            properties["simplification"] = report.as_dict()
        return orjson.dumps({"type": "Feature", "properties": properties, "geometry": geometry})

    return capped_json


def cold_worker(source: Path, inputs: Path, name: str) -> None:
    """One fresh process: the first call on input ``name``, then the warm median; print JSON."""
    capped_json = capper(source)
    feature = json.loads((inputs / f"{name}.json").read_text())
    start = time.process_time()
    capped_json(feature)
    first = (time.process_time() - start) * 1e3
    print(json.dumps({"first": first, "warm": statistics.median(timings_ms(lambda: capped_json(feature)))}))


def worker(source: Path, inputs: Path) -> None:
    """One process: time every input with the ``tools`` package under ``source``; print JSON."""
    capped_json = capper(source)

    import numpy as np

    def as_arrays(feature: dict[str, Any]) -> dict[str, Any]:
        geometry = feature["geometry"]
        if geometry["type"] == "LineString":
            coordinates: Any = np.array(geometry["coordinates"], dtype=np.float64)
        else:
            coordinates = [np.array(ring, dtype=np.float64) for ring in geometry["coordinates"]]
        return {**feature, "geometry": {"type": geometry["type"], "coordinates": coordinates}}

    results = {}
    for name in NAMES:
        feature = json.loads((inputs / f"{name}.json").read_text())
        times = timings_ms(lambda feature=feature: capped_json(feature))
        arrays = as_arrays(feature)
        array_times = timings_ms(lambda arrays=arrays: capped_json(arrays))
        report = orjson.loads(capped_json(feature))["properties"].get("simplification", {})
        results[name] = {
            "median": statistics.median(times),
            "arrays": statistics.median(array_times),
            "points": report.get("points"),
            "max_error_m": report.get("max_error_m", 0),
            "kib": len(capped_json(feature)) / 1024,
        }
    print(json.dumps(results))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, help="a checkout of the code to compare with")
    parser.add_argument("--cold", action="store_true", help="time the first call in a fresh process")
    parser.add_argument("--worker", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--inputs", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--name", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        (cold_worker(args.worker, args.inputs, args.name) if args.name else worker(args.worker, args.inputs))
        return
    features, origin = load_inputs()
    sides = {"after": REPO} if args.before is None else {"before": args.before.resolve(), "after": REPO}
    with tempfile.TemporaryDirectory() as folder:
        for name, feature in features.items():
            (Path(folder) / f"{name}.json").write_text(json.dumps(feature))
        (cold if args.cold else warm)(sides, Path(folder), origin)


def run(source: Path, *arguments: str) -> Any:
    """This script in a fresh process on ``source``'s code (its own interpreter, if it has one)."""
    from bench_http import tree_python  # the parent only: a worker runs with the tree's own packages

    command = [tree_python(source), __file__, "--worker", str(source), *arguments]
    return json.loads(subprocess.run(command, check=True, capture_output=True, text=True, cwd=source).stdout)


def warm(sides: dict[str, Path], inputs: Path, origin: str) -> None:
    runs: dict[str, list[dict[str, Any]]] = {side: [] for side in sides}
    loads = []
    for _ in range(PROCESSES):  # interleaved: before, after, before, after, ...
        for side, source in sides.items():
            loads.append(f"{side} {load_average()}")
            runs[side].append(run(source, "--inputs", str(inputs)))
    print(
        f"Inputs: {origin}. cap + Feature + JSON (orjson), CPU ms: median of {RUNS} runs after {WARM_UP} "
        f"warm-ups, median of {PROCESSES} processes (each process's median in brackets). The reference's "
        f"figures are its latest sitting (the range over the sittings in brackets).\n"
    )
    print("Load average at the start of each process: " + "; ".join(loads) + "\n")
    head = "| Input | Node (reference) ms |"
    rule = "| --- | ---: |"
    for side in sides:
        head += f" {side} ms | {side} points | {side} max_error_m |"
        rule += " ---: | ---: | ---: |"
    print(head + " after / Node | after from arrays ms | from arrays / Node |\n" + rule + " ---: | ---: | ---: |")
    for name in NAMES:
        ref_ms, _ = REFERENCE[name]
        row = f"| {name} | {ref_ms:.2f} ({min(SITTINGS[name]):.2f}-{max(SITTINGS[name]):.2f}) |"
        for side in sides:
            medians = [run[name]["median"] for run in runs[side]]
            last = runs[side][-1][name]
            spread = " / ".join(f"{m:.2f}" for m in medians)
            row += f" {statistics.median(medians):.2f} ({spread}) | {last['points'] or '-'} | {last['max_error_m']} |"
        after = statistics.median(run[name]["median"] for run in runs["after"])
        arrays = statistics.median(run[name]["arrays"] for run in runs["after"])
        print(f"{row} {after / ref_ms:.1f}x | {arrays:.2f} | {arrays / ref_ms:.1f}x |")
    print(f"\nTarget: after / Node at most {TARGET}x on every input.")


def cold(sides: dict[str, Path], inputs: Path, origin: str) -> None:
    rows: dict[str, dict[str, dict[str, float]]] = {side: {} for side in sides}
    loads = []
    for name in NAMES:  # interleaved: before, after, for each input
        for side, source in sides.items():
            loads.append(f"{name} {side} {load_average()}")
            rows[side][name] = run(source, "--inputs", str(inputs), "--name", name)
    print(
        f"Inputs: {origin}. The first cap + Feature + JSON in a fresh process (its modules imported) against "
        f"the median of {RUNS} after {WARM_UP} warm-ups in the same process, CPU ms.\n"
    )
    print("Load average at the start of each process: " + "; ".join(loads) + "\n")
    head, rule = "| Input |", "| --- |"
    for side in sides:
        head += f" {side} first ms | {side} warm ms | {side} first - warm |"
        rule += " ---: | ---: | ---: |"
    print(head + "\n" + rule)
    for name in NAMES:
        row = f"| {name} |"
        for side in sides:
            first, warm_ms = rows[side][name]["first"], rows[side][name]["warm"]
            row += f" {first:.2f} | {warm_ms:.2f} | {first - warm_ms:+.2f} |"
        print(row)
    print(f"\nTarget: the first call at most {COLD_LIMIT_MS:.0f} ms more than a warm one.")


def load_average() -> str:
    return " ".join(f"{value:.2f}" for value in os.getloadavg())


if __name__ == "__main__":
    main()
