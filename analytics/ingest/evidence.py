"""The evidence rollups (issue #43; docs/analytics.md, "Evidence figures"): what the exchange lines
and the tool calls add to them, as pure functions, rows in, deltas out (analytics/ingest/rollups.py
says how deltas are added, and registers these rollups with the others).

- `LISTED_TOOLS` (`ListedToolDaily`): per tool named in a `Tools listed` line, once per listing,
  with the bytes of its entry;
- `PROTOCOL_MIX` (`ProtocolMixDaily`): sessions started per client and protocol version, and the
  listings, tool calls and refused requests per protocol version (`PROTOCOL_MIX_CALLS`, from the
  tool calls: the same table);
- `REFUSED` (`RefusedRequestDaily`): refused requests per method and JSON-RPC code (0 when the
  line carries none the column could keep);
- `UNKNOWN_TOOLS` (`UnknownToolDaily`): calls ending `unknown_tool`, by the name as sent;
- `ARGUMENT_FAILURES` (`ArgumentFailureDaily`): per argument path an `invalid_arguments` call
  named (each path once per call);
- `CORRECTIONS` (`CorrectionDaily`): the self-correction join, analytics/ingest/corrections.py.

Every figure is a function of each event alone but the corrections, so a line ingested twice
counts once (the store counts only the events it inserted), in any order and any batches.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

import orjson

from analytics.ingest.rollup_type import Deltas, Rollup
from analytics.models import (
    ArgumentFailureDaily,
    CorrectionDaily,
    ListedToolDaily,
    ProtocolMixDaily,
    RefusedRequestDaily,
    UnknownToolDaily,
)

UNKNOWN_TOOL, INVALID_ARGUMENTS = "unknown_tool", "invalid_arguments"
NO_CODE = 0
"""The `code` of a refused request whose line carries no JSON-RPC code the column keeps."""


MIX_DIMENSIONS = ("client", "client_version", "protocol_version", "kind")
LISTED_TOOLS = Rollup(
    ListedToolDaily, "day", ("client", "tool", "backend"), ("listings", "bytes"), derived={"tool": ("tools",)}
)
PROTOCOL_MIX = Rollup(ProtocolMixDaily, "day", MIX_DIMENSIONS, ("count",))
PROTOCOL_MIX_CALLS = Rollup(
    ProtocolMixDaily,
    "day",
    MIX_DIMENSIONS,
    ("count",),
    # A tool call names no client version, and its kind is `call`: constants, from no field.
    derived={"client_version": (), "kind": (), "protocol_version": ("protocol_version",)},
)
REFUSED = Rollup(RefusedRequestDaily, "day", ("client", "method", "code"), ("count",), ("first_seen",), ("last_seen",))
UNKNOWN_TOOLS = Rollup(UnknownToolDaily, "day", ("client", "tool"), ("calls",), ("first_seen",), ("last_seen",))
CORRECTIONS = Rollup(CorrectionDaily, "day", ("client", "tool", "outcome"), ("failures", "corrected"))
ARGUMENT_FAILURES = Rollup(
    ArgumentFailureDaily, "day", ("client", "tool", "path"), ("calls",), derived={"path": ("argument_paths",)}
)
EXCHANGE_ROLLUPS = (LISTED_TOOLS, PROTOCOL_MIX, REFUSED)
CALL_ROLLUPS = (PROTOCOL_MIX_CALLS, UNKNOWN_TOOLS, ARGUMENT_FAILURES, CORRECTIONS)

EXCHANGE_COUNTED = (
    "time",
    "kind",
    "client",
    "client_version",
    "protocol_version",
    "backend",
    "method",
    "code",
    "tools",
)
"""The columns of an exchange event its rollups count (what an insert returns of the rows it stored)."""
CALL_COUNTED = ("event_id", "session", "protocol_version", "suggested", "argument_paths")
"""The columns of a tool call the evidence counts, besides those the tool-call rollups do."""


def day_of(moment: datetime) -> datetime:
    return moment.replace(hour=0, minute=0, second=0, microsecond=0)


def listed_tools(tools: str) -> list[tuple[str, int]]:
    """The (name, bytes) of each tool of a `tools` column (JSON, analytics/ingest/decode.py)."""
    return [(item["name"], item["bytes"]) for item in orjson.loads(tools)] if tools else []


def paths_of(argument_paths: str) -> list[str]:
    """The distinct argument paths of an `argument_paths` column (joined with ", "), in order."""
    return list(dict.fromkeys(argument_paths.split(", "))) if argument_paths else []


class _Sums:
    """Deltas of one rollup per key: figures added, first and last seen kept."""

    def __init__(self) -> None:
        self.rows: dict[tuple, list] = {}

    def add(self, key: tuple, *figures: int, seen: datetime | None = None) -> None:
        if (row := self.rows.get(key)) is None:
            self.rows[key] = [*figures] + ([seen, seen] if seen is not None else [])
            return
        for index, figure in enumerate(figures):
            row[index] += figure
        if seen is not None:
            row[-2], row[-1] = min(row[-2], seen), max(row[-1], seen)

    def deltas(self) -> list[tuple]:
        return [(*key, *row) for key, row in self.rows.items()]


def exchange_deltas(rows: Iterable[Any]) -> Deltas:
    """What exchange events add to `EXCHANGE_ROLLUPS` (a line of a kind this version does not
    know adds nothing)."""
    listed, mix, refused = _Sums(), _Sums(), _Sums()
    for row in rows:
        kind, day = row.kind, day_of(row.time)
        if kind == "session":
            mix.add((day, row.client, row.client_version, row.protocol_version, "session"), 1)
        elif kind == "listed":
            mix.add((day, row.client, "", row.protocol_version, "listed"), 1)
            for name, size in listed_tools(row.tools):
                listed.add((day, row.client, name, row.backend), 1, size)
        elif kind == "refused":
            mix.add((day, row.client, "", row.protocol_version, "refused"), 1)
            code = NO_CODE if row.code is None else row.code
            refused.add((day, row.client, row.method, code), 1, seen=row.time)
    return {LISTED_TOOLS: listed.deltas(), PROTOCOL_MIX: mix.deltas(), REFUSED: refused.deltas()}


def call_deltas(rows: Iterable[Any]) -> Deltas:
    """What tool calls add to the evidence rollups that count each call alone (the corrections
    join calls: analytics/ingest/corrections.py)."""
    mix, unknown, arguments = _Sums(), _Sums(), _Sums()
    for row in rows:
        day = day_of(row.time)
        mix.add((day, row.client, "", row.protocol_version, "call"), 1)
        if row.outcome == UNKNOWN_TOOL:
            unknown.add((day, row.client, row.tool), 1, seen=row.time)
        elif row.outcome == INVALID_ARGUMENTS:
            for path in paths_of(row.argument_paths):
                arguments.add((day, row.client, row.tool, path), 1)
    return {PROTOCOL_MIX_CALLS: mix.deltas(), UNKNOWN_TOOLS: unknown.deltas(), ARGUMENT_FAILURES: arguments.deltas()}
