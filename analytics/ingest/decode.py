"""Decode: one log line into the row of a stored event, or why it is none.

The events the analytics store are declared in core (core/app_status.py, core/calls.py,
core/exchange.py); a `Family` is the events one table holds, and its columns come from their
declarations:

    event_id, time, [kind], the text columns, the whole-number columns, the other numbers,
    the parts of nested records, the lists of texts (joined with ", "), the lists of records, raw

A list of records (`Tools listed`'s `tools`) is one text column holding the list as compact JSON,
each record's parts in declared order (`[{"name":"tomtom-geocode","bytes":812}]`); a record
without one of its parts, or with a part of another type or out of bounds, is left out (and the
line is then stored whole, `raw`).

`event_id` is the line's identity: the first 16 bytes of the SHA-256 of the line stripped of
surrounding whitespace (128 bits: a collision is as likely as between two random UUIDs). The
formatter writes `time` to the millisecond with the replica and pid, so two lines that are byte
for byte the same are the same event logged once, and a line read again (from the same file, a
rotated copy, or the live path) gets the same identity. `kind` is the short name of an app
status's message (`unknown` for a message the contract does not know). The envelope's `replica`
and `pid` are columns too; `level`, `logger` and the marks are implied by the table. A line
logged inside a span, traces on, also carries `trace_id` and `span_id` (core/logging.py): they
lead a log backend from the line to its trace and back, and are not stored here (the line's
identity includes them), so the line is stored as one without them would be: no `raw`, not
counted as `unknown_fields`, by the compiled path.

A line is one of three things:

- an **event** of a family: a JSON object its family recognises (by its marks, `"event":
  "app_status"`, or else by its logger and message), with a text `time` with a UTC offset and
  every required field as text;
- **skipped**: a blank line, or a JSON object no family recognises (a Django warning);
- **malformed**: not UTF-8, not JSON, not an object, or an event without a required field, or
  whose `time` is not an ISO 8601 time with an offset. A partial last line of a log still being
  written is malformed this way.

Optional fields that are absent or null are stored empty ("" or NULL); a value that is not of
the declared type, or outside the declared bounds, is stored empty too. The line itself (`raw`)
is stored only when the columns do not hold all of it: a field they have no place for (a newer
server's, counted as `unknown_fields`), a value they could not keep, an empty text (but, in the exchange
lines, one whose declared default is the empty text: it says what absence says), a message the
contract does not know, a `\\u0000` escape (PostgreSQL text cannot hold NUL: it is replaced in
every column but `raw`). Every line this server writes is held whole by the columns (its trace
context aside).

`decode(line)` first tries the shapes of the lines the server writes, compiled from the same
declarations (`Family.compiled`): msgspec decodes and checks every field at once, in C, and the
row is built from the decoded fields. A line that does not decode in that shape (any of the
cases above, or the same fields spaced differently) goes to the general parser
(`decode_generally`), which is the specification: the compiled shapes only ever accept less than
it holds whole, never more, and give the same row. tests/analytics/test_decode.py compares the
two on every line the tests know and on lines that differ from the server's in one field each.
"""

from __future__ import annotations

import hashlib
import math
from collections import namedtuple
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Annotated, Any, Final, Literal, NamedTuple

import msgspec
import orjson

from core import app_status, calls, exchange
from core.app_status import UNKNOWN_KIND
from core.events import ENVELOPE, MAX_WHOLE, Event, FieldSpec, Role, describe
from core.logging import TRACE_CONTEXT

_NUL_ESCAPE: Final = "\\u0000"


class Skipped(NamedTuple):
    """Not an event of any family."""


class Malformed(NamedTuple):
    reason: str


SKIPPED = Skipped()


@dataclass(frozen=True, slots=True)
class Column:
    """A column of a family's table and where its value comes from in a line."""

    name: str
    kind: str
    """`text`, `whole`, `number`, `texts` or `records` (a record's parts are whole numbers or
    numbers; a list of records is JSON text)."""
    spec: FieldSpec
    record: str | None = None
    """The nested record the value is a part of (`simplification`), else None."""

    @property
    def bounds(self) -> tuple[float, float]:
        """The range a number must fall in to be kept: the declared one, within a signed 64-bit column."""
        low = -MAX_WHOLE if self.spec.minimum is None else max(self.spec.minimum, -MAX_WHOLE)
        high = MAX_WHOLE if self.spec.maximum is None else min(self.spec.maximum, MAX_WHOLE)
        return low, high


