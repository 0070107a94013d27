"""Every log event the server writes, in one list, and the reference docs/log-events.md holds."""

from __future__ import annotations

import logging
from typing import Any, Union, get_args, get_origin

from core import operations
from core.app_status import APP_STATUS_EVENTS
from core.calls import ToolCall, ToolCallFailed
from core.events import Event, FieldSpec, Nouns, ToolName, describe
from core.exchange import EXCHANGE_EVENTS

EVENTS: tuple[type[Event], ...] = (
    ToolCall,
    ToolCallFailed,
    *APP_STATUS_EVENTS,
    *EXCHANGE_EVENTS,
    operations.SurfaceUnreadableFromSnapshot,
    operations.SurfaceUnreadableFromFixture,
    operations.SurfaceReadableAgain,
    operations.ScheduledRetirementFired,
    operations.SurfaceRowsSkipped,
    operations.GovernanceClockFailed,
    operations.ClientSurfaceRulesUnreadable,
    operations.TenantsUnreadable,
    operations.TenantKeyUndecryptable,
    operations.HandlerRaised,
    operations.LiveIngestDropped,
    operations.LiveIngestFailed,
    operations.SigningKeysFetched,
    operations.SigningKeysRefused,
    operations.SigningKeysSkipped,
    operations.OAuthClientRegistered,
    operations.OAuthClientRefused,
    operations.OAuthGrantIssued,
    operations.OAuthGrantRevoked,
    operations.OAuthRefreshReused,
    operations.ServerStarted,
    operations.EmbeddedDatabaseMigrated,
    operations.EmbeddedDatabaseNotMigrated,
)


def reference() -> str:
    """Every event as a Markdown section: its message, logger, level and marks, and a row per field
    (docs/log-events.md is this text; `manage.py log_events` prints it)."""
    sections = []
    for event in EVENTS:
        spec = describe(event)
        doc = " ".join((event.__doc__ or "").split())
        level = logging.getLevelName(event.LEVEL).lower()
        lines = [f"### `{spec.message}`", "", f"Logger `{spec.logger}`, {level}. {doc}"]
        if spec.marks:
            marks = ", ".join(f'`"{name}": "{value}"`' for name, value in spec.marks)
            lines += ["", f"Every line also carries {marks}."]
        if spec.fields:
            lines += ["", "| field | value | role |", "| --- | --- | --- |"]
            lines += [f"| `{field.name}` | {_value(field)} | {field.role.value} |" for field in spec.fields]
        sections.append("\n".join(lines))
    return "\n\n".join(sections) + "\n"


def _value(field: FieldSpec) -> str:
    """A field's value in words: its type, bounds, closed set, and whether it may be absent."""
    if field.values:
        text = " \\| ".join(f"`{value}`" for value in field.values)
    elif field.kind == "text":
        text = f"text of at most {field.max_length:,} characters" if field.max_length else "text"
    elif field.kind == "texts":
        text = f"list of at most {field.max_length} {_nouns(field.annotation)}"
    elif field.kind in ("record", "records"):
        parts = ", ".join(f"`{part.name}` ({_value(part)})" for part in field.parts)
        text = f"object of {parts}"
        if field.kind == "records":
            text = f"list of at most {field.max_length} objects of {parts}"
    else:
        text = "whole number" if field.kind == "whole" else "number"
        if field.minimum is not None:
            text += f" ≥ {field.minimum:g}"
    return text if field.required else f"{text}; null or absent when not known"


def _nouns(annotation: Any) -> str:
    """What a list of texts holds, in words: its item type's `Nouns`, tool names for `ToolName`,
    else texts of their declared length."""
    while True:
        if get_origin(annotation) is Union:  # `X | None`
            annotation = next(arg for arg in get_args(annotation) if arg is not type(None))
        elif hasattr(annotation, "__metadata__"):  # Annotated[list[X], ...]
            annotation = annotation.__origin__
        else:
            break
    (item,) = get_args(annotation)
    metadata = getattr(item, "__metadata__", ())
    named = [marker.words for marker in metadata if isinstance(marker, Nouns)]
    if named:
        words = named[0]
    elif item == ToolName:
        return "tool names"
    else:
        words = "texts"
    length = next((m.max_length for m in metadata if getattr(m, "max_length", None)), None)
    return f"{words} of at most {length:,} characters each" if length else words
