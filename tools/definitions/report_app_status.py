"""tomtom-report-app-status (app-only): a widget says how it did; the server logs it.

The map widget reports once per tool result it handles: `drawn` (with `features`, the number
it drew), `failed` (with the `stage` that failed and the `error`) or `cancelled` (the host
cancelled the call; its `reason` when the host gave one), the `source` of its data and the time
it took, and `delivery_request_id`, the `request_id` it read in the result's `_meta` (the join
key to the call that delivered the data; widgets that predate it send none). Each report is one
app-status line, `App drawn`, `App failed` or `App cancelled` (docs/app-status.md), with the
reporting client's name and User-Agent. A malformed report is answered `invalid_arguments` and
logged as nothing but the call itself.

Error texts come from a browser and may quote a URL: any TomTom key in them is masked first.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import Field, model_validator

from core.app_status import Cancelled, Drawn, Failed, SourceName, StageName
from core.events import REQUEST_ID_LENGTH, SHORT_TEXT_LENGTH, TOOL_NAME_LENGTH, clip, log
from tools.context import CallContext
from tools.definition import TOOL_NAME, Annotations, define_tool
from tools.inputs import ToolInput, problem, rule

KEY_IN_URL = re.compile(r"(?i)((?<![\w-])(?:key|api[_-]?key)=)[^&#\s\"'<>]+")
"""`key=…` (or `apiKey=`, `api_key=`) with its value, in a URL or in prose."""
MAX_FEATURES = 10_000_000
"""Far above anything a widget draws (data-viz draws at most 100,000 features)."""
MAX_REASON = 500
"""The longest cancellation reason accepted; the log keeps its first `SHORT_TEXT_LENGTH` characters."""
REQUEST_ID = r"^[A-Za-z0-9_.:-]+$"
"""A request id as the server writes it into `_meta` (16 hex digits), with room for other forms."""


class ReportInput(ToolInput):
    tool: Annotated[
        str, Field(max_length=TOOL_NAME_LENGTH, pattern=TOOL_NAME.pattern, description="The tool whose result it is.")
    ]
    outcome: Literal["drawn", "failed", "cancelled"]
    source: SourceName = Field(description="Where the widget's data came from.")
    duration_ms: float = Field(ge=0, le=3_600_000)
    stage: StageName | None = Field(None, description="Where it failed (failed only).")
    features: int | None = Field(None, ge=0, le=MAX_FEATURES, description="Features drawn (drawn only).")
    error: str | None = Field(None, min_length=1, max_length=500, description="What failed (failed only).")
    reason: str | None = Field(
        None, min_length=1, max_length=MAX_REASON, description="Why the host cancelled the call (cancelled only)."
    )
    delivery_request_id: str | None = Field(
        None,
        min_length=1,
        max_length=REQUEST_ID_LENGTH,
        pattern=REQUEST_ID,
        description="The `request_id` in the `_meta` of the result this report is about.",
    )

    @model_validator(mode="after")
    def _fits_the_outcome(self) -> ReportInput:
        # drawn: `features`, no `stage`, `error` or `reason`; failed: `stage` and `error`
        # (`features` allowed), no `reason`; cancelled: none of `features`, `stage`, `error`.
        if self.outcome == "drawn":
            if self.features is None:
                raise problem("is required when outcome is drawn", item="features")
            for name in ("stage", "error", "reason"):
                if getattr(self, name) is not None:
                    raise rule("outcome", name, message=f"a drawn widget has no {name}")
        elif self.outcome == "failed":
            for name in ("stage", "error"):
                if getattr(self, name) is None:
                    raise problem("is required when outcome is failed", item=name)
            if self.reason is not None:
                raise rule("outcome", "reason", message="a failed widget has no reason: send error")
        else:
            for name in ("features", "stage", "error"):
                if getattr(self, name) is not None:
                    raise rule("outcome", name, message=f"a cancelled call has no {name}")
        return self


def scrubbed(text: str, context: CallContext) -> str:
    """`text` without any key this call knows of, and without any `key=` value."""
    for secret in context.secrets():
        text = text.replace(secret, "***")
    return KEY_IN_URL.sub(r"\1***", text)


async def run(input: ReportInput, context: CallContext) -> dict[str, Any]:
    who = context.caller(input.tool)
    duration = round(input.duration_ms, 1)
    joined = input.delivery_request_id
    if input.outcome == "drawn":
        log(
            Drawn(**who, source=input.source, duration_ms=duration, features=input.features, delivery_request_id=joined)
        )
        return {"logged": Drawn.MESSAGE}
    if input.outcome == "cancelled":
        reason = None if input.reason is None else clip(scrubbed(input.reason, context), SHORT_TEXT_LENGTH)
        log(Cancelled(**who, source=input.source, duration_ms=duration, reason=reason, delivery_request_id=joined))
        return {"logged": Cancelled.MESSAGE}
    assert input.error is not None and input.stage is not None  # the model's rule
    log(
        Failed(
            **who,
            source=input.source,
            stage=input.stage,
            duration_ms=duration,
            error=scrubbed(input.error, context),
            delivery_request_id=joined,
        )
    )
    return {"logged": Failed.MESSAGE}


TOOL = define_tool(
    name="tomtom-report-app-status",
    title="TomTom Report App Status",
    description="Map widget only: whether it drew the result, failed or was cancelled, for the server log.",
    input=ReportInput,
    run=run,
    annotations=Annotations(read_only=False, destructive=False, idempotent=False, open_world=False),
    app_only=True,
)
