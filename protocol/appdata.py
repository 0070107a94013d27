"""App data in the tool result: the text, the result's `_meta`, and the app-data interceptor.

The decision is docs/adr/0008-app-data-in-the-result.md; the wire shape is docs/widgets.md.
A tool drawn by a widget answers an `Answer` (tools.definition); `deliver_app_data`, an
interceptor the protocol layer puts around every call, turns it into the result: the text the
model reads and the result's `_meta`, with the app data (tools.shaping.appdata) inline
whenever the whole serialised `CallToolResult` stays under `RESULT_LIMIT` characters. Every
step is an app-status line (docs/app-status.md).

A client that is not offered widgets (`CallContext.widgets` false: governance.client_surface) gets
the answer's data alone, even when it still sends `show_ui`: no `show_ui` echo, no `_meta`.

An error result goes to the widget too: `name_errors` gives the error result of a tool a widget
draws, answered to a client offered widgets, the `_meta` a widget joins by (`tool`,
`request_id`; its text is unchanged), and logs its `App data` line (`delivery` `error`), the
delivery the widget's `failed` report joins.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from core.app_status import AppData, Simplification, TooLarge
from core.events import log
from tools.definition import Answer
from tools.dispatch import Next, ToolCall, ToolOutcome, dumps
from tools.shaping.appdata import Fitted, fit
from tools.widgets import MAP_APP_CALLS

APP_DATA_KEY = "com.tomtom/app-data"
"""The result `_meta` key that carries the encoded app data."""
CALLABLE_KEY = "com.tomtom/callable-tools"
"""The result `_meta` key naming the tools of `MAP_APP_CALLS` this caller is listed."""

RESULT_LIMIT = 120_000
"""The whole serialised result (text, `_meta`, envelope) stays under this many characters."""

PROTOCOL_HEADROOM = 512
"""Characters kept free for what the transport adds to a result (`resultType`, server info)."""


@dataclass(frozen=True, slots=True)
class Delivery:
    """An answer as it travels: the text the model reads, and the result's only `_meta`.

    `fitted` is None when the answer has no app data to deliver (`show_ui` false, or a widget
    that draws from the tool input); `result_chars` is the serialised result's size.
    """

    data: dict[str, Any]
    text: str
    meta: dict[str, Any]
    fitted: Fitted | None
    result_chars: int

    @property
    def inline(self) -> bool:
        return self.fitted is not None and self.fitted.encoded is not None


def result_chars(text: str, meta: dict[str, Any]) -> int:
    """Characters of the serialised tool result carrying `text` and `meta`."""
    return len(dumps({"content": [{"type": "text", "text": text}], "isError": False, "_meta": meta}))


def deliver(tool: str, answer: Answer, request_id: str, callable_tools: Sequence[str] = ()) -> Delivery:
    """The text and `_meta` of `answer`, with its app data inline when the result can carry it.

    The text is the tool's data plus `show_ui`, and `tool` when the app data is inline (so a
    widget whose host dropped `_meta` can tell). `_meta` carries `show_ui`, `tool`,
    `request_id` (the delivering call's: the widget echoes it in its status report, the join key
    to this call's `App data` line), and, when there is app data, `delivery` (`inline` or
    `too_large`) and `com.tomtom/app-data`; with `show_ui`, `com.tomtom/callable-tools` names
    `callable_tools`, the map app's card tools its caller is listed.
    """
    plain = {**answer.data, "show_ui": answer.show_ui}
    meta: dict[str, Any] = {"show_ui": answer.show_ui, "tool": tool, "request_id": request_id}
    if answer.show_ui:
        meta[CALLABLE_KEY] = list(callable_tools)
    if not answer.show_ui or answer.app_data is None:
        text = dumps(plain)
        return Delivery(plain, text, meta, None, result_chars(text, meta))
    named = {**plain, "tool": tool}
    named_text = dumps(named)
    shell = {**meta, "delivery": "inline", APP_DATA_KEY: ""}
    room = RESULT_LIMIT - PROTOCOL_HEADROOM - result_chars(named_text, shell) - 1
    fitted = fit(answer.app_data, room, refetchable=answer.refetchable)
    if fitted.encoded is None:
        meta["delivery"] = "too_large"
        text = dumps(plain)
        return Delivery(plain, text, meta, fitted, result_chars(text, meta))
    meta.update({"delivery": "inline", APP_DATA_KEY: fitted.encoded})
    return Delivery(named, named_text, meta, fitted, result_chars(named_text, meta))


def error_meta(tool: str, request_id: str) -> dict[str, Any]:
    """The `_meta` of an error result a widget draws: what names the call, as a success's does."""
    return {"tool": tool, "request_id": request_id}


async def name_errors(call: ToolCall, next_: Next) -> ToolOutcome:
    """Interceptor (outside every interceptor that may answer an error, inside alias resolution,
    so an alias's call is named by the tool that answered): an error result of a tool a widget
    draws, to a client offered widgets, carries `error_meta` and logs `App data` with `delivery`
    `error` (unless its app data was logged already: a result refused after it was delivered, too
    long for `MCP_MAX_FULL_CHARS`, joins that delivery). Any other result passes unchanged."""
    outcome = await next_(call)
    tool, context = call.tool, call.context
    if not outcome.is_error or outcome.meta is not None or not context.widgets or tool is None or tool.widget is None:
        return outcome
    outcome.meta = error_meta(call.name, context.request_id)
    if not call.delivered:  # else its app data was logged, and then the result refused (too long)
        log(AppData(**context.caller(call.name), delivery="error"))
    return outcome


async def deliver_app_data(call: ToolCall, next_: Next) -> ToolOutcome:
    """Interceptor: an `Answer` becomes its result text and `_meta`, with the app data fitted
    into it (on a worker thread: fitting a long route is CPU work), and the app-status lines
    that say how."""
    outcome = await next_(call)
    answer = outcome.answer
    if answer is None:
        return outcome
    if not call.context.widgets or (call.tool is not None and call.tool.widget is None):
        # a client without widgets, or a tool no widget draws (a picture): the answer alone
        return ToolOutcome(answer.data, image=outcome.image)
    fitting = answer.show_ui and answer.app_data is not None
    request_id = call.context.request_id
    offered = set(call.offered()) if answer.show_ui else set()
    callable_tools = [name for name in MAP_APP_CALLS if name in offered]
    delivery = (
        await asyncio.to_thread(deliver, call.name, answer, request_id, callable_tools)
        if fitting
        else deliver(call.name, answer, request_id, callable_tools)
    )
    fitted = delivery.fitted
    if fitted is not None:
        call.delivered = True
        who = call.context.caller(call.name)
        simplification = None
        if (reduced := fitted.simplification) is not None:
            simplification = Simplification(
                original_points=reduced.original_points, points=reduced.points, max_error_m=reduced.max_error_m
            )
        log(
            AppData(
                **who,
                delivery=delivery.meta["delivery"],
                raw_bytes=fitted.raw_bytes,
                encoded_chars=len(fitted.encoded) if fitted.encoded else None,
                result_chars=delivery.result_chars,
                simplification=simplification,
            )
        )
        if not delivery.inline and not answer.refetchable:
            log(TooLarge(**who, raw_bytes=fitted.raw_bytes, result_chars=delivery.result_chars))
    return ToolOutcome(delivery.data, meta=delivery.meta, image=outcome.image, _text=delivery.text)
