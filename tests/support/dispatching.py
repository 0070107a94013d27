"""Dispatchers of our own tools, served as the process serves its own (app data delivered)."""

from __future__ import annotations

from protocol.appdata import deliver_app_data
from tools.definition import Tool
from tools.definitions.common import ShowUi
from tools.dispatch import Dispatcher
from tools.inputs import ToolInput
from tools.registry import Registry


class ShowUiInput(ToolInput):
    """The input of a test tool drawn by a widget: `show_ui` alone."""

    show_ui: ShowUi = False


def dispatcher_of(*tools: Tool) -> Dispatcher:
    return Dispatcher(Registry(tools), interceptors=(deliver_app_data,))
