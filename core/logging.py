"""JSON-lines logging: one event per line, a stable `message`, the event's fields beside it.

Loggers pass structured fields with `extra={"fields": {...}}`; they become top-level keys.
Everything goes to stderr, so stdout stays free for the stdio transport's JSON-RPC. The servers'
own lines use the same formatter (tomtom_mcp/server-logging.json), and Python warnings are
logged (`configure`), so every line the server writes is one JSON object.
"""

from __future__ import annotations

import json
import logging
import logging.config
import os
import socket
from datetime import UTC, datetime
from typing import Any

REPLICA = os.environ.get("HOSTNAME") or socket.gethostname()


class JsonLinesFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        event: dict[str, object] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
            "replica": REPLICA,
            "pid": record.process,
        }
        fields = getattr(record, "fields", None)
        if isinstance(fields, dict):
            event.update(fields)
        if record.exc_info:
            event["exception"] = self.formatException(record.exc_info)
        return json.dumps(event, ensure_ascii=False, default=str, separators=(",", ":"))


def log_event(logger: logging.Logger, level: int, message: str, **fields: object) -> None:
    """Log one structured event with a stable message."""
    logger.log(level, message, extra={"fields": fields})


def configure(config: dict[str, Any]) -> None:
    """Django's LOGGING_CONFIG: the dict config, and Python warnings through it (as JSON)."""
    logging.config.dictConfig(config)
    logging.captureWarnings(True)
