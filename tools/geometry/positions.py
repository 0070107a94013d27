"""Positions: GeoJSON coordinates checked into numpy arrays, and rounded for output.

Semantics
---------
A position is RFC 7946 ``[longitude, latitude]`` or ``[longitude, latitude, altitude]``, as a
list or tuple of real numbers. `check_positions` turns a sequence of them (or an ``(n, 2)`` or
``(n, 3)`` numeric array) into an ``(n, 2)`` float64 array of longitudes and latitudes: an
altitude is checked to be finite and dropped. Anything else raises `MalformedGeometry`, a
``ValueError`` whose message names the first bad position and what is wrong with it.

Output positions are rounded to ``DECIMALS`` (5) decimals, about 1.1 m, and never hold
``-0.0``, so their JSON has at most 5 decimals.

Edge cases
----------
An altitude is dropped; ``-0.000001`` rounds to ``0.0``, not ``-0.0``:

>>> round_positions(check_positions([[4.9000001, 52.37, 12.5], (-0.000001, 1)]))
[[4.9, 52.37], [0.0, 1.0]]

The message names the first bad position and what is wrong with it:

>>> for coords in ([[1, 2], [3, "4"]], [[1, 2, float("nan")]], [[181, 0]], [[1, 2, 3, 4]]):
...     try:
...         check_positions(coords)
...     except MalformedGeometry as error:
...         print(error)
position 1 holds '4', not a number
position 0 [1.0, 2.0, nan]: NaN or infinite value
position 0 [181.0, 0.0]: longitude must be within [-180, 180]
position 0 has 4 values; expected [longitude, latitude(, altitude)]
"""

from __future__ import annotations

import numbers
import struct
from collections.abc import Sequence
from itertools import chain
from typing import Any

import numpy as np

from tools.geometry.compiled import kernel

DECIMALS = 5
"""Decimals kept in output coordinates."""


class MalformedGeometry(ValueError):
    """A geometry or position that is not valid GeoJSON; the message says what and where."""


def check_positions(coords: Any) -> np.ndarray:
    """Validate a sequence of positions into an ``(n, 2)`` float64 array of ``[lon, lat]``.

    Parameters
    ----------
    coords : sequence of [lon, lat] or [lon, lat, alt], or an (n, 2) or (n, 3) numeric array
        The positions; an altitude is checked to be finite and dropped.

    Returns
    -------
    numpy.ndarray
        ``(n, 2)`` float64 longitudes and latitudes (``n`` may be 0).

    Raises
    ------
    MalformedGeometry
        A position that is not 2 or 3 numbers, a NaN or infinite value, a longitude outside
        [-180, 180] or a latitude outside [-90, 90]; the message names the first such position.
    """
    if isinstance(coords, np.ndarray):
        if coords.ndim != 2 or coords.shape[1] not in (2, 3) or coords.dtype.kind not in "iuf":
            raise MalformedGeometry(
                f"expected an (n, 2) or (n, 3) numeric array of positions, got {coords.dtype} {coords.shape}"
            )
        table = coords.astype(np.float64, copy=False)
    elif isinstance(coords, list | tuple):
        if not coords:
            return np.empty((0, 2))
        read = None if kernel is None else kernel.read_positions(coords)
        if read is not None:  # all floats or ints, and checked
            buffer, width, valid = read
            table = np.frombuffer(buffer).reshape(len(coords), width)
            if not valid:
                raise MalformedGeometry(_describe_values(table))
            return table[:, :2]
        table = _table(coords)
    else:
        raise MalformedGeometry(f"expected an array of positions, got {shown(coords)}")
    xy = table[:, :2]
    if not (np.abs(xy) <= (180.0, 90.0)).all() or (table.shape[1] == 3 and not np.isfinite(table).all()):
        raise MalformedGeometry(_describe_values(table))
    return xy


def round_positions(coords: np.ndarray) -> list[list[float]]:
    """Positions rounded to 5 decimals, as lists whose JSON has at most 5 decimals (no ``-0.0``)."""
    return rounded(coords).tolist()


def rounded(xy: np.ndarray) -> np.ndarray:
    """Positions rounded to 5 decimals, as a new array without ``-0.0``."""
    return np.round(xy, DECIMALS) + 0.0  # + 0.0 turns -0.0 into 0.0


def _table(coords: Sequence[Any]) -> np.ndarray:
    """Positions as an (n, 2) or (n, 3) float64 table, via C-level passes only (``struct``
    packs the flattened values in one call: the cheapest way from Python floats to a buffer
    without the compiled kernel, whose ``read_positions`` takes positions that are all two, or
    all three, floats or ints, and leaves anything else to this)."""
    try:
        widths = np.frombuffer(bytes(map(len, coords)), dtype=np.uint8)
    except (TypeError, ValueError):  # a position without a length, or one of 256 values or more
        raise MalformedGeometry(_describe_structure(coords)) from None
    low, high = int(widths.min()), int(widths.max())
    if low < 2 or high > 3:
        raise MalformedGeometry(_describe_structure(coords))
    count = len(coords) * low if low == high else int(widths.sum())
    try:
        packed = struct.pack(f"{count}d", *chain.from_iterable(coords))  # rejects str, None, lists
    except (TypeError, OverflowError, struct.error):
        raise MalformedGeometry(_describe_structure(coords)) from None
    flat = np.frombuffer(packed, dtype=np.float64)
    if low == high:
        return flat.reshape(len(coords), low)
    starts = np.cumsum(widths, dtype=np.int64) - widths
    table = np.zeros((len(coords), 3))
    table[:, 0], table[:, 1] = flat[starts], flat[starts + 1]
    three = widths == 3
    table[three, 2] = flat[starts[three] + 2]
    return table


# --- messages --------------------------------------------------------------------------------


def _describe_structure(coords: Sequence[Any]) -> str:
    """Name the first position that is not 2 or 3 real numbers."""
    for i, position in enumerate(coords):
        if not isinstance(position, list | tuple | np.ndarray):
            return f"position {i} is not an array of numbers: {shown(position)}"
        if not 2 <= len(position) <= 3:
            return f"position {i} has {len(position)} values; expected [longitude, latitude(, altitude)]"
        for value in position:
            if not isinstance(value, numbers.Real):
                return f"position {i} holds {shown(value)}, not a number"
            try:
                float(value)
            except OverflowError:
                return f"position {i} holds {shown(value)}, too large for a coordinate"
    return "malformed positions"


def _describe_values(table: np.ndarray) -> str:
    """Name the first position with a non-finite or out-of-range value."""
    finite = np.isfinite(table).all(axis=1)
    lon_ok = np.abs(table[:, 0]) <= 180.0
    lat_ok = np.abs(table[:, 1]) <= 90.0
    i = int(np.argmin(finite & lon_ok & lat_ok))
    where = f"position {i} {table[i].tolist()}"
    if not finite[i]:
        return f"{where}: NaN or infinite value"
    if not lon_ok[i]:
        return f"{where}: longitude must be within [-180, 180]"
    return f"{where}: latitude must be within [-90, 90]"


def shown(value: Any) -> str:
    """``repr(value)`` cut to 60 characters, to show a bad value in a message."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
