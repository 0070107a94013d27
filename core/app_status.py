"""The app-status log: what the server says about app data and widgets, one JSON line each.

The messages are a contract: `analytics` ingests lines by their exact `message`, so they never
change wording. docs/app-status.md documents every field; tests check both sides.

Every line carries `event: "app_status"`, `kind` (the short name below), `tool`, `client`,
`user_agent` and `request_id`, plus the fields of its kind.
"""

from __future__ import annotations

import logging
from enum import Enum
from typing import Any, TypedDict

from core.logging import log_event

logger = logging.getLogger("tools.app_status")


class AppStatus(Enum):
    """(short kind, exact log message, level)."""

    APP_DATA = ("app_data", "App data", logging.INFO)
    TOO_LARGE = ("too_large", "App data too large for the result: the app can't draw", logging.WARNING)
    FETCHED = ("fetched", "App data fetched", logging.INFO)
    HOST_DROPPED = ("host_dropped", "App data fetched: host dropped it", logging.WARNING)
    DECODE_FAILED = ("decode_failed", "App data fetched: app failed to decode it", logging.WARNING)
    FETCH_FAILED = ("fetch_failed", "App data fetch failed", logging.WARNING)
    DRAWN = ("drawn", "App drawn", logging.INFO)
    FAILED = ("failed", "App failed", logging.WARNING)
    # Governance answers are events too: who still calls old names or old inputs.
    RETIRED_TOOL = ("retired_tool", "Retired tool called", logging.WARNING)
    OUTDATED_CALL = ("outdated_call", "Outdated call: the tool's inputs changed", logging.WARNING)

    def __init__(self, kind: str, message: str, level: int) -> None:
        self.kind = kind
        self.message = message
        self.level = level

    @classmethod
    def by_message(cls, message: str) -> AppStatus | None:
        return _BY_MESSAGE.get(message)


_BY_MESSAGE = {status.message: status for status in AppStatus}


class Caller(TypedDict):
    """The fields every line carries about the call it reports on (`**` them into `emit`)."""

    tool: str
    client: str
    user_agent: str | None
    request_id: str | None


def emit(
    status: AppStatus,
    *,
    tool: str,
    client: str,
    user_agent: str | None,
    request_id: str | None = None,
    **fields: Any,
) -> None:
    """Write one app-status line (None-valued fields are left out)."""
    log_event(
        logger,
        status.level,
        status.message,
        event="app_status",
        kind=status.kind,
        tool=tool,
        client=client,
        user_agent=user_agent,
        request_id=request_id,
        **{k: v for k, v in fields.items() if v is not None},
    )
