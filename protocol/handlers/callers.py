"""Who is calling, as every handler needs to know it: the transport's `CallContext`, shaped.

`make_context(request_context)` is the transport's own way to say who is calling
(protocol/http/context.py, protocol/stdio.py); the handlers never look at HTTP or stdio
details. Whether the caller is offered widgets comes from the capabilities the session knows
(stdio, in-process, and the 2026-07-28 per-request capabilities), else from what the transport
read (`CallContext.apps_declared`: over HTTP, the signed session id), and the operator's rules
(governance.client_surface), which also say which tools the client is not shown.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mcp.server.apps import client_supports_apps
from mcp.server.context import ServerRequestContext

from governance.client_surface import ClientSurfaces
from tools.context import CallContext
from tools.dispatch import Dispatcher

ContextFactory = Callable[[ServerRequestContext[Any]], CallContext]


class Callers:
    """The caller of each request, shaped by the client rules; and the tools it is offered."""

    __slots__ = ("dispatcher", "make_context", "rules")

    def __init__(self, dispatcher: Dispatcher, make_context: ContextFactory, rules: ClientSurfaces) -> None:
        self.dispatcher = dispatcher
        self.make_context = make_context
        self.rules = rules

    async def shaped_context(self, ctx: ServerRequestContext[Any]) -> CallContext:
        context = self.make_context(ctx)
        context.apps_declared = declared_apps(ctx, context)
        shape = await self.rules.shape_for(context.client_name, context.apps_declared)
        context.widgets, context.hidden_tools = shape.widgets, shape.hidden_tools
        return context

    async def offered_tools(self, ctx: ServerRequestContext[Any]) -> tuple[CallContext, set[str]]:
        """The shaped context, and the names of the tools it is listed (what prompts and resources
        need before they are offered)."""
        context = await self.shaped_context(ctx)
        return context, {tool.name for tool in await self.dispatcher.listing(context)}


def declared_apps(ctx: ServerRequestContext[Any], context: CallContext) -> bool | None:
    """Whether the client declared MCP Apps: from the capabilities the session knows, else
    from what the transport read (None: not known)."""
    if ctx.session.client_capabilities is not None:
        return client_supports_apps(ctx)
    return context.apps_declared


def client_name_from_handshake(ctx: ServerRequestContext[Any]) -> str | None:
    """The `clientInfo.name` the session knows (stdio, in-process, and 2026-07-28 `_meta`)."""
    params = ctx.session.client_params
    if params is not None and params.client_info is not None:
        return params.client_info.name
    return None
