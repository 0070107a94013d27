"""`tools/list` and `tools/call`, from the dispatcher; the `CallToolResult` envelope is built here only.

The listing is shaped to the caller by the dispatcher (`Dispatcher.listing`): its backend,
whether it is offered widgets, the tools its client rule hides (governance.client_surface), and the
listing filters. Each tool's listings (per backend, widgets or not) are built once, and each wire
listing (protocol version, widgets or not, backend, the tools listed) is serialised by the SDK
once and then reused (`listing_once`): a listing costs what deciding which tools it holds costs,
and is a pure function of the request.

Every `tools/list` answered is a `Tools listed` line (core/exchange.py) naming each tool listed
with the UTF-8 bytes of its entry in the wire JSON, and the bytes of the whole `tools` array:
worked out once per wire listing and kept beside it (`WireListing`), so a listing served again
encodes nothing more.
"""

from __future__ import annotations

import base64
import json
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import mcp_types as types
import orjson
from mcp.server.context import CallNext, ServerRequestContext

from core.events import TOOL_NAME_LENGTH, clip, log
from core.exchange import MAX_LISTED, ListedTool, ToolsListed
from protocol import mcp_apps
from protocol.handlers.callers import Callers
from tools.context import CallContext
from tools.definition import Tool
from tools.tomtom.backends import Backend


def mcp_tool(tool: Tool, *, backend: Backend, widgets: bool = True) -> types.Tool:
    """The tool as listed to a caller on `backend` offered widgets, or (`widgets=False`) to one
    that is not: then without `show_ui` and without `_meta.ui` (`Tool.listing`)."""
    listing = tool.listing(backend, widgets)
    return types.Tool(
        name=tool.name,
        title=tool.title,
        description=listing.description,
        input_schema=dict(listing.input_schema),
        annotations=types.ToolAnnotations(**_annotation_kwargs(tool)),
        _meta=mcp_apps.tool_meta(tool, widgets=widgets),
    )


def _annotation_kwargs(tool: Tool) -> dict[str, bool]:
    """The hints a host reads, without the ones the specification makes meaningless or default:
    `idempotentHint` means something only for a tool that writes (`readOnlyHint: false`), and
    `openWorldHint` is true unless said otherwise. `destructiveHint` is always said, since some
    hosts ask before a call that does not."""
    hints = tool.annotations
    kwargs = {"read_only_hint": hints.read_only, "destructive_hint": hints.destructive}
    if not hints.read_only:
        kwargs["idempotent_hint"] = hints.idempotent
    if not hints.open_world:
        kwargs["open_world_hint"] = False
    return kwargs


ListingKey = tuple[str, bool, Backend, tuple[tuple[str, str], ...]]
"""A wire listing's key: the protocol version, widgets or not, the backend, and each listed tool's
name and description (a deprecated tool's starts with its notice, which governance may change)."""


@dataclass(frozen=True, slots=True)
class WireListing:
    """A wire `tools/list` result, with what each tool's entry and the whole `tools` array cost
    in UTF-8 bytes of compact JSON (as the single-request exchange writes them)."""

    result: Mapping[str, Any]
    tools: list[ListedTool]
    """Each listed tool's name and bytes, in listing order (the first `MAX_LISTED`)."""
    bytes: int
    """The `tools` array: its entries, the commas between them and its brackets."""

    @classmethod
    def of(cls, result: Mapping[str, Any]) -> WireListing:
        entries = result.get("tools")
        entries = entries if isinstance(entries, list) else []
        sizes = [len(_encoded(entry)) for entry in entries]
        names = [entry.get("name") if isinstance(entry, Mapping) else None for entry in entries]
        tools = [
            ListedTool(name=clip(name if isinstance(name, str) else "", TOOL_NAME_LENGTH), bytes=size)
            for name, size in zip(names[:MAX_LISTED], sizes, strict=False)
        ]
        return cls(result, tools, sum(sizes) + max(len(sizes) - 1, 0) + 2)

    def logged(self, context: CallContext) -> None:
        """The `Tools listed` line of this listing served to `context`'s caller."""
        log(
            ToolsListed(
                client=context.client_name,
                protocol_version=context.protocol_version or "",
                transport=context.transport,
                tenant=context.tenant,
                backend=context.effective_backend.value,
                bytes=self.bytes,
                tools=self.tools,
                request_id=context.request_id,
                session=context.session,
            )
        )


