"""The largest result a caller receives: `MCP_MAX_FULL_CHARS` characters of text.

Compact and geometry answers are capped by construction (lists have caps, geometry has the
vertex cap); TomTom's untrimmed answer (`response_detail: "full"`) is not, and a 50 MB upstream
body would otherwise reach the caller as a 50 MB result. `cap_result_size` is an interceptor:
a result text over the limit becomes an `invalid_arguments` error on `response_detail`, asking
for `compact` (or `geometry`, on the tools that have it): the call succeeds with a different
argument, so the fault is the argument's, not TomTom's. The text is the one the transport
sends, measured once (`ToolOutcome.text` is cached).
"""

from __future__ import annotations

from core.errors import invalid
from tools.dispatch import Next, ToolCall, ToolOutcome


async def cap_result_size(call: ToolCall, next_: Next) -> ToolOutcome:
    outcome = await next_(call)
    limit = call.context.config.client.max_full_chars
    size = len(outcome.text)
    if outcome.is_error or size <= limit:
        return outcome
    geometry = call.tool is not None and call.tool.has_geometry
    instead = "`compact` or `geometry`" if geometry else "`compact`"
    return ToolOutcome.from_error(
        invalid(
            "response_detail",
            f"the answer is {size:,} characters, over the {limit:,} a result may have (MCP_MAX_FULL_CHARS);"
            f" use {instead} instead",
        )
    )
