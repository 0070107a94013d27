# The compiled kernel's functions (tools/geometry/_kernel.c); tools/geometry/compiled.py imports it.
from collections.abc import Buffer, Sequence
from typing import Any

def search(z: Buffer, anchor_end: Buffer, init: Buffer, pops: int, kept: Buffer, seg_err: Buffer, /) -> int: ...
def gaps(lon: Buffer, lat: Buffer, out: Buffer, /) -> None: ...
def vertex_bounds(
    lon: Buffer,
    lat: Buffer,
    kept: Buffer,
    rlon: Buffer,
    rlat: Buffer,
    segs: Buffer,
    gap: Buffer,
    cut: float,
    out: Buffer,
    /,
) -> None: ...
def read_positions(coords: Sequence[Any], /) -> tuple[bytearray, int, bool] | None: ...
