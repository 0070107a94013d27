"""tomtom-report-app-status (app-only): a widget says how it did; the server logs it.

The map widget reports once per tool result it handles: `drawn` (with `features`, the number
it drew) or `failed` (with the `stage` that failed and the `error`), the `source` of its data
and the time it took. Each report is one app-status line, `App drawn` or `App failed`
(docs/app-status.md), with the reporting client's name and User-Agent. A malformed report is
answered `invalid_arguments` and logged as nothing but the call itself.

Error texts come from a browser and may quote a URL: any TomTom key in them is masked first.
"""

from __future__ import annotations

import re
from typing import Any

from tools.app_status import AppStatus, emit
from tools.context import CallContext
from tools.definition import Annotations, define_tool
from tools.errors import conflicting, invalid
from tools.widgets import APP_ONLY

SOURCES = ["inline", "data_url", "tool_input", "none"]
STAGES = ["init", "result", "decode", "fetch", "render"]
KEY_IN_URL = re.compile(r"(?i)((?<![\w-])(?:key|api[_-]?key)=)[^&#\s\"'<>]+")
"""`key=…` (or `apiKey=`, `api_key=`) with its value, in a URL or in prose."""

INPUT_SCHEMA = {
    "type": "object",
    "properties": {
        "tool": {"type": "string", "pattern": "^[A-Za-z0-9._-]{1,128}$", "description": "The tool whose result it is."},
        "outcome": {"type": "string", "enum": ["drawn", "failed"]},
        "source": {"type": "string", "enum": SOURCES, "description": "Where the widget's data came from."},
        "stage": {"type": "string", "enum": STAGES, "description": "Where it failed (failed only)."},
        "duration_ms": {"type": "number", "minimum": 0, "maximum": 3_600_000},
        "features": {"type": "integer", "minimum": 0, "description": "Features drawn (drawn only)."},
        "error": {"type": "string", "minLength": 1, "maxLength": 500, "description": "What failed (failed only)."},
    },
    "required": ["tool", "outcome", "source", "duration_ms"],
    "additionalProperties": False,
}


def scrubbed(text: str, context: CallContext) -> str:
    """`text` without any key this call knows of, and without any `key=` value."""
    for secret in context.secrets():
        text = text.replace(secret, "***")
    return KEY_IN_URL.sub(r"\1***", text)


def check_report(arguments: dict[str, Any]) -> None:
    if arguments["outcome"] == "drawn":
        if "features" not in arguments:
            raise invalid("features", "is required when outcome is drawn")
        for name in ("stage", "error"):
            if name in arguments:
                raise conflicting("outcome", name, message=f"a drawn widget has no {name}")
    else:
        for name in ("stage", "error"):
            if name not in arguments:
                raise invalid(name, "is required when outcome is failed")


async def run(arguments: dict[str, Any], context: CallContext) -> dict[str, Any]:
    check_report(arguments)
    who = {"tool": arguments["tool"], "client": context.client_name, "user_agent": context.user_agent,
           "request_id": context.request_id}  # fmt: skip
    duration = round(float(arguments["duration_ms"]), 1)
    if arguments["outcome"] == "drawn":
        status = AppStatus.DRAWN
        emit(status, **who, source=arguments["source"], duration_ms=duration, features=arguments["features"])
    else:
        status = AppStatus.FAILED
        emit(status, **who, source=arguments["source"], stage=arguments["stage"], duration_ms=duration,
             error=scrubbed(arguments["error"], context))  # fmt: skip
    return {"logged": status.message}


TOOL = define_tool(
    name="tomtom-report-app-status",
    title="TomTom Report App Status",
    description="For the map widget only: reports whether it drew the result or failed, for the server log.",
    input_schema=INPUT_SCHEMA,
    run=run,
    annotations=Annotations(read_only=False, destructive=False, idempotent=False, open_world=False),
    requires=(),
    meta=APP_ONLY,
)
