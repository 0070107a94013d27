"""Benchmark of the vertex-cap simplifier (tools.geometry.simplify) on five reference lines.

Inputs are the five Features that ``../shared/bench/gen_lines.py`` writes (road_7577,
synthetic_30308, synthetic_90924, zigzag_50000, ring_801); when ../shared is absent, seeded
equivalents are generated here. For each input it times, over 21 runs after warm-up,
``cap_geometry`` + ``json.dumps`` of the Feature (compact separators), and prints a markdown
table beside the reference server's figures (Node 24, same inputs, same kind of machine).
Side columns: ``cap_geometry`` alone, the list-to-array part of it, the same pipeline with
orjson (the server's serialiser), and ``json.dumps`` of the rounded, unsimplified input.

Usage: .venv/bin/python bench/bench_simplify.py
"""

from __future__ import annotations

import json
import math
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

import orjson  # noqa: E402

from tools.geometry.positions import check_positions, round_positions  # noqa: E402
from tools.geometry.simplify import cap_geometry  # noqa: E402

GENERATOR = REPO.parent / "shared" / "bench" / "gen_lines.py"
NAMES = ("road_7577", "synthetic_30308", "synthetic_90924", "zigzag_50000", "ring_801")
REFERENCE = {  # name: (median ms, max_error_m), from ../shared/bench/README.md
    "road_7577": (0.69, 10),
    "synthetic_30308": (1.25, 93),
    "synthetic_90924": (2.96, 690),
    "zigzag_50000": (2.66, 34),
    "ring_801": (0.11, 0),
}
RUNS, WARM_UP = 21, 3
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
        ring.append([round(4.9 + r * math.cos(a) / (DEG_M * math.cos(math.radians(52.37))), 6),
                     round(52.37 + r * math.sin(a) / DEG_M, 6)])  # fmt: skip
    ring.append(ring[0])
    lines = {"road_7577": road, "synthetic_30308": chain(4), "synthetic_90924": chain(12), "zigzag_50000": zigzag}
    features = {n: feature(n, "LineString", c) for n, c in lines.items()}
    features["ring_801"] = feature("ring_801", "Polygon", [ring])
    return features


def feature(name: str, kind: str, coordinates: list[Any]) -> dict[str, Any]:
    return {"type": "Feature", "properties": {"name": name}, "geometry": {"type": kind, "coordinates": coordinates}}


def capped_feature(source: dict[str, Any]) -> dict[str, Any]:
    """Cap the geometry and report the simplification in the Feature's properties."""
    geometry, report = cap_geometry(source["geometry"])
    properties = dict(source["properties"])
    if report is not None:
        properties["simplification"] = report.as_dict()
    return {"type": "Feature", "properties": properties, "geometry": geometry}


def capped_json(source: dict[str, Any]) -> str:
    """What the benchmark times: cap, then ``json.dumps`` with compact separators."""
    return json.dumps(capped_feature(source), separators=(",", ":"))


def capped_orjson(source: dict[str, Any]) -> bytes:
    """The same with orjson, the server's serialiser for answers."""
    return orjson.dumps(capped_feature(source))


def timings_ms(run: Callable[[], object]) -> list[float]:
    for _ in range(WARM_UP):
        run()
    out = []
    for _ in range(RUNS):
        start = time.perf_counter()
        run()
        out.append((time.perf_counter() - start) * 1e3)
    return sorted(out)


def median(values: list[float]) -> float:
    return values[len(values) // 2]


def p95(values: list[float]) -> float:
    return values[math.ceil(0.95 * len(values)) - 1]


def geometry_paths(geometry: dict[str, Any]) -> list[list[Any]]:
    """The lines or rings of a LineString or Polygon."""
    return [geometry["coordinates"]] if geometry["type"] == "LineString" else geometry["coordinates"]


def full_feature(source: dict[str, Any]) -> dict[str, Any]:
    """The input rounded but not simplified (what answering ``full`` serialises)."""
    geometry = source["geometry"]
    rounded = [round_positions(check_positions(path)) for path in geometry_paths(geometry)]
    coordinates = rounded[0] if geometry["type"] == "LineString" else rounded
    return {"type": "Feature", "properties": source["properties"], "geometry": {**geometry, "coordinates": coordinates}}


def main() -> None:
    features, origin = load_inputs()
    print(f"Inputs: {origin}. {RUNS} runs after {WARM_UP} warm-up runs; times in ms.\n")
    print(
        "| Input | Median ms | p95 ms | cap only ms | of which lists to array ms | with orjson ms | Points out "
        "| max_error_m | Output KiB | full: json ms | Reference median ms | Reference max_error_m "
        "| Median / reference |"
    )
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for name in NAMES:
        source = features[name]
        total = timings_ms(lambda source=source: capped_json(source))
        with_orjson = timings_ms(lambda source=source: capped_orjson(source))
        cap_only = timings_ms(lambda source=source: cap_geometry(source["geometry"]))
        paths = geometry_paths(source["geometry"])
        to_array = timings_ms(lambda paths=paths: [check_positions(p) for p in paths])
        full = full_feature(source)
        full_json = timings_ms(lambda full=full: json.dumps(full, separators=(",", ":")))
        geometry, report = cap_geometry(source["geometry"])
        points = report.points if report else sum(map(len, geometry_paths(geometry)))
        error = report.max_error_m if report else 0
        kib = len(capped_json(source).encode()) / 1024
        ref_ms, ref_error = REFERENCE[name]
        print(
            f"| {name} | {median(total):.2f} | {p95(total):.2f} | {median(cap_only):.2f} | {median(to_array):.2f} "
            f"| {median(with_orjson):.2f} | {points:,} | {error} "
            f"| {kib:.1f} | {median(full_json):.2f} | {ref_ms} | {ref_error} | {median(total) / ref_ms:.1f}x |"
        )


if __name__ == "__main__":
    main()
