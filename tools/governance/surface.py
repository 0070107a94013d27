"""The tool surface's history as plain, immutable records (no Django).

A `Surface` is one consistent reading of the three tables, or of the fixture file: the
tool name ledger, the retired tools and the contract changes, each sorted by its key, so two
readings of the same history compare equal and serialise to the same text.

The fixture format is `Surface.as_json()`: three lists of objects with ISO dates, written with
a fixed key order, two-space indentation and a final newline (`dumps`). A contract change
carries `new_input`, `was` and `now` only when its kind uses them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date
from enum import StrEnum
from types import MappingProxyType
from typing import Any


class ChangeKind(StrEnum):
    """How one input of a tool that kept its name broke. Each kind says which call is outdated."""

    REMOVED = "removed"
    """The input is gone from the tool's schema; a call that still sends it is refused."""
    RENAMED = "renamed"
    """The input is now called `new_input` and takes the same values; a call with the old name
    is refused with the new name (and the value under it, ready to resend)."""
    TYPE_CHANGED = "type_changed"
    """The input takes another shape: `was` and `now` are JSON Schemas of the old and the new
    shape (e.g. a string, now a list; two corner pairs, now four numbers). A call whose value
    still has the old shape is refused; with `new_input`, the input was renamed as well and any
    call with the old name is refused."""
    UNIT_CHANGED = "unit_changed"
    """The input's value is now in another unit, under the name `new_input` (the old name alone
    could not tell an old call from a new one): `was` and `now` name the units (percent, kWh)."""


@dataclass(frozen=True, slots=True)
class LedgerEntry:
    """A tool name a release listed, with when it first appeared."""

    name: str
    first_seen: date
    first_release: str = ""
    note: str = ""


@dataclass(frozen=True, slots=True)
class Retirement:
    """A name the server no longer registers, and the tools a caller should use instead."""

    name: str
    replaced_by: tuple[str, ...]
    since: date
    release: str = ""
    message: str = ""


@dataclass(frozen=True, slots=True)
class InputChange:
    """A breaking change to one input of a tool that kept its name."""

    tool: str
    input: str
    kind: ChangeKind
    since: date
    instead: str
    new_input: str = ""
    """The input that takes over (renamed, unit changed, and a type change that renamed too)."""
    was: Any = None
    """Type changes: a JSON Schema of the old shape. Unit changes: the old unit's name."""
    now: Any = None
    """Type changes: a JSON Schema of the new shape. Unit changes: the new unit's name."""

    @property
    def current_input(self) -> str:
        """The input's name in the current schema (`input` itself unless it was renamed)."""
        return self.new_input or self.input


@dataclass(frozen=True, slots=True)
class Surface:
    """One reading of the history. Rows are kept sorted by their key; `retired_by_name` and
    `changes_by_tool` index them (read-only) for the checks and the runtime."""

    ledger: tuple[LedgerEntry, ...] = ()
    retired: tuple[Retirement, ...] = ()
    changes: tuple[InputChange, ...] = ()
    retired_by_name: Mapping[str, Retirement] = field(init=False, repr=False, compare=False)
    changes_by_tool: Mapping[str, tuple[InputChange, ...]] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "ledger", tuple(sorted(self.ledger, key=lambda e: e.name)))
        object.__setattr__(self, "retired", tuple(sorted(self.retired, key=lambda r: r.name)))
        object.__setattr__(self, "changes", tuple(sorted(self.changes, key=lambda c: (c.tool, c.input))))
        object.__setattr__(self, "retired_by_name", MappingProxyType({r.name: r for r in self.retired}))
        by_tool: dict[str, list[InputChange]] = {}
        for change in self.changes:
            by_tool.setdefault(change.tool, []).append(change)
        changes_by_tool = {tool: tuple(changes) for tool, changes in by_tool.items()}
        object.__setattr__(self, "changes_by_tool", MappingProxyType(changes_by_tool))

    @property
    def ledger_names(self) -> frozenset[str]:
        return frozenset(entry.name for entry in self.ledger)

    def as_json(self) -> dict[str, list[dict[str, Any]]]:
        return {
            "ledger": [
                {"name": e.name, "first_seen": e.first_seen.isoformat(), "first_release": e.first_release,
                 "note": e.note}
                for e in self.ledger
            ],
            "retired": [
                {"name": r.name, "replaced_by": list(r.replaced_by), "since": r.since.isoformat(),
                 "release": r.release, "message": r.message}
                for r in self.retired
            ],
            "contract_changes": [
                {"tool": c.tool, "input": c.input, "kind": c.kind.value, "since": c.since.isoformat(),
                 **({"new_input": c.new_input} if c.new_input else {}),
                 **({"was": _sorted_keys(c.was)} if c.was is not None else {}),
                 **({"now": _sorted_keys(c.now)} if c.now is not None else {}),
                 "instead": c.instead}
                for c in self.changes
            ],
        }  # fmt: skip

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Surface:
        """Read the fixture format; raises `KeyError`/`ValueError` on a malformed file."""
        return cls(
            ledger=tuple(
                LedgerEntry(
                    name=row["name"],
                    first_seen=date.fromisoformat(row["first_seen"]),
                    first_release=row.get("first_release", ""),
                    note=row.get("note", ""),
                )
                for row in data["ledger"]
            ),
            retired=tuple(
                Retirement(
                    name=row["name"],
                    replaced_by=tuple(row["replaced_by"]),
                    since=date.fromisoformat(row["since"]),
                    release=row.get("release", ""),
                    message=row.get("message", ""),
                )
                for row in data["retired"]
            ),
            changes=tuple(
                InputChange(
                    tool=row["tool"],
                    input=row["input"],
                    kind=ChangeKind(row["kind"]),
                    since=date.fromisoformat(row["since"]),
                    instead=row["instead"],
                    new_input=row.get("new_input", ""),
                    was=row.get("was"),
                    now=row.get("now"),
                )
                for row in data["contract_changes"]
            ),
        )


def _sorted_keys(value: Any) -> Any:
    """A shape with its object keys sorted: databases store JSON with keys in their own order
    (PostgreSQL's jsonb by length), and the file must not depend on which one it came from."""
    if isinstance(value, dict):
        return {key: _sorted_keys(value[key]) for key in sorted(value)}
    if isinstance(value, list):
        return [_sorted_keys(item) for item in value]
    return value


def dumps(surface: Surface) -> str:
    """The one text of a surface: the same history always gives the same bytes."""
    return json.dumps(surface.as_json(), indent=2, ensure_ascii=False) + "\n"


def loads(text: str) -> Surface:
    return Surface.from_json(json.loads(text))