_ENVELOPE_COLUMNS = {  # the envelope fields stored as columns, declared here as the events' are
    "replica": FieldSpec("replica", "text", Role.DETAIL, False, True, str),
    "pid": FieldSpec("pid", "whole", Role.DETAIL, False, True, int, minimum=0),
}


@dataclass(frozen=True, eq=False)
class Family:
    """The events one table holds: their declarations, and how a line of them is read."""

    name: str
    events: tuple[type[Event], ...]
    logger: str
    marks: tuple[tuple[str, str], ...] = ()
    """Fields with fixed values that recognise a line of the family (else: its logger and message)."""
    kinds: dict[str, str] | None = None
    """Message -> kind, for a family whose table has a `kind` column (else None)."""
    noun: str = "tool-call line"
    """What a malformed line of the family is called in its reason."""
    empty_is_default: bool = False
    """Whether an empty optional text the events declare with the default "" is held by its column
    (it says what absence says): the exchange lines, whose server writes `"protocol_version": ""`
    when there is none. The older families keep such a line whole (`raw`), as they always did."""
    fields: tuple[FieldSpec, ...] = field(init=False)
    """Every field any of the events declares, in the order first declared; a field is required
    when every event requires it."""
    required_texts: tuple[str, ...] = field(init=False)
    """The fields a line must have as text: `time`, the message when it names the kind, the required fields."""
    known_fields: frozenset[str] = field(init=False)
    """Every field a line of the family may have that the declarations name (the formatter's included)."""
    columns: tuple[Column, ...] = field(init=False)
    """Between `time` (or `kind`) and `raw`, in the order of `Row`'s fields."""
    empty_defaults: frozenset[str] = field(init=False)
    """The optional texts every event declaring them defaults to "": an empty one says what
    absence says, and the column holds it (`"protocol_version": ""`)."""
    Row: Any = field(init=False)
    """The row type: a named tuple of `column_names`."""

    def __post_init__(self) -> None:
        fields: dict[str, FieldSpec] = {}
        declared = [describe(event).fields for event in self.events]
        for specs_of_event in declared:
            for spec in specs_of_event:
                known = fields.setdefault(spec.name, spec)
                if (known.kind, known.parts) != (spec.kind, spec.parts):
                    raise TypeError(f"{self.name}: {spec.name} is declared as two kinds of value")
                if spec.kind == "records" and any(part.kind not in ("text", "whole", "number") for part in spec.parts):
                    raise TypeError(f"{self.name}: {spec.name} is a list of records of records, which no column holds")
        for name, spec in fields.items():
            everywhere = all(any(s.name == name and s.required for s in specs) for specs in declared)
            fields[name] = replace(spec, required=everywhere)
        specs = [*fields.values(), *_ENVELOPE_COLUMNS.values()]
        plain = [Column(spec.name, spec.kind, spec) for spec in specs if spec.kind != "record"]
        records = [spec for spec in specs if spec.kind == "record"]
        parts = [Column(part.name, part.kind, part, record.name) for record in records for part in record.parts]
        order = ("text", "whole", "number")
        columns = [c for kind in order for c in plain if c.kind == kind]
        columns += parts + [c for c in plain if c.kind == "texts"] + [c for c in plain if c.kind == "records"]
        object.__setattr__(self, "fields", tuple(fields.values()))
        message = ("message",) if self.kinds is not None else ()
        required = tuple(spec.name for spec in fields.values() if spec.required)
        object.__setattr__(self, "required_texts", ("time", *message, *required))
        marks = (name for name, _value in self.marks)
        kind = ("kind",) if self.kinds is not None else ()
        object.__setattr__(
            self, "known_fields", frozenset((*ENVELOPE, *TRACE_CONTEXT, "exception", *marks, *kind, *fields))
        )
        object.__setattr__(self, "columns", tuple(columns))
        defaults: dict[str, set[object]] = {}
        for event in self.events:
            for info in msgspec.inspect.type_info(event).fields:  # type: ignore[attr-defined]
                defaults.setdefault(info.name, set()).add(info.default)
        empty = {name for name, found in defaults.items() if found == {""} and fields[name].kind == "text"}
        empty = empty if self.empty_is_default else set()
        object.__setattr__(self, "empty_defaults", frozenset(empty))
        object.__setattr__(self, "Row", namedtuple(f"{self.name}Row", self.column_names))

    @property
    def key_columns(self) -> tuple[str, ...]:
        return ("event_id", "time", "kind") if self.kinds is not None else ("event_id", "time")

    @property
    def column_names(self) -> tuple[str, ...]:
        """Every column of the family's table a row fills, in row order."""
        return (*self.key_columns, *(c.name for c in self.columns), "raw")

    @property
    def messages(self) -> tuple[str, ...]:
        return tuple(event.MESSAGE for event in self.events)

    @property
    def records(self) -> tuple[str, ...]:
        """The nested records whose parts are columns."""
        return tuple(dict.fromkeys(c.record for c in self.columns if c.record is not None))

    def parts_of(self, record: str) -> tuple[int, ...]:
        """The positions among `columns` of a record's parts."""
        return tuple(i for i, c in enumerate(self.columns) if c.record == record)

    def names(self, role: Role) -> tuple[str, ...]:
        """The fields of `role` any of the events declares."""
        return tuple(spec.name for spec in self.fields if spec.role is role)

    def recognises(self, data: dict) -> bool:
        get = data.get
        if self.marks:
            return all(get(name) == value for name, value in self.marks)
        return get("message") in self.messages and get("logger") == self.logger


