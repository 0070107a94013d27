"""What simplifying costs a worker besides time: no compiler, GEOS only for polygons, no files written.

A fresh interpreter loads the server as a worker does (tomtom_mcp.asgi), caps a long line and then a
polygon; it reports which of the heavy modules it had loaded after each. The package's files are
listed before and after: nothing may be written inside it at run time (a JIT cache once was).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

from tests.conftest import REPO

SCRIPT = """
import json, math, os, sys
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tomtom_mcp.settings")
import tomtom_mcp.asgi
from tools.geometry.simplify import cap_geometry

HEAVY = ("numba", "llvmlite", "shapely")
loaded = [sorted(m for m in HEAVY if m in sys.modules)]
line = [[4.0 + i / 1000, 52.0 + math.sin(i / 7) / 1000] for i in range(5000)]
assert cap_geometry({"type": "LineString", "coordinates": line})[1] is not None
loaded.append(sorted(m for m in HEAVY if m in sys.modules))
ring = [[4.0 + math.cos(a / 300) * (1 + (a % 2) / 50), 52.0 + math.sin(a / 300)] for a in range(1885)]
assert cap_geometry({"type": "Polygon", "coordinates": [[*ring, ring[0]]]})[1] is not None
loaded.append(sorted(m for m in HEAVY if m in sys.modules))
print(json.dumps(loaded))
"""


def files_under(folder):
    return {
        os.path.join(root, name): os.stat(os.path.join(root, name)).st_mtime_ns
        for root, dirs, names in os.walk(folder)
        for name in names
    }


def test_a_worker_loads_no_compiler_loads_geos_for_polygons_only_and_writes_nothing():
    before = files_under(REPO / "tools")
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "DOTENV_PATH": "/nonexistent"}
    done = subprocess.run([sys.executable, "-c", SCRIPT], cwd=REPO, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    at_start, after_line, after_polygon = json.loads(done.stdout.splitlines()[-1])
    assert at_start == [] and after_line == []
    assert after_polygon == ["shapely"]
    assert files_under(REPO / "tools") == before
