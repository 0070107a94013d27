"""tomtom-get-app-data (app-only): the data-viz widget's data, made again from its own input.

The data-viz widget calls it when its result arrived without app data: too large to inline,
dropped by the host, or not decodable. It sends the tomtom-data-viz input it was shown, and
whichever replica answers runs tomtom-data-viz again (which only downloads `data_url`): the
server keeps no app data between requests, so there is nothing to miss. Any other tool is
refused: a TomTom tool's widget never runs its tool again (a second, billed request).

Every call is one app-status line (docs/app-status.md): `App data fetched` (the data was too
large), `App data fetched: host dropped it`, `App data fetched: app failed to decode it`, or
`App data fetch failed` with the error.
"""

from __future__ import annotations

import asyncio
from typing import Any

from tools.app_status import AppStatus, emit
from tools.context import CallContext
from tools.definition import define_tool
from tools.definitions import data_viz
from tools.definitions.report_app_status import scrubbed
from tools.errors import ErrorCode, ToolError
from tools.schema import validate_arguments
from tools.shaping.appdata import encode
from tools.widgets import APP_ONLY

REASONS = {
    "too_large": AppStatus.FETCHED,
    "host_dropped": AppStatus.HOST_DROPPED,
    "decode_failed": AppStatus.DECODE_FAILED,
}

INPUT_SCHEMA = {
    "type": "object",
    "properties": {
        "tool": {"type": "string", "maxLength": 128, "description": "Whose app data: only tomtom-data-viz."},
        "arguments": {
            "type": "object",
            "properties": {name: {} for name in data_viz.INPUT_SCHEMA["properties"]},
            "additionalProperties": False,
            "description": "The tomtom-data-viz input the widget was shown (checked as that tool checks it).",
        },
        "reason": {"type": "string", "enum": list(REASONS), "description": "Why the result had no usable app data."},
        "error": {"type": "string", "maxLength": 500, "description": "What went wrong decoding it (decode_failed)."},
    },
    "required": ["tool", "arguments", "reason"],
    "additionalProperties": False,
}


async def run(arguments: dict[str, Any], context: CallContext) -> dict[str, Any]:
    tool = arguments["tool"]
    who = {"tool": tool, "client": context.client_name, "user_agent": context.user_agent,
           "request_id": context.request_id}  # fmt: skip
    try:
        if tool != data_viz.TOOL.name:
            raise ToolError(
                ErrorCode.INVALID_ARGUMENTS,
                f"tool: only {data_viz.TOOL.name} app data can be made again; the widget of {tool!r} draws from its "
                "result, since running a TomTom tool again would be a second, billed request",
                argument="tool",
            )
        assert data_viz.TOOL.validator is not None
        try:
            validate_arguments(data_viz.TOOL.validator, arguments["arguments"])
        except ToolError as error:
            raise ToolError(error.code, f"arguments.{error.message}", argument="arguments") from None
        viz = await data_viz.visualise(arguments["arguments"], context)
    except ToolError as error:
        emit(AppStatus.FETCH_FAILED, **who, error_code=error.code.value, error=error.message)
        raise
    encoded = await asyncio.to_thread(encode, viz.app_data)
    status = REASONS[arguments["reason"]]
    if status is AppStatus.FETCHED:
        emit(status, **who, source=viz.source, raw_bytes=len(viz.app_data["data_viz"]["geojson"].encode()))
    elif status is AppStatus.HOST_DROPPED:
        emit(status, **who, source=viz.source)
    else:
        emit(status, **who, source=viz.source, error=scrubbed(arguments.get("error", "unknown"), context))
    return {"tool": tool, "app_data": encoded}


TOOL = define_tool(
    name="tomtom-get-app-data",
    title="TomTom Get App Data",
    description=(
        "For the map widget only: makes a tomtom-data-viz result's map data again from the same input, "
        "when the result could not carry it."
    ),
    input_schema=INPUT_SCHEMA,
    run=run,
    requires=(),
    meta=APP_ONLY,
)