APP_STATUS = Family(
    "AppStatus",
    app_status.APP_STATUS_EVENTS,
    app_status.LOGGER,
    marks=(app_status.MARK,),
    kinds={event.MESSAGE: event.KIND for event in app_status.APP_STATUS_EVENTS},
    noun="app-status event",
)
TOOL_CALLS = Family("ToolCall", (calls.ToolCall,), calls.LOGGER)
EXCHANGE_KINDS: dict[str, str] = {
    exchange.SessionStarted.MESSAGE: "session",
    exchange.ToolsListed.MESSAGE: "listed",
    exchange.RequestRefused.MESSAGE: "refused",
}
"""The kind of each exchange line (core/exchange.py) in `ExchangeEvent.kind`."""
EXCHANGE = Family(
    "Exchange",
    exchange.EXCHANGE_EVENTS,
    exchange.LOGGER,
    kinds=EXCHANGE_KINDS,
    noun="exchange line",
    empty_is_default=True,
)
FAMILIES: tuple[Family, ...] = (APP_STATUS, TOOL_CALLS, EXCHANGE)


def event_identity(stripped: bytes) -> bytes:
    """The identity of the event a line records (see the module docstring); `stripped` is the
    line stripped of surrounding whitespace."""
    return hashlib.sha256(stripped).digest()[:16]


def utc_time(text: str) -> datetime | Malformed:
    """The moment an ISO 8601 time with a UTC offset names, in UTC."""
    try:
        when = datetime.fromisoformat(text)
        if when.tzinfo is UTC:  # the formatter's `+00:00`
            return when
        if when.utcoffset() is None:
            return Malformed("'time' has no UTC offset")
        return when.astimezone(UTC)
    except (ValueError, OverflowError):
        return Malformed(f"'time' is not an ISO 8601 time: {text[:40]!r}")


Decoded = tuple[Family, tuple, bool] | Skipped | Malformed
"""An event's family, its row, and whether its line has fields the declarations do not name
(kept with the fields they do, and counted as `unknown_fields`); or what the line is instead."""


# -- The general parser: the specification ---------------------------------------------------------


