"""The tool surface's history as plain, immutable records (no Django).

A `Surface` is one consistent reading of the tables, or of the fixture file: the tool name
ledger, the deprecated tools, the aliases, the retired tools and the contract changes, each
sorted by its key, so two readings of the same history compare equal and serialise to the same
text.

A ledger name's lifecycle: live (registered), deprecated (still listed and answered, with a
notice, until its retire-on date), an alias (an old name whose calls reach another tool, until
its retire-on date), retired. A name is in at most one of deprecated, aliases and retired. A
retire-on date is a UTC day: from 00:00 UTC that day the name is retired (`Surface.at`).

The fixture format is `Surface.as_json()`: five lists of objects with ISO dates, written with
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

INPUT_NAME_LENGTH = 128
"""The longest input name the governance records take (a contract change's input, an alias's
argument names): the same bound as a tool name."""
MAX_ALIAS_ARGUMENTS = 64
"""The most arguments one alias may rename: more than any tool's inputs."""


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
class Deprecation:
    """A live tool on its way out: still listed and answered, with a notice naming the tools
    that replace it (in the order given) and the day it is retired, if one is set."""

    name: str
    replaced_by: tuple[str, ...]
    since: date
    retire_on: date | None = None
    reason: str = ""

    def as_retirement(self) -> Retirement:
        """The retirement its retire-on date brings."""
        assert self.retire_on is not None
        return Retirement(self.name, self.replaced_by, self.retire_on, "", self.reason)


@dataclass(frozen=True, slots=True)
class Alias:
    """An old name whose calls reach `target`, with some arguments renamed on the way
    (`arguments`: old name -> the target's name, or None to leave the argument out), until its
    retire-on date. The answer is the target's, with a notice."""

    name: str
    target: str
    since: date
    arguments: tuple[tuple[str, str | None], ...] = ()
    retire_on: date | None = None
    reason: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "arguments", tuple(sorted(self.arguments)))

    @property
    def replaced_by(self) -> tuple[str, ...]:
        return (self.target,)

    def as_retirement(self) -> Retirement:
        assert self.retire_on is not None
        return Retirement(self.name, (self.target,), self.retire_on, "", self.reason)


Scheduled = Deprecation | Alias
"""A name with a lifecycle that may carry a retire-on date."""


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
class SkippedRow:
    """A table row left out of a reading because it does not validate (written around the
    services): which table, the name it is about, and what is wrong with it."""

    table: str
    name: str
    problem: str


