"""A signed-in tenant's terms at call time: its tool allow-list and its quotas.

The HTTP adapter reads the terms from the database with the request (tenants.store counts the
request's tool calls there) and leaves them in `CallContext.terms`; these hooks answer from them:

- `enforce_terms` (an interceptor, right after the call log): over quota -> `retry_later` with
  `retry_after`; a tool outside the allow-list -> `unknown_tool` naming the tools it is offered
  and the one closest to the name called.
- `filter_listing` (a listing filter): only the allowed tools are listed.

App-only tools (the widget's helpers) are always allowed: they serve the widgets of tools the
tenant may call.
"""

from __future__ import annotations

from collections.abc import Sequence

from core.errors import ErrorCode, ToolError
from tools.context import CallContext
from tools.definition import Tool
from tools.dispatch import Next, ToolCall, ToolOutcome, unknown_tool


def _allowed(tool: Tool, allowed: frozenset[str]) -> bool:
    return tool.app_only or tool.name in allowed


async def enforce_terms(call: ToolCall, next_: Next) -> ToolOutcome:
    terms = call.context.terms
    if terms is None:
        return await next_(call)
    if terms.over_quota is not None:
        return ToolOutcome.from_error(
            ToolError(
                ErrorCode.RETRY_LATER,
                f"Your organisation's quota of {terms.over_quota} is used up; try again in {terms.retry_after} s.",
                retry_after=terms.retry_after,
            )
        )
    allowed = terms.allowed_tools
    if allowed is not None and call.tool is not None and not _allowed(call.tool, allowed):
        lead = "No tool named {name} is available to your organisation."
        return ToolOutcome.from_error(unknown_tool(call.name, call.offered(), lead))
    return await next_(call)


def filter_listing(tools: Sequence[Tool], context: CallContext) -> list[Tool]:
    allowed = context.terms.allowed_tools if context.terms is not None else None
    return list(tools) if allowed is None else [tool for tool in tools if _allowed(tool, allowed)]