def decode_generally(line: bytes) -> Decoded:
    """What one log line is, by the rules of the module docstring."""
    stripped = line.strip()
    if not stripped:
        return SKIPPED
    try:
        data = orjson.loads(stripped)
    except orjson.JSONDecodeError:
        return Malformed("not JSON (a partial line?)" if _is_utf8(stripped) else "not UTF-8")
    if type(data) is not dict:
        return Malformed("not a JSON object")
    for family in FAMILIES:
        if family.recognises(data):
            return _decoded(family, data, stripped)
    return SKIPPED


def _decoded(family: Family, data: dict, stripped: bytes) -> Decoded:
    get = data.get
    for name in family.required_texts:
        if type(get(name)) is not str:
            return Malformed(f"{family.noun} without a text {name!r}")
    when = utc_time(data["time"])
    if type(when) is Malformed:
        return when
    # How many of the line's fields the columns hold. Each field counts once when its column kept
    # its value, or when it is null (an absent value, which the empty column says too). The
    # required texts, `level`, the trace context (not stored: the log backend links on it), and
    # the logger, message and marks that say what the family's lines say, are held by the row's
    # existence.
    held = len(family.required_texts) + ("level" in data) + (get("logger") == family.logger)
    held += sum(name in data for name in TRACE_CONTEXT)
    held += sum(get(name) == value for name, value in family.marks)
    key: tuple = (event_identity(stripped), when)
    kind = None
    if family.kinds is None:
        held += 1  # the message, which made the line one of the family's
    else:
        kind = family.kinds.get(data["message"], UNKNOWN_KIND)
        key += (kind,)
        held += get("kind") == kind
    values: list[Any] = []
    for column in family.columns:
        name, record = column.name, column.record
        if record is None:
            value = _kept(column, get(name))
            if name in data and not column.spec.required:
                held += _held(column, get(name), value, name in family.empty_defaults)
        else:
            parts = get(record)
            value = _kept(column, parts.get(name)) if type(parts) is dict else None
        values.append(value)
    for record in family.records:
        parts = get(record)
        if record in data:
            kept = [values[i] for i in family.parts_of(record)]
            held += parts is None or (type(parts) is dict and len(kept) - kept.count(None) == len(parts) > 0)
    text = stripped.decode()
    nul = _NUL_ESCAPE in text
    complete = held == len(data) and kind != UNKNOWN_KIND and not nul
    row = (*key, *values, "" if complete else text)
    if nul:  # PostgreSQL text cannot hold NUL: replaced in every column but `raw`
        row = (*(v.replace("\x00", "\ufffd") if type(v) is str else v for v in row[:-1]), row[-1])
    return family, family.Row._make(row), not family.known_fields.issuperset(data)


def _held(column: Column, value: object, kept: Any, empty_default: bool = False) -> bool:
    """Whether the column holds a field's value whole (a null is held: it says what absence says;
    so is an empty text whose declared default is the empty text)."""
    if value is None:
        return True
    if column.kind == "text":
        return kept != "" or (empty_default and value == "")
    if column.kind == "texts":
        return kept != "" and len(kept.split(", ")) == len(value)  # type: ignore[arg-type]  # a list
    if column.kind == "records":  # every record kept, each with no field but its parts
        items: list = value  # type: ignore[assignment]  # a list, or nothing was kept
        parts = len(column.spec.parts)
        return kept != "" and len(orjson.loads(kept)) == len(items) and all(len(item) == parts for item in items)
    return kept is not None


def _kept(column: Column, value: object) -> Any:
    """The column's value for a field's value: "" for a text, None for a number, when absent,
    null, of another type or outside the declared bounds."""
    kind = column.kind
    if kind == "text":
        return value if type(value) is str else ""
    if kind == "texts":
        return ", ".join(item for item in value if type(item) is str) if type(value) is list else ""
    if kind == "records":
        return _records(column, value) if type(value) is list else ""
    low, high = column.bounds
    if kind == "whole":
        return value if type(value) is int and low <= value <= high else None
    if type(value) is float:
        return value if math.isfinite(value) and low <= value <= high else None
    return float(value) if type(value) is int and low <= value <= high else None


