"""What a tool is: one module declares one `Tool` with `define_tool(...)`.

A tool is a name, a title, a description, annotations, a typed input model (`tools.inputs`)
and an async `run(input, context)` that receives the validated input and returns a
JSON-serialisable dict, or an `Answer` when a widget may draw it. A tool drawn by a widget
names it (`widget=MAP_APP_URI`); a tool only widgets call says `app_only=True`; a tool whose
answer is a drawing says `needs_widget=True`. A tool a backend cannot serve says so with the
alternative to offer instead (`unavailable_on={Backend.ORBIS: "..."}`); what differs per
backend in what it costs or bounds is added to its description there (`backend_notes`).

What one caller is listed comes from that declaration (`Tool.listing(backend, widgets)`): the
description with the backend's note, and the input schema of the backend (`tools.inputs`)
without `WIDGET_INPUTS` for a client that cannot show widgets. Every combination is built
when the tool is defined. How it travels on the wire is the protocol layer's business
(protocol): a tool knows nothing of HTTP or MCP, and the dispatcher (tools.dispatch) is its
only caller.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from tools.inputs import ToolInput, backend_schema, input_schema, parse
from tools.schema import SchemaDefinitionError
from tools.tomtom.backends import Backend, switch_to

if TYPE_CHECKING:
    from tools.context import CallContext

TOOL_NAME = re.compile(r"^[A-Za-z0-9._-]{1,128}$")
"""SEP-986 tool names: 1-128 letters, digits, `_`, `-` or `.`."""
WIDGET_INPUTS = ("show_ui",)
"""Inputs that only mean something where a widget can draw: not listed to other clients (a
call that still sends them is accepted; the answer then carries no app data)."""


@dataclass(frozen=True, slots=True)
class Image:
    """A picture a tool answers beside its text (a map image): the bytes as TomTom sent them
    and their MIME type. The protocol layer sends it as MCP image content."""

    data: bytes
    mime_type: str


@dataclass(frozen=True, slots=True)
class Answer:
    """What a tool drawn by a widget answers (docs/widgets.md).

    `data` is the text the model reads, exactly as without a widget. `app_data` is what the
    widget draws (None: the widget draws from the tool input, or `show_ui` is false); it never
    reaches the model. `show_ui` is the caller's choice. `refetchable` app data is never altered
    to fit the result: when it is too large, the widget fetches it again (tomtom-get-app-data);
    otherwise route lines are simplified until it fits. The protocol layer turns an Answer into
    the result (protocol.appdata), so a tool never sees how it travels.
    """

    data: dict[str, Any]
    app_data: Any = None
    show_ui: bool = False
    refetchable: bool = False
    image: Image | None = None
    """A picture for every client, widgets or not (tomtom-map-image); the text describes it."""


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
class Listing:
    """What one tool shows one kind of caller (a backend, widgets or not)."""

    description: str
    input_schema: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class Tool:
    name: str
    title: str
    description: str
    input_model: type[ToolInput]
    run: Run
    input_schema: Mapping[str, Any]
    """The whole JSON Schema of `input_model` (tools.inputs): every input on every backend. What
    a caller is listed is `listing(backend, widgets).input_schema`."""
    annotations: Annotations = DATA_TOOL
    widget: str | None = None
    """The `ui://` URI of the widget that draws this tool's answers (with `show_ui`)."""
    app_only: bool = False
    """Only widgets call this tool; hosts hide it from the model."""
    needs_widget: bool = False
    """The answer is a drawing (the dynamic map, data-viz): not offered where no widget shows."""
    unavailable_on: Mapping[Backend, str] = MappingProxyType({})
    """Backends that cannot serve the tool, each with what to do instead (a sentence)."""
    listings: Mapping[tuple[Backend, bool], Listing] = MappingProxyType({})
    """What each (backend, widgets) caller is listed, built when the tool is defined."""

    @property
    def has_geometry(self) -> bool:
        """Whether the tool offers `response_detail: "geometry"`."""
        detail = self.input_schema.get("properties", {}).get("response_detail", {})
        return "geometry" in detail.get("enum", ())

    @property
    def offered_without_widgets(self) -> bool:
        """Whether a client that is not offered widgets is listed the tool: not when only widgets
        call it, nor when its answer is a drawing."""
        return not (self.app_only or self.needs_widget)

    def serves(self, backend: Backend) -> bool:
        return backend not in self.unavailable_on

    def offered_to(self, backend: Backend, widgets: bool) -> bool:
        """Whether a caller on `backend`, with or without widgets, is listed this tool."""
        return self.serves(backend) and (widgets or self.offered_without_widgets)

    def listing(self, backend: Backend, widgets: bool) -> Listing:
        return self.listings[backend, widgets]

    def with_notice(self, notice: str) -> Tool:
        """The tool with `notice` starting its description, as every caller is listed it (a
        deprecation: governance)."""
        listings = {
            key: replace(listing, description=f"{notice} {listing.description}")
            for key, listing in self.listings.items()
        }
        return replace(self, description=f"{notice} {self.description}", listings=MappingProxyType(listings))

    def unavailable(self, backend: Backend) -> str:
        """The `unsupported` answer's text for a call on a backend that cannot serve the tool."""
        return f"{self.name} is not available on {backend.value}. {self.unavailable_on[backend]}"

    def parse(
        self,
        arguments: Mapping[str, Any],
        hints: Mapping[str, str] | None = None,
        *,
        backend: Backend | None = None,
        widgets: bool = True,
    ) -> ToolInput:
        """The call's arguments as this tool's input, or a ToolError naming every problem
        (`unsupported` for values `backend` refuses). An unknown argument's answer names the
        inputs this caller was listed; `backend` None checks no backend's limits."""
        listed = self.listing(backend, widgets).input_schema if backend is not None else self.input_schema
        return parse(self.input_model, arguments, hints, backend=backend, listed=listed)


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
    unavailable_on: Mapping[Backend, str] | None = None,
    backend_notes: Mapping[Backend, str] | None = None,
) -> Tool:
    """Validate and freeze a tool definition.

    `unavailable_on`: the backends that cannot serve the tool, each with a sentence saying what
    to do instead (another tool, another input); the answer adds the backends that can.
    `backend_notes`: a sentence added to the description on that backend (a limit, a cost)."""
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
    refusals = dict(unavailable_on or {})
    if len(refusals) == len(Backend):
        raise ToolDefinitionError(f"{name}: a tool must be available on some backend")
    for backend, instead in refusals.items():
        serving = [b for b in Backend if b not in refusals]
        refusals[backend] = f"{instead.strip()} Or use {switch_to(serving)}."
    notes = dict(backend_notes or {})
    listings = {}
    for backend in Backend:
        try:
            schema = backend_schema(input, backend)
        except SchemaDefinitionError as exc:
            raise ToolDefinitionError(f"{name}: {exc}") from None
        text = f"{description} {notes[backend]}" if backend in notes else description
        for widgets in (True, False):
            listed = schema if widgets else without_widget_inputs(schema)
            listings[backend, widgets] = Listing(description=text, input_schema=MappingProxyType(listed))
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
        unavailable_on=MappingProxyType(refusals),
        listings=MappingProxyType(listings),
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
