"""What a tool is: one module declares one `Tool` with `define_tool(...)`.

A tool is a name, a title, a description, annotations, a typed input model (`tools.inputs`)
and an async `run(input, context)` that receives the validated input and returns a
JSON-serialisable dict, or an `Answer` when a widget may draw it. A tool drawn by a widget
names it (`widget=MAP_APP_URI`); a tool only widgets call says `app_only=True`; a tool whose
answer is a drawing says `needs_widget=True`. Each tool also carries the schema a client that
cannot show widgets lists (`text_input_schema`: the same model without `WIDGET_INPUTS`). How
those travel on the wire is the protocol layer's business (tools.mcp): a tool knows nothing of
HTTP or MCP, and the dispatcher (tools.dispatch) is its only caller.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from tools.inputs import ToolInput, input_schema, parse
from tools.schema import SchemaDefinitionError

if TYPE_CHECKING:
    from tools.context import CallContext

TOOL_NAME = re.compile(r"^[A-Za-z0-9._-]{1,128}$")
"""SEP-986 tool names: 1-128 letters, digits, `_`, `-` or `.`."""
WIDGET_INPUTS = ("show_ui",)
"""Inputs that only mean something where a widget can draw: not listed to other clients (a
call that still sends them is accepted; the answer then carries no app data)."""


@dataclass(frozen=True, slots=True)
class Answer:
    """What a tool drawn by a widget answers (docs/widgets.md).

    `data` is the text the model reads, exactly as without a widget. `app_data` is what the
    widget draws (None: the widget draws from the tool input, or `show_ui` is false); it never
    reaches the model. `show_ui` is the caller's choice. `refetchable` app data is never altered
    to fit the result: when it is too large, the widget fetches it again (tomtom-get-app-data);
    otherwise route lines are simplified until it fits. The protocol layer turns an Answer into
    the result (tools.mcp.appdata), so a tool never sees how it travels.
    """

    data: dict[str, Any]
    app_data: Any = None
    show_ui: bool = False
    refetchable: bool = False


type Run = Callable[[Any, "CallContext"], Awaitable[dict[str, Any] | Answer]]


@dataclass(frozen=True, slots=True)
class Annotations:
    """MCP tool annotations (hints to hosts; not enforced)."""

    read_only: bool = True
    destructive: bool = False
    idempotent: bool = True
    open_world: bool = True


DATA_TOOL = Annotations()
"""Every TomTom data tool: reads the world, changes nothing, same answer for the same call."""


@dataclass(frozen=True, slots=True)
class Tool:
    name: str
    title: str
    description: str
    input_model: type[ToolInput]
    run: Run
    input_schema: Mapping[str, Any]
    """The JSON Schema the tool lists, generated from `input_model` (tools.inputs)."""
    annotations: Annotations = DATA_TOOL
    widget: str | None = None
    """The `ui://` URI of the widget that draws this tool's answers (with `show_ui`)."""
    app_only: bool = False
    """Only widgets call this tool; hosts hide it from the model."""
    needs_widget: bool = False
    """The answer is a drawing (the dynamic map, data-viz): not offered where no widget shows."""
    text_input_schema: Mapping[str, Any] = MappingProxyType({})
    """`input_schema` without `WIDGET_INPUTS`, generated from `input_model` when the tool is
    defined: what a client that cannot show widgets lists."""

    @property
    def has_geometry(self) -> bool:
        """Whether the tool offers `response_detail: "geometry"`."""
        detail = self.input_schema.get("properties", {}).get("response_detail", {})
        return "geometry" in detail.get("enum", ())

    def parse(self, arguments: Mapping[str, Any], hints: Mapping[str, str] | None = None) -> ToolInput:
        """The call's arguments as this tool's input, or an `invalid_arguments` ToolError."""
        return parse(self.input_model, arguments, hints)


class ToolDefinitionError(ValueError):
    """A tool module is wrong; raised when the module is imported, i.e. at start-up."""


def define_tool(
    *,
    name: str,
    title: str,
    description: str,
    input: type[ToolInput],
    run: Run,
    annotations: Annotations = DATA_TOOL,
    widget: str | None = None,
    app_only: bool = False,
    needs_widget: bool = False,
) -> Tool:
    """Validate and freeze a tool definition."""
    if not TOOL_NAME.fullmatch(name):
        raise ToolDefinitionError(f"{name!r} is not a valid tool name (1-128 of A-Z a-z 0-9 _ - .)")
    if not title.strip() or not description.strip():
        raise ToolDefinitionError(f"{name}: a tool needs a title and a description")
    try:
        schema = input_schema(input)
    except SchemaDefinitionError as exc:
        raise ToolDefinitionError(f"{name}: {exc}") from None
    if "show_ui" in schema.get("properties", {}) and widget is None:
        raise ToolDefinitionError(f"{name}: a tool that takes `show_ui` must name the widget that draws it")
    if widget is not None and not widget.startswith("ui://"):
        raise ToolDefinitionError(f"{name}: a widget is named by its ui:// URI, not {widget!r}")
    if needs_widget and widget is None:
        raise ToolDefinitionError(f"{name}: a tool that needs a widget must name it")
    return Tool(
        name=name,
        title=title,
        description=description,
        input_model=input,
        run=run,
        input_schema=MappingProxyType(schema),
        annotations=annotations,
        widget=widget,
        app_only=app_only,
        needs_widget=needs_widget,
        text_input_schema=MappingProxyType(without_widget_inputs(schema)),
    )


def without_widget_inputs(schema: Mapping[str, Any]) -> dict[str, Any]:
    """A tool's generated input schema as listed where no widget can draw: `WIDGET_INPUTS`
    dropped from its properties and from `required` (nothing else changes)."""
    properties = schema.get("properties", {})
    if not any(name in properties for name in WIDGET_INPUTS):
        return dict(schema)
    text = {**schema, "properties": {k: v for k, v in properties.items() if k not in WIDGET_INPUTS}}
    if "required" in schema:
        text["required"] = [name for name in schema["required"] if name not in WIDGET_INPUTS]
    return text