def _records(column: Column, value: list) -> str:
    """A list of records as its column keeps it: JSON, each record whose every part is kept, with
    its parts in declared order (the compiled path encodes its records the same way)."""
    parts = [Column(part.name, part.kind, part) for part in column.spec.parts]
    kept = []
    for item in value:
        if type(item) is not dict:
            continue
        record = {part.name: _kept(part, item.get(part.name)) for part in parts}
        if all(v is not None and (type(v) is not str or type(item.get(k)) is str) for k, v in record.items()):
            kept.append(record)
    return msgspec.json.encode(kept).decode()


def _is_utf8(data: bytes) -> bool:
    try:
        data.decode()
    except UnicodeDecodeError:
        return False
    return True


# -- The compiled shapes of the server's own lines ---------------------------------------------------

Text = Annotated[str, msgspec.Meta(min_length=1)]
"""An optional text the columns keep: an empty one is not held (the general parser stores it whole)."""


@dataclass(frozen=True)
class Compiled:
    """A family's lines in the shape the server writes them, decoded by msgspec in one pass, and
    the row built from the decoded fields in column order (`decode` uses it)."""

    family: Family
    row: Callable[[bytes], tuple | None]
    """The row of a line (stripped of surrounding whitespace) in this shape, else None: then the
    general parser decides."""

    @classmethod
    def of(cls, family: Family) -> Compiled:
        """The shape of `family`'s lines: every field of the type, and within the bounds, its column
        keeps; the envelope, marks and kind as the server writes them; no other field."""
        fields: list[tuple[str, Any, Any]] = [("time", str, msgspec.NODEFAULT)]
        fields.append(("message", _literal(family.messages), msgspec.NODEFAULT))
        fields.append(("logger", _literal((family.logger,)), msgspec.NODEFAULT))
        fields.append(("level", Any, None))
        fields += [(name, Any, None) for name in TRACE_CONTEXT]
        fields += [(name, _literal((value,)), msgspec.NODEFAULT) for name, value in family.marks]
        if family.kinds is not None:
            fields.append(("kind", str, None))
        records = []
        for column in family.columns:
            if column.record is None:
                fields.append((column.name, *_shape(column, column.name in family.empty_defaults)))
        for record in family.records:
            parts = [family.columns[i] for i in family.parts_of(record)]
            shape = msgspec.defstruct(  # a null part is not held: the part's type takes no null
                f"{family.name}{record.title()}",
                [(p.name, _number_type(p), None) for p in parts],
                forbid_unknown_fields=True,
                gc=False,
            )
            fields.append((record, shape | None, None))
            records.append((record, tuple(p.name for p in parts)))
        line = msgspec.defstruct(f"{family.name}Line", fields, kw_only=True, forbid_unknown_fields=True, gc=False)
        return cls(family, _row_builder(family, line, records))


def _row_builder(
    family: Family,
    line_type: type,
    records: list[tuple[str, tuple[str, ...]]],
) -> Callable[[bytes], tuple | None]:
    """The function that decodes a line in the compiled shape and builds its row in one tuple.

    It runs once per line, so it is written out for the family's columns, as `dataclasses` writes
    an `__init__` (`_row_source` shows the code): a loop over the columns cost a third of the time
    a line takes to ingest."""
    namespace = {
        "decode_line": msgspec.json.Decoder(line_type).decode,
        "not_in_shape": (msgspec.ValidationError, msgspec.DecodeError),
        "utc_time": utc_time,
        "Malformed": Malformed,
        "event_identity": event_identity,
        "kinds": family.kinds,
        "new_row": tuple.__new__,
        "Row": family.Row,
        "encode": msgspec.json.encode,
    }
    exec(_row_source(family, records), namespace)  # code made from the declarations alone
    return namespace["row"]