@dataclass(frozen=True, slots=True)
class Surface:
    """One reading of the history. Rows are kept sorted by their key; `retired_by_name` and
    `changes_by_tool` index them (read-only) for the checks and the runtime. `skipped`: the rows
    the reading left out (not part of the history: two readings compare without it)."""

    ledger: tuple[LedgerEntry, ...] = ()
    retired: tuple[Retirement, ...] = ()
    changes: tuple[InputChange, ...] = ()
    deprecated: tuple[Deprecation, ...] = ()
    aliases: tuple[Alias, ...] = ()
    skipped: tuple[SkippedRow, ...] = field(default=(), compare=False)
    retired_by_name: Mapping[str, Retirement] = field(init=False, repr=False, compare=False)
    changes_by_tool: Mapping[str, tuple[InputChange, ...]] = field(init=False, repr=False, compare=False)
    deprecated_by_name: Mapping[str, Deprecation] = field(init=False, repr=False, compare=False)
    aliases_by_name: Mapping[str, Alias] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "ledger", tuple(sorted(self.ledger, key=lambda e: e.name)))
        object.__setattr__(self, "retired", tuple(sorted(self.retired, key=lambda r: r.name)))
        object.__setattr__(self, "changes", tuple(sorted(self.changes, key=lambda c: (c.tool, c.input))))
        object.__setattr__(self, "deprecated", tuple(sorted(self.deprecated, key=lambda d: d.name)))
        object.__setattr__(self, "aliases", tuple(sorted(self.aliases, key=lambda a: a.name)))
        object.__setattr__(self, "retired_by_name", MappingProxyType({r.name: r for r in self.retired}))
        object.__setattr__(self, "deprecated_by_name", MappingProxyType({d.name: d for d in self.deprecated}))
        object.__setattr__(self, "aliases_by_name", MappingProxyType({a.name: a for a in self.aliases}))
        by_tool: dict[str, list[InputChange]] = {}
        for change in self.changes:
            by_tool.setdefault(change.tool, []).append(change)
        changes_by_tool = {tool: tuple(changes) for tool, changes in by_tool.items()}
        object.__setattr__(self, "changes_by_tool", MappingProxyType(changes_by_tool))

    @property
    def ledger_names(self) -> frozenset[str]:
        return frozenset(entry.name for entry in self.ledger)

    @property
    def scheduled(self) -> tuple[Scheduled, ...]:
        """The deprecations and aliases, by name."""
        return tuple(sorted((*self.deprecated, *self.aliases), key=lambda s: s.name))

    def due(self, today: date) -> tuple[Scheduled, ...]:
        """The deprecations and aliases whose retire-on date has come (on or before `today`)."""
        return tuple(s for s in self.scheduled if s.retire_on is not None and s.retire_on <= today)

    def at(self, today: date) -> Surface:
        """The history as it stands on `today`: every deprecation and alias whose retire-on date
        has come is a retirement (the tables may not say so yet: the first replica to read them
        after the date records it, `services.scheduled_retirements_fire`)."""
        due = self.due(today)
        if not due:
            return self
        names = {s.name for s in due}
        return Surface(
            ledger=self.ledger,
            retired=(*(r for r in self.retired if r.name not in names), *(s.as_retirement() for s in due)),
            changes=tuple(c for c in self.changes if c.tool not in names),
            deprecated=tuple(d for d in self.deprecated if d.name not in names),
            aliases=tuple(a for a in self.aliases if a.name not in names),
            skipped=self.skipped,
        )

    def as_json(self) -> dict[str, list[dict[str, Any]]]:
        return {
            "ledger": [
                {
                    "name": e.name,
                    "first_seen": e.first_seen.isoformat(),
                    "first_release": e.first_release,
                    "note": e.note,
                }
                for e in self.ledger
            ],
            "deprecated": [
                {
                    "name": d.name,
                    "replaced_by": list(d.replaced_by),
                    "since": d.since.isoformat(),
                    "retire_on": _iso(d.retire_on),
                    "reason": d.reason,
                }
                for d in self.deprecated
            ],
            "aliases": [
                {
                    "name": a.name,
                    "target": a.target,
                    "arguments": dict(a.arguments),
                    "since": a.since.isoformat(),
                    "retire_on": _iso(a.retire_on),
                    "reason": a.reason,
                }
                for a in self.aliases
            ],
            "retired": [
                {
                    "name": r.name,
                    "replaced_by": list(r.replaced_by),
                    "since": r.since.isoformat(),
                    "release": r.release,
                    "message": r.message,
                }
                for r in self.retired
            ],
            "contract_changes": [
                {
                    "tool": c.tool,
                    "input": c.input,
                    "kind": c.kind.value,
                    "since": c.since.isoformat(),
                    **({"new_input": c.new_input} if c.new_input else {}),
                    **({"was": _sorted_keys(c.was)} if c.was is not None else {}),
                    **({"now": _sorted_keys(c.now)} if c.now is not None else {}),
                    "instead": c.instead,
                }
                for c in self.changes
            ],
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Surface:
        """Read the fixture format; raises `KeyError`/`ValueError`/`TypeError` on a malformed
        file. A file written before deprecations and aliases existed has neither section."""
        return cls(
            deprecated=tuple(
                Deprecation(
                    name=row["name"],
                    replaced_by=tuple(row["replaced_by"]),
                    since=date.fromisoformat(row["since"]),
                    retire_on=_date(row.get("retire_on")),
                    reason=row.get("reason", ""),
                )
                for row in data.get("deprecated", ())
            ),
            aliases=tuple(
                Alias(
                    name=row["name"],
                    target=row["target"],
                    since=date.fromisoformat(row["since"]),
                    arguments=tuple(_arguments(row.get("arguments", {}))),
                    retire_on=_date(row.get("retire_on")),
                    reason=row.get("reason", ""),
                )
                for row in data.get("aliases", ())
            ),
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


def _iso(day: date | None) -> str | None:
    return None if day is None else day.isoformat()


def _date(value: Any) -> date | None:
    return None if value is None else date.fromisoformat(value)


def _arguments(value: Any) -> list[tuple[str, str | None]]:
    """An alias's argument mapping as read from JSON: names to names (or null), one to one and
    bounded, by the rule the services and the tables' reads apply (`mapping_problems`)."""
    problems = mapping_problems(value)
    if problems:
        raise TypeError(f"an alias's arguments: {'; '.join(problems)}")
    return list(value.items())


_SHOWN = 40
"""How much of an odd argument name a message repeats."""
MAPPING_SHAPE = 'an object of argument names, {"old_name": "new_name"} (null for new_name leaves it out)'


def mapping_problems(arguments: object) -> list[str]:
    """Why an alias's argument mapping is not one (empty when it is): an object (or pairs) of at
    most `MAX_ALIAS_ARGUMENTS` entries, each old name a non-empty input name of at most
    `INPUT_NAME_LENGTH` characters, named once, mapped to such a name or to null, and no two old
    names onto one input (a call sending both would give the target one input twice). Each
    problem names its entry and what to send instead. Judged on every way in: the services'
    writes and every read of the tables."""
    if isinstance(arguments, Mapping):
        pairs: list[Any] = list(arguments.items())
    elif isinstance(arguments, tuple) and all(isinstance(p, tuple) and len(p) == 2 for p in arguments):
        pairs = list(arguments)  # an `Alias`'s own pairs
    else:
        return [f"the arguments are a JSON {_json_kind(arguments)}, not {MAPPING_SHAPE}"]
    if len(pairs) > MAX_ALIAS_ARGUMENTS:
        return [
            f"{len(pairs)} arguments renamed, more than {MAX_ALIAS_ARGUMENTS}: map only the ones callers still send"
        ]
    problems: list[str] = []
    seen: set[str] = set()
    onto: dict[str, str] = {}
    for old, new in pairs:
        problem = _name_problem(old, "an old argument name", f"(mapped to {_shown(new)})")
        if problem is not None:
            problems.append(f"{problem}: name the argument callers send, or leave the entry out")
            continue
        if old in seen:
            problems.append(f"{_shown(old)} is mapped twice: keep one entry for it")
            continue
        seen.add(old)
        if new is None:
            continue
        problem = _name_problem(new, f"the new name of {_shown(old)}", "")
        if problem is not None:
            problems.append(f"{problem}: map it to an input of the target, or to null to leave it out")
        elif new in onto:
            problems.append(
                f"{_shown(onto[new])} and {_shown(old)} are both mapped to {_shown(new)}: map one of them to "
                f"{_shown(new)} and the other to null (or to another input)"
            )
        else:
            onto[new] = old
    return problems


def _name_problem(name: object, role: str, context: str) -> str | None:
    """What is wrong with `name` as an argument name (None: nothing)."""
    suffix = f" {context}" if context else ""
    if not isinstance(name, str):
        return f"{role}{suffix} is a JSON {_json_kind(name)}, not a string"
    if not name.strip():
        return f"{role}{suffix} is empty"
    if len(name) > INPUT_NAME_LENGTH:
        return f"{role} {_shown(name)}{suffix} is {len(name)} characters, more than {INPUT_NAME_LENGTH}"
    return None


def _shown(value: object) -> str:
    """`value` as a message repeats it: JSON, cut to a readable length."""
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    return text if len(text) <= _SHOWN else text[:_SHOWN] + "..."


def _json_kind(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, Mapping):
        return "object"
    return "array" if isinstance(value, (list, tuple)) else type(value).__name__


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
