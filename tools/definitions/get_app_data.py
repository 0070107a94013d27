"""tomtom-get-app-data (app-only): the data-viz widget's data, made again from its own input.

The data-viz widget calls it when its result arrived without app data: too large to inline,
dropped by the host, or not decodable. It sends the tomtom-data-viz input it was shown, and
whichever replica answers runs tomtom-data-viz again (which only downloads `data_url`): the
server keeps no app data between requests, so there is nothing to miss. Any other tool is
refused: a TomTom tool's widget never runs its tool again (a second, billed request).

Every call is one app-status line (docs/app-status.md): `App data fetched` (the data was too
large), `App data fetched: host dropped it`, `App data fetched: app failed to decode it`, or
`App data fetch failed` with the error, also when `tool` or `arguments` are refused.

`arguments` lists tomtom-data-viz's input names (so tools/list does not carry that schema twice);
`run` parses it as that tool does, so every problem is named inside it, and logged as a failed
fetch: `arguments.layers[0].type`, `arguments.geojson: is not JSON`, `arguments.data_url: ...`.
"""

from __future__ import annotations

import asyncio
from typing import Any, Literal

from pydantic import Field, create_model, model_validator

from core.app_status import DecodeFailed, Fetched, FetchFailed, HostDropped
from core.errors import ErrorCode, ToolError, conflicting
from core.events import ERROR_TEXT_LENGTH, TOOL_NAME_LENGTH, clip, log
from tools.context import CallContext
from tools.definition import define_tool
from tools.definitions import data_viz
from tools.definitions.report_app_status import scrubbed
from tools.inputs import ToolInput, parse, problem
from tools.shaping.appdata import encode

REFUSED_TOOL = (
    f"only {data_viz.TOOL.name} app data can be made again; the widget of {{tool!r}} draws from its result, "
    "since running a TomTom tool again would be a second, billed request"
)


DataVizArguments = create_model(
    "DataVizArguments",
    __base__=ToolInput,
    # create_model's field keywords, built from the names: no overload takes a ** of tuples.
    **{name: (Any, None) for name in data_viz.DataVizInput.model_fields},  # type: ignore[call-overload]
)
"""tomtom-data-viz's input names, each value unchecked here: `run` checks them as that tool does."""


class GetAppDataInput(ToolInput):
    tool: str = Field(max_length=TOOL_NAME_LENGTH, description=f"Whose app data: only {data_viz.TOOL.name}.")
    arguments: DataVizArguments = Field(
        description=f"The {data_viz.TOOL.name} input the widget was shown (checked as that tool checks it)."
    )
    reason: Literal["too_large", "host_dropped", "decode_failed"] = Field(
        description="Why the result had no usable app data."
    )
    error: str | None = Field(None, max_length=500, description="What went wrong decoding it (decode_failed).")

    @model_validator(mode="before")
    @classmethod
    def _data_viz_only(cls, data: Any) -> Any:
        # Before `arguments` is read: another tool's input has other names, whose refusal would
        # hide the reason the call is refused.
        tool = data.get("tool") if isinstance(data, dict) else None
        arguments = data.get("arguments") if isinstance(data, dict) else None
        foreign = isinstance(arguments, dict) and not set(arguments) <= set(data_viz.DataVizInput.model_fields)
        if isinstance(tool, str) and tool != data_viz.TOOL.name and foreign:
            raise problem(REFUSED_TOOL.format(tool=tool), item="tool")
        return data


def _failed(tool: str, error: ToolError, context: CallContext) -> None:
    log(FetchFailed(**context.caller(tool), error_code=error.code.value, error=clip(error.message, ERROR_TEXT_LENGTH)))


def _nested(error: ToolError) -> ToolError:
    """A data-viz `invalid_arguments` error, named inside `arguments` (`arguments.geojson`)."""
    if error.code is not ErrorCode.INVALID_ARGUMENTS:
        return error
    if "arguments" in error.data:
        return conflicting(
            *(f"arguments.{name}" for name in error.data["arguments"]), message=error.message.split(": ", 1)[-1]
        )
    if "argument" not in error.data:
        return error
    name = error.data["argument"]
    message = error.message.removeprefix(f"{name}: ")
    return ToolError(error.code, f"arguments.{name}: {message}", argument=f"arguments.{name}")


async def run(input: GetAppDataInput, context: CallContext) -> dict[str, Any]:
    if input.tool != data_viz.TOOL.name:
        refusal = ToolError(
            ErrorCode.INVALID_ARGUMENTS, f"tool: {REFUSED_TOOL.format(tool=input.tool)}", argument="tool"
        )
        _failed(input.tool, refusal, context)
        raise refusal
    try:
        viz_input = parse(data_viz.DataVizInput, input.arguments.model_dump(exclude_unset=True))
        viz = await data_viz.visualise(viz_input, context)
    except ToolError as error:
        nested = _nested(error)
        _failed(input.tool, nested, context)
        raise nested from None
    encoded = await asyncio.to_thread(encode, viz.app_data)
    who, reason = context.caller(input.tool), input.reason
    if reason == "too_large":
        raw_bytes = len(viz.app_data["data_viz"]["geojson"].encode())
        log(Fetched(**who, source=viz.source, reason=reason, raw_bytes=raw_bytes))
    elif reason == "host_dropped":
        log(HostDropped(**who, source=viz.source, reason=reason))
    else:
        reported = input.error if input.error is not None else "unknown"
        log(DecodeFailed(**who, source=viz.source, reason=reason, error=scrubbed(reported, context)))
    return {"tool": input.tool, "app_data": encoded}


TOOL = define_tool(
    name="tomtom-get-app-data",
    title="TomTom Get App Data",
    description=(
        "Map widget only: a tomtom-data-viz result's map data made again from its input, when the "
        "result could not carry it."
    ),
    input=GetAppDataInput,
    run=run,
    app_only=True,
)
