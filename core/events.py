"""Every log event the server writes, declared once as a typed record.

An event is a subclass of `Event`, a frozen msgspec Struct. Its class variables say where and
how it is logged: the logger (`LOGGER`), the fixed message (`MESSAGE`, a contract: readers find
events by it), the level (`LEVEL`), and fields every line of it carries with a fixed value
(`marks()`). Its attributes are its fields, in the order they are written, each with a type, the
bounds of its values and a role, all in its annotation:

    tool: Annotated[ToolName, DIMENSION]

- a **dimension** is what reports group the events by (a tool, a client name, an outcome);
- a **measure** is what they count or sum (upstream calls, bytes, milliseconds);
- a **detail** is kept with a stored event and never rolled up (a request id, an error text).

A text field whose values form a closed set says so (`OneOf(...)`): readers still keep a value
outside it (a newer server's), and a rollup may give each value a column of its own.

A field without a default is required: every line has it, and a line without it is malformed
(`analytics` refuses it). A field with a default may be absent; a null says the same.

The server writes an event with `log(event)` (one JSON line: the formatter's envelope of `time`,
`level`, `logger`, `message`, `replica` and `pid`, then the marks, then the fields in their
declared order; core/logging.py). Analytics reads lines through the same declaration (the
compiled decoder and the general parser are both built from `describe(...)`), and its system
checks hold its tables and rollups against it. The writer's values must keep the declared bounds:
values a client chose are clipped where they enter (`clip`), and the tests write the longest ones.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum
from typing import Annotated, Any, ClassVar, Literal, Union, get_args, get_origin, get_type_hints

import msgspec
from msgspec import Meta


class Role(StrEnum):
    DIMENSION = "dimension"
    """Reports group by it; a rollup keys its rows on it."""
    MEASURE = "measure"
    """Reports count or sum it; a rollup adds it up."""
    DETAIL = "detail"
    """Stored with the event, never rolled up."""


DIMENSION, MEASURE, DETAIL = Role.DIMENSION, Role.MEASURE, Role.DETAIL


@dataclass(frozen=True, slots=True)
class OneOf:
    """Annotation marker: the values a text field takes, a closed set (`Annotated[ShortText, OneOf(...)]`)."""

    values: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Nouns:
    """Annotation marker: what the values of a text type are, in words, for the reference
    (`Annotated[str, Meta(max_length=128), Nouns("argument paths")]`): a list of them reads
    "list of at most 32 argument paths". Decoders ignore it."""

    words: str


ENVELOPE: tuple[str, ...] = ("time", "level", "logger", "message", "replica", "pid")
"""The fields the formatter writes first on every line (core/logging.py); no event declares them."""

# -- The value types every event draws from: bounds in one place ----------------------------------

MAX_WHOLE = 2**63 - 1
"""The largest whole number a field may hold: a signed 64-bit column keeps it."""

TOOL_NAME_LENGTH = 128
CLIENT_NAME_LENGTH = 256
USER_AGENT_LENGTH = 512
REQUEST_ID_LENGTH = 64
SESSION_KEY_LENGTH = 64
SHORT_TEXT_LENGTH = 64
"""A name from a closed set: a backend, a transport, a stage, a source, an error code."""
TENANT_LENGTH = 100
ERROR_TEXT_LENGTH = 2_000
TRACEBACK_LENGTH = 20_000

ToolName = Annotated[str, Meta(max_length=TOOL_NAME_LENGTH)]
"""A tool name as the client sent it (clipped: an unknown one may be anything)."""
ClientName = Annotated[str, Meta(max_length=CLIENT_NAME_LENGTH)]
"""The client name (CONTEXT.md), cut to its first 256 characters where it enters."""
UserAgent = Annotated[str, Meta(max_length=USER_AGENT_LENGTH)]
RequestId = Annotated[str, Meta(max_length=REQUEST_ID_LENGTH)]
SessionKey = Annotated[str, Meta(max_length=SESSION_KEY_LENGTH)]
"""What names the client session a call came in on, and nothing else: over HTTP the nonce of
the signed `Mcp-Session-Id` (protocol.identity.session_label, which cannot be replayed as an id),
over stdio one per server process; absent without one (a sessionless HTTP caller). A widget's
report joins a delivery of its own session only (the widget funnel, docs/analytics.md)."""
ShortText = Annotated[str, Meta(max_length=SHORT_TEXT_LENGTH)]
TenantName = Annotated[str, Meta(max_length=TENANT_LENGTH)]
ErrorText = Annotated[str, Meta(max_length=ERROR_TEXT_LENGTH)]
Traceback = Annotated[str, Meta(max_length=TRACEBACK_LENGTH)]
"""A formatted traceback, keys masked, its last `TRACEBACK_LENGTH` characters (the innermost frames)."""
Count = Annotated[int, Meta(ge=0, le=MAX_WHOLE)]
"""How many of something: calls, bytes, points, features."""
Milliseconds = Annotated[float, Meta(ge=0, le=1e12)]
"""A duration: finite, not negative (msgspec takes a JSON integer for it too)."""
Metres = Annotated[float, Meta(ge=0, le=1e12)]
MAX_NAMES = 32
"""The most tool names a list of them holds (a retired tool's replacements)."""
ToolNames = Annotated[list[ToolName], Meta(max_length=MAX_NAMES)]


def clip(text: str, length: int) -> str:
    """`text` cut to its first `length` characters: for values a client chose (a tool name, a
    User-Agent) before they enter an event."""
    return text if len(text) <= length else text[:length]


# -- Events ----------------------------------------------------------------------------------------


class Event(msgspec.Struct, kw_only=True, frozen=True, gc=False):
    """A log event: see the module docstring. Subclasses set the class variables below, and
    `kw_only=True, frozen=True` (msgspec applies its options to the fields a class itself
    defines): fields are written in the order declared, a required one may follow one with a
    default, and an event never changes once made."""

    LOGGER: ClassVar[str]
    MESSAGE: ClassVar[str]
    LEVEL: ClassVar[int] = logging.INFO

    @classmethod
    def marks(cls) -> tuple[tuple[str, str], ...]:
        """Fields every line of the event carries with a fixed value, written after the envelope."""
        return ()

    def level(self) -> int:
        """The level this event is logged at (`LEVEL` unless the event says otherwise)."""
        return self.LEVEL


def log(event: Event, *, exc_info: bool = False) -> None:
    """Write one event: one JSON line on its logger (core/logging.py formats it); with
    `exc_info`, the exception being handled too."""
    logger = logging.getLogger(event.LOGGER)
    level = event.level()
    if logger.isEnabledFor(level):
        logger.log(level, event.MESSAGE, exc_info=exc_info, extra={"event": event})


# -- What a declaration says, for readers and checks -----------------------------------------------

Kind = Literal["text", "whole", "number", "texts", "record", "records"]
"""How a field's value is written: a JSON string, an integer, a number, a list of strings, an
object of its own fields (a nested record, e.g. a simplification), or a list of such objects."""


@dataclass(frozen=True, slots=True)
class FieldSpec:
    """One field of an event as declared: what a reader and a check need to know of it."""

    name: str
    kind: Kind
    role: Role
    required: bool
    nullable: bool
    annotation: Any
    """The declared type without its role (the msgspec type a decoder checks values against)."""
    max_length: int | None = None
    minimum: float | None = None
    maximum: float | None = None
    values: tuple[str, ...] | None = None
    """The closed set of values (`OneOf`), when declared."""
    parts: tuple[FieldSpec, ...] = ()
    """The fields of a nested record."""
    record: type | None = None
    """The class of a nested record."""


@dataclass(frozen=True, slots=True)
class EventSpec:
    """An event as declared: where it is logged, with which message, and its fields."""

    event: type[Event]
    logger: str
    message: str
    marks: tuple[tuple[str, str], ...]
    fields: tuple[FieldSpec, ...]

    def field(self, name: str) -> FieldSpec:
        return next(spec for spec in self.fields if spec.name == name)

    def names(self, role: Role | None = None) -> tuple[str, ...]:
        return tuple(spec.name for spec in self.fields if role is None or spec.role is role)


def describe(event: type[Event]) -> EventSpec:
    """The declaration of `event`, read from its class."""
    return EventSpec(event, event.LOGGER, event.MESSAGE, event.marks(), _fields(event))


def _fields(record: type[msgspec.Struct]) -> tuple[FieldSpec, ...]:
    hints = get_type_hints(record, include_extras=True)
    info = {field.name: field for field in msgspec.inspect.type_info(record).fields}  # type: ignore[attr-defined]
    specs = []
    for name in record.__struct_fields__:
        annotation, markers = _markers(hints[name])
        roles = [marker for marker in markers if isinstance(marker, Role)]
        closed = [marker.values for marker in markers if isinstance(marker, OneOf)]
        typ, nullable = _without_none(info[name].type)
        specs.append(
            FieldSpec(
                name=name,
                kind=_kind(typ),
                role=roles[0] if roles else DETAIL,
                required=info[name].required,
                nullable=nullable,
                annotation=annotation,
                max_length=getattr(typ, "max_length", None),
                minimum=_first(getattr(typ, "ge", None), getattr(typ, "gt", None)),
                maximum=_first(getattr(typ, "le", None), getattr(typ, "lt", None)),
                values=closed[0] if closed else None,
                parts=_fields(nested) if (nested := _record_of(typ)) is not None else (),
                record=nested,
            )
        )
    return tuple(specs)


def _markers(annotation: Any) -> tuple[Any, list[Role | OneOf]]:
    """The annotation without this module's markers (its role, its closed set), and the markers."""
    if get_origin(annotation) is Union:  # `X | None`: the markers are inside X's annotation
        inner = [_markers(arg) for arg in get_args(annotation)]
        return Union[tuple(a for a, _found in inner)], [m for _a, found in inner for m in found]  # noqa: UP007
    metadata = getattr(annotation, "__metadata__", ())
    markers = [item for item in metadata if isinstance(item, Role | OneOf)]
    if not markers:
        return annotation, []
    kept = tuple(item for item in metadata if not isinstance(item, Role | OneOf))
    base = annotation.__origin__
    return (Annotated[(base, *kept)] if kept else base), markers


def _without_none(typ: Any) -> tuple[Any, bool]:
    if isinstance(typ, msgspec.inspect.UnionType):
        types = [t for t in typ.types if not isinstance(t, msgspec.inspect.NoneType)]
        if len(types) == 1:
            return types[0], len(types) < len(typ.types)
    return typ, False


def _kind(typ: Any) -> Kind:
    inspect = msgspec.inspect
    if isinstance(typ, inspect.StrType) or (
        isinstance(typ, inspect.LiteralType) and all(isinstance(v, str) for v in typ.values)
    ):
        return "text"
    if isinstance(typ, inspect.IntType):
        return "whole"
    if isinstance(typ, inspect.FloatType):
        return "number"
    if isinstance(typ, inspect.ListType) and isinstance(typ.item_type, inspect.StrType):
        return "texts"
    if isinstance(typ, inspect.ListType) and isinstance(typ.item_type, inspect.StructType):
        return "records"
    if isinstance(typ, inspect.StructType):
        return "record"
    raise TypeError(
        f"an event field cannot be of type {typ!r}: declare text, a whole number, a number, "
        "a list of texts, a nested record or a list of them"
    )


def _record_of(typ: Any) -> type | None:
    """The class of a nested record, or of the items of a list of them."""
    inspect = msgspec.inspect
    if isinstance(typ, inspect.ListType):
        typ = typ.item_type
    return typ.cls if isinstance(typ, inspect.StructType) else None


def _first(*values: float | None) -> float | None:
    return next((value for value in values if value is not None), None)


def declaration_problems(events: Iterable[type[Event]]) -> list[str]:
    """What is wrong with a set of declarations (tests/core runs it): a field named like the
    envelope, a message used twice on one logger, a mark that is also a field."""
    problems: list[str] = []
    seen: dict[tuple[str, str], type[Event]] = {}
    for event in events:
        spec = describe(event)
        key = (spec.logger, spec.message)
        if key in seen:
            problems.append(f"{event.__name__}: {spec.message!r} on {spec.logger} is also {seen[key].__name__}'s")
        seen[key] = event
        names = [*spec.names(), *(name for name, _value in spec.marks)]
        for name in names:
            if name in ENVELOPE:
                problems.append(f"{event.__name__}.{name}: the formatter writes that field")
        if len(set(names)) != len(names):
            problems.append(f"{event.__name__}: a field or mark named twice")
    return problems