def _encoded(entry: Any) -> bytes:
    """A wire entry as compact UTF-8 JSON (the standard library for what orjson cannot write:
    an integer beyond 64 bits)."""
    try:
        return orjson.dumps(entry)
    except TypeError:
        return json.dumps(entry, ensure_ascii=False, separators=(",", ":")).encode()


class WireListings:
    """The last `size` wire `tools/list` results, by `ListingKey`.

    A listing is a pure function of its key, so any replica may keep its own copy; nothing a
    request depends on lives here."""

    def __init__(self, size: int = 64) -> None:
        self.size = size
        self._results: OrderedDict[ListingKey, WireListing] = OrderedDict()

    def get(self, key: ListingKey) -> WireListing | None:
        result = self._results.get(key)
        if result is not None:
            self._results.move_to_end(key)
        return result

    def keep(self, key: ListingKey, result: WireListing) -> None:
        self._results[key] = result
        while len(self._results) > self.size:
            self._results.popitem(last=False)


class ToolHandlers:
    """The tool handlers and the `listing_once` middleware, over every tool's wire forms."""

    __slots__ = ("callers", "dispatcher", "listed", "registered", "wire_listings")

    def __init__(self, callers: Callers) -> None:
        dispatcher = callers.dispatcher
        self.callers, self.dispatcher = callers, dispatcher
        self.listed = {
            (tool.name, backend, offered, tool.description): mcp_tool(tool, backend=backend, widgets=offered)
            for tool in dispatcher.registry
            for backend in Backend
            for offered in (True, False)
        }
        self.registered = len(self.listed)
        self.wire_listings = WireListings()

    def as_listed(self, tool: Tool, backend: Backend, widgets: bool) -> types.Tool:
        """The wire form of `tool`, made once per description (governance may prefix a notice)."""
        listed = self.listed
        key = (tool.name, backend, widgets, tool.description)
        wire = listed.get(key)
        if wire is None:
            if len(listed) > 2 * self.registered:  # notices come and go: forget the old ones
                for stale in list(listed)[self.registered :]:
                    del listed[stale]
            wire = listed[key] = mcp_tool(tool, backend=backend, widgets=widgets)
        return wire

    def known(self, name: str) -> bool:
        return self.dispatcher.get(name) is not None

    async def list_tools(
        self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        context = await self.callers.shaped_context(ctx)
        backend, widgets = context.effective_backend, context.widgets
        tools = await self.dispatcher.listing(context)
        return types.ListToolsResult(tools=[self.as_listed(tool, backend, widgets) for tool in tools])

    async def listing_once(self, ctx: ServerRequestContext[Any], call_next: CallNext) -> Any:
        """Middleware: a `tools/list` without params answers the wire listing the SDK serialised
        for the same version, widgets and tools (the handler and the SDK's per-version shaping
        run on a miss only). Anything else, params included, takes the whole path. Either way
        the listing answered is logged (`Tools listed`)."""
        if ctx.method != "tools/list":
            return await call_next(ctx)
        context = await self.callers.shaped_context(ctx)
        if ctx.params:
            served = await call_next(ctx)
            if isinstance(served, dict):
                WireListing.of(served).logged(context)
            return served
        tools = tuple((t.name, t.description) for t in await self.dispatcher.listing(context))
        key = (ctx.protocol_version, context.widgets, context.effective_backend, tools)
        wire = self.wire_listings.get(key)
        if wire is None:
            served = await call_next(ctx)
            if not isinstance(served, dict):  # not the SDK's wire dict: passed on, not kept
                return served
            wire = WireListing.of(served)
            # Kept only if the handler listed the same tools (governance may refresh in between).
            if tuple(t.get("name") for t in served.get("tools", ())) == tuple(name for name, _ in tools):
                self.wire_listings.keep(key, wire)
        wire.logged(context)
        return dict(wire.result)

    async def call_tool(
        self, ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        context = await self.callers.shaped_context(ctx)
        outcome = await self.dispatcher.call(params.name, params.arguments, context)
        content: list[types.ContentBlock] = [types.TextContent(type="text", text=outcome.text)]
        if outcome.image is not None:
            encoded = base64.b64encode(outcome.image.data).decode("ascii")
            content.append(types.ImageContent(type="image", data=encoded, mime_type=outcome.image.mime_type))
        return types.CallToolResult(
            content=content,
            is_error=outcome.is_error,
            _meta=outcome.meta,
        )
