"""TomTom's attribution on every result that shows TomTom data (docs/adr/0036-prompts-resources-attribution.md).

A result shows TomTom data when its call read a TomTom answer (a 2xx status in the call's
upstream statistics) and did not fail: whatever the tool, so a new tool that calls TomTom is
attributed without a word in its declaration, and one that never calls TomTom (the widget
tools, data-viz, a dynamic map without route plans) is not. The notice is one short field,
`"attribution"`, at the end of the data in the JSON text the model reads (and in the answer a
widget is drawn from; the widget's `show_ui` echo follows it): the backend's credit
(`tools.tomtom.backends.CREDITS`). Errors carry none: they show no TomTom data.
"""

from __future__ import annotations

from dataclasses import replace

from tools.context import CallContext
from tools.dispatch import Next, ToolCall, ToolOutcome
from tools.tomtom.backends import CREDITS

ATTRIBUTION_KEY = "attribution"
"""The key of a result's attribution, at the end of the text the model reads."""


def read_tomtom(context: CallContext) -> bool:
    """Whether the call read at least one TomTom answer (a 2xx status)."""
    return any(200 <= status < 300 for status in context.stats.statuses)


async def attribute(call: ToolCall, next_: Next) -> ToolOutcome:
    """Interceptor (innermost): a successful result of a call that read TomTom data gets the
    backend's attribution, after the tool's own data."""
    outcome = await next_(call)
    if outcome.is_error or not read_tomtom(call.context):
        return outcome
    notice = {ATTRIBUTION_KEY: CREDITS[call.context.effective_backend]}
    answer = outcome.answer
    if answer is not None:
        answer = replace(answer, data={**answer.data, **notice})
    return ToolOutcome({**outcome.data, **notice}, meta=outcome.meta, answer=answer, image=outcome.image)
