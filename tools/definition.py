"""What a tool is: one module declares one `Tool` with `define_tool(...)`.

A tool has a name, a title, a description, an input schema, annotations, the services it needs
and an async `run(arguments, context)` returning a JSON-serialisable dict, or an `Answer` when
the tool has a widget. It knows nothing of HTTP or MCP: transports reach it through the catalog.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from tools.schema import SchemaDefinitionError, check_schema, compile_validator

if TYPE_CHECKING:
    from jsonschema import Draft202012Validator

    from tools.context import CallContext

TOOL_NAME = re.compile(r"^[A-Za-z0-9._-]{1,128}$")
"""SEP-986 tool names: 1-128 letters, digits, `_`, `-` or `.`."""


@dataclass(frozen=True, slots=True)
class Answer:
    """What a tool with a widget answers (docs/widgets.md).

    `data` is the text the model reads, exactly as without a widget. `app_data` is what the
    widget draws (None: the widget draws from the tool input, or `show_ui` is false); it never
    reaches the model. `show_ui` is the caller's choice. `refetchable` app data is never altered
    to fit the result: when it is too large, the widget fetches it again (tomtom-get-app-data);
    otherwise route lines are simplified until it fits. The catalog turns an Answer into the
    result (tools.catalog), so a tool never sees how it travels.
    """

    data: dict[str, Any]
    app_data: Any = None
    show_ui: bool = False
    refetchable: bool = False


Run = Callable[[dict[str, Any], "CallContext"], Awaitable[dict[str, Any] | Answer]]


@dataclass(frozen=True, slots=True)
class Annotations:
    """MCP tool annotations (hints to hosts; not enforced)."""

    read_only: bool = True
    destructive: bool = False
    idempotent: bool = True
    open_world: bool = True

    def as_dict(self) -> dict[str, bool]:
        return {
            "readOnlyHint": self.read_only,
            "destructiveHint": self.destructive,
            "idempotentHint": self.idempotent,
            "openWorldHint": self.open_world,
        }


DATA_TOOL = Annotations()
"""Every TomTom data tool: reads the world, changes nothing, same answer for the same call."""


@dataclass(frozen=True, slots=True)
class Tool:
    name: str
    title: str
    description: str
    input_schema: Mapping[str, Any]
    run: Run
    annotations: Annotations = DATA_TOOL
    requires: frozenset[str] = frozenset({"tomtom"})
    meta: Mapping[str, Any] = field(default_factory=dict)
    validator: Draft202012Validator | None = None


class ToolDefinitionError(ValueError):
    """A tool module is wrong; raised when the catalog is built, i.e. at start-up."""


def define_tool(
    *,
    name: str,
    title: str,
    description: str,
    input_schema: Mapping[str, Any],
    run: Run,
    annotations: Annotations = DATA_TOOL,
    requires: tuple[str, ...] = ("tomtom",),
    meta: Mapping[str, Any] | None = None,
) -> Tool:
    """Validate and freeze a tool definition."""
    if not TOOL_NAME.fullmatch(name):
        raise ToolDefinitionError(f"{name!r} is not a valid tool name (1-128 of A-Z a-z 0-9 _ - .)")
    if not title.strip() or not description.strip():
        raise ToolDefinitionError(f"{name}: a tool needs a title and a description")
    if input_schema.get("type") != "object":
        raise ToolDefinitionError(f"{name}: inputSchema must be of type object")
    try:
        check_schema(input_schema)
    except SchemaDefinitionError as exc:
        raise ToolDefinitionError(f"{name}: {exc}") from None
    ui = (meta or {}).get("ui") or {}
    if "show_ui" in input_schema.get("properties", {}) and not ui.get("resourceUri"):
        raise ToolDefinitionError(f"{name}: a tool that takes `show_ui` must name its widget in meta ui.resourceUri")
    return Tool(
        name=name,
        title=title,
        description=description,
        input_schema=MappingProxyType(dict(input_schema)),
        run=run,
        annotations=annotations,
        requires=frozenset(requires),
        meta=MappingProxyType(dict(meta or {})),
        validator=compile_validator(input_schema),
    )
