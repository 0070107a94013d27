"""The widget lines of the app-status log match docs/app-status.md, the one place analytics reads.

Every widget message is produced the way the server produces it, then compared with its row in
the document: the message text, and each field it carries must be one the row names.
"""

from __future__ import annotations

import logging
import random
import re

import pytest

from core.app_status import BY_MESSAGE
from protocol.appdata import deliver_app_data
from protocol.service import build_dispatcher
from tests.conftest import REPO
from tests.support import logs
from tests.support.long_routes import route_answer
from tools.context import CallContext
from tools.definition import Answer, define_tool
from tools.dispatch import Dispatcher
from tools.inputs import ToolInput
from tools.registry import Registry
from tools.widgets import MAP_APP_URI

COMMON = {
    "time",
    "level",
    "logger",
    "message",
    "event",
    "kind",
    "replica",
    "pid",
    "tool",
    "client",
    "user_agent",
    "request_id",
}
WIDGET_KINDS = {
    "app_data",
    "too_large",
    "fetched",
    "host_dropped",
    "decode_failed",
    "fetch_failed",
    "drawn",
    "failed",
    "cancelled",
}
GEOJSON = '{"type":"Feature","geometry":{"type":"Point","coordinates":[4.9,52.37]},"properties":{}}'


def documented() -> dict[str, tuple[str, set[str]]]:
    """kind -> (message, every name in backticks in its fields column)."""
    rows = {}
    for line in (REPO / "docs" / "app-status.md").read_text().splitlines():
        cells = [cell.strip() for cell in line.replace("\\|", "/").strip().strip("|").split("|")]
        if len(cells) == 4 and cells[0].startswith("`") and cells[2] in ("info", "warning"):
            kind, message = cells[0].strip("`"), cells[1].strip("`")
            rows[kind] = (message, set(re.findall(r"`([^`]+)`", cells[3])))
    return rows


class FakeInput(ToolInput):
    show_ui: bool = False


def fake_map(app_data: dict) -> Dispatcher:
    """A dispatcher with one widget tool answering `app_data`, delivered as the server delivers it."""

    async def run(input: FakeInput, context: CallContext) -> Answer:
        return Answer({"ok": True}, app_data, show_ui=True)

    tool = define_tool(name="fake-map", title="Fake", description="fake", input=FakeInput, run=run, widget=MAP_APP_URI)
    return Dispatcher(Registry([tool]), interceptors=(deliver_app_data,))


async def every_widget_line(config, caplog) -> list[dict]:
    caplog.set_level(logging.INFO)
    context = CallContext(config=config, transport="http", client_name="Host", user_agent="Host/1")
    noise = random.Random(1).randbytes(200_000).hex()
    await fake_map({"blob": noise}).call("fake-map", {}, context)
    await fake_map(route_answer(20_571)).call("fake-map", {}, context)
    dispatcher = build_dispatcher()
    viz = {"geojson": GEOJSON, "layers": [{"type": "markers"}]}
    for reason in ("too_large", "host_dropped", "decode_failed"):
        call = {"tool": "tomtom-data-viz", "arguments": viz, "reason": reason, "error": "bad base64"}
        await dispatcher.call("tomtom-get-app-data", call, context)
    await dispatcher.call(
        "tomtom-get-app-data", {"tool": "tomtom-traffic", "arguments": viz, "reason": "too_large"}, context
    )
    report = {"tool": "tomtom-routing", "source": "inline", "duration_ms": 12.5, "delivery_request_id": "0" * 16}
    await dispatcher.call("tomtom-report-app-status", {**report, "outcome": "drawn", "features": 3}, context)
    await dispatcher.call(
        "tomtom-report-app-status", {**report, "outcome": "failed", "stage": "render", "error": "x"}, context
    )
    await dispatcher.call("tomtom-report-app-status", {**report, "outcome": "cancelled", "reason": "user"}, context)
    return logs.app_status(caplog.records)


async def test_every_widget_line_is_documented(config, caplog):
    rows = documented()
    lines = await every_widget_line(config, caplog)
    assert {line["kind"] for line in lines} == WIDGET_KINDS
    for line in lines:
        message, names = rows[line["kind"]]
        assert line["message"] == message == BY_MESSAGE[message].MESSAGE
        assert (line["client"], line["user_agent"]) == ("Host", "Host/1")
        undocumented = set(line) - COMMON - names
        assert not undocumented, f"{line['kind']}: document {sorted(undocumented)} in docs/app-status.md"
        if "simplification" in line:
            assert set(line["simplification"]) <= names


@pytest.mark.parametrize("kind", sorted(WIDGET_KINDS))
def test_each_widget_kind_has_its_row(kind):
    assert kind in documented()