def _row_source(family: Family, records: list[tuple[str, tuple[str, ...]]]) -> str:
    """The source of a family's row function (see `_row_builder`)."""
    code = [
        "def row(stripped):",
        "    try:",
        "        line = decode_line(stripped)",
        "    except not_in_shape:",
        "        return None",
        "    when = utc_time(line.time)",
        "    if type(when) is Malformed:",
        "        return None",
    ]
    key = ["event_identity(stripped)", "when"]
    if family.kinds is not None:
        code += [
            "    kind = kinds[line.message]",
            "    if line.kind is not None and line.kind != kind:",
            "        return None",
        ]
        key.append("kind")
    for record, parts in records:  # all parts None: absent; an empty record `{}` is not held
        names = ", ".join(f"{record}_{part}" for part in parts)
        code += [
            f"    nested = line.{record}",
            "    if nested is None:",
            f"        {names}, = {(None,) * len(parts)!r}",
            "    else:",
            f"        {names}, = {', '.join(f'nested.{part}' for part in parts)},",
            f"        if {' and '.join(f'{record}_{part} is None' for part in parts)}:",
            "            return None",
        ]
    values = []
    for column in family.columns:
        name = column.name
        if column.record is not None:
            values.append(f"{column.record}_{name}")
        elif column.kind == "text":  # a null optional text is stored empty, as if absent
            values.append(f"line.{name}" if column.spec.required else f'(line.{name} or "")')
        elif column.kind == "texts":  # joined, unless the column could not hold the list
            code += [
                f"    items = line.{name}",
                f'    {name} = "" if items is None else ", ".join(items)',
                f'    if items is not None and (not {name} or len({name}.split(", ")) != len(items)):',
                "        return None",
            ]
            values.append(name)
        elif column.kind == "records":
            values.append(f'("" if line.{name} is None else encode(line.{name}).decode())')
        else:
            values.append(f"line.{name}")
    code.append(f"    return new_row(Row, ({', '.join(key + values)}, ''))")
    return "\n".join(code) + "\n"


def _literal(values: tuple[str, ...]) -> Any:
    """`Literal[values]`, for values known when the shape is made."""
    return Literal.__getitem__(values)


def _shape(column: Column, empty_default: bool = False) -> tuple[Any, Any]:
    """The type and default of a field in the compiled shape: what its column holds whole."""
    if column.kind == "text":
        if column.spec.required:
            return str, msgspec.NODEFAULT
        return (str | None, "") if empty_default else (Text | None, "")
    if column.kind == "texts":
        return list[str] | None, None
    if column.kind == "records":
        return list[_record_shape(column)] | None, None  # type: ignore[misc]  # a type made here
    return _number_type(column) | None, None


def _record_shape(column: Column) -> Any:
    """The shape of one record of a list: every part, of its type and within its bounds, no other."""
    parts = [Column(part.name, part.kind, part) for part in column.spec.parts]
    return msgspec.defstruct(
        f"{column.name.title()}Record",
        [(p.name, str if p.kind == "text" else _number_type(p)) for p in parts],
        forbid_unknown_fields=True,
        gc=False,
    )


def _number_type(column: Column) -> Any:
    low, high = column.bounds
    number: type = int if column.kind == "whole" else float
    return Annotated[number, msgspec.Meta(ge=low, le=high)]


COMPILED: dict[bytes, Compiled] = {family.logger.encode(): Compiled.of(family) for family in FAMILIES}
"""The compiled shape of each family's lines, by the logger the formatter names third on each line."""
_LOGGER = b'"logger":"'
_LOGGER_WITHIN = 128
"""Where the formatter's `logger` ends at the latest: after `time` and a `level`."""


def decode(line: bytes) -> Decoded:
    """What one log line is, exactly as `decode_generally` says: the compiled shape of the server's
    lines first, the general parser for any other line."""
    stripped = line.strip()
    return decode_compiled(stripped) or decode_generally(stripped)


def decode_compiled(stripped: bytes) -> Decoded | None:
    """The event of a line (stripped of surrounding whitespace) in the shape the server writes,
    found by the logger the formatter names third on the line; else None, and the general parser
    decides."""
    # A \u0000 escape: stored whole, and NUL replaced in every column. A server line has a
    # backslash only in a text that needs one, so the slower search is rarely made.
    if b"\\" in stripped and b"\\u0000" in stripped:
        return None
    at = stripped.find(_LOGGER, 0, _LOGGER_WITHIN)
    if at < 0:
        return None
    start = at + len(_LOGGER)
    compiled = COMPILED.get(stripped[start : stripped.find(b'"', start, _LOGGER_WITHIN)])
    if compiled is None or (row := compiled.row(stripped)) is None:
        return None
    return compiled.family, row, False
