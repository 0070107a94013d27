"""What the server writes for a log record: its line, decoded, as an operator reads it."""

from __future__ import annotations

import json
import logging
from typing import Any

from core.events import ENVELOPE
from core.logging import JsonLinesFormatter

_FORMATTER = JsonLinesFormatter()


def line(record: logging.LogRecord) -> dict[str, Any]:
    """The record's JSON line as the server writes it, decoded."""
    return json.loads(_FORMATTER.format(record))


def fields(record: logging.LogRecord) -> dict[str, Any]:
    """The fields the record's line carries besides the formatter's envelope (time, level, logger,
    message, replica, pid): an event's marks and fields."""
    return {name: value for name, value in line(record).items() if name not in ENVELOPE}


def app_status(records: list[logging.LogRecord]) -> list[dict[str, Any]]:
    """The app-status lines among `records`: each its message and fields."""
    return [
        {"message": record.getMessage(), **found}
        for record in records
        if (found := fields(record)).get("event") == "app_status"
    ]
