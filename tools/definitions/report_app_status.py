"""tomtom-report-app-status (app-only): a widget says how it did; the server logs it.

The map widget reports once per tool result it handles: `drawn` (with `features`, the number
it drew) or `failed` (with the `stage` that failed and the `error`), the `source` of its data
and the time it took. Each report is one app-status line, `App drawn` or `App failed`
(docs/app-status.md), with the reporting client's name and User-Agent. A malformed report is
answered `invalid_arguments` and logged as nothing but the call itself.

Error texts come from a browser and may quote a URL: any TomTom key in them is masked first.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import Field, model_validator

from core.app_status import Drawn, Failed, SourceName, StageName
from core.events import TOOL_NAME_LENGTH, log
from tools.context import CallContext
from tools.definition import TOOL_NAME, Annotations, define_tool
from tools.inputs import ToolInput, problem, rule

KEY_IN_URL = re.compile(r"(?i)((?<![\w-])(?:key|api[_-]?key)=)[^&#\s\"'<>]+")
"""`key=…` (or `apiKey=`, `api_key=`) with its value, in a URL or in prose."""
MAX_FEATURES = 10_000_000
"""Far above anything a widget draws (data-viz draws at most 100,000 features)."""

class ReportInput(ToolInput):
    tool: Annotated[
        str, Field(max_length=TOOL_NAME_LENGTH, pattern=TOOL_NAME.pattern, description="The tool whose result it is.")
    ]
    outcome: Literal["drawn", "failed"]
    source: SourceName = Field(description="Where the widget's data came from.")
    duration_ms: float = Field(ge=0, le=3_600_000)
    stage: StageName | None = Field(None, description="Where it failed (failed only).")
    features: int | None = Field(None, ge=0, le=MAX_FEATURES, description="Features drawn (drawn only).")
    error: str | None = Field(None, min_length=1, max_length=500, description="What failed (failed only).")

    @model_validator(mode="after")
    def _fits_the_outcome(self) -> ReportInput:
        # drawn: `features`, no `stage` or `error`; failed: `stage` and `error` (`features` allowed).
        if self.outcome == "drawn":
            if self.features is None:
                raise problem("is required when outcome is drawn", item="features")
            for name in ("stage", "error"):
                if getattr(self, name) is not None:
                    raise rule("outcome", name, message=f"a drawn widget has no {name}")
        else:
            for name in ("stage", "error"):
                if getattr(self, name) is None:
                    raise problem("is required when outcome is failed", item=name)
        return self


def scrubbed(text: str, context: CallContext) -> str:
    """`text` without any key this call knows of, and without any `key=` value."""
    for secret in context.secrets():
        text = text.replace(secret, "***")
    return KEY_IN_URL.sub(r"\1***", text)


async def run(input: ReportInput, context: CallContext) -> dict[str, Any]:
    who = context.caller(input.tool)
    duration = round(input.duration_ms, 1)
    if input.outcome == "drawn":
        log(Drawn(**who, source=input.source, duration_ms=duration, features=input.features))
        return {"logged": Drawn.MESSAGE}
    assert input.error is not None and input.stage is not None  # the model's rule
    log(Failed(**who, source=input.source, stage=input.stage, duration_ms=duration,
               error=scrubbed(input.error, context)))  # fmt: skip
    return {"logged": Failed.MESSAGE}


TOOL = define_tool(
    name="tomtom-report-app-status",
    title="TomTom Report App Status",
    description="Map widget only: whether it drew the result or failed, for the server log.",
    input=ReportInput,
    run=run,
    annotations=Annotations(read_only=False, destructive=False, idempotent=False, open_world=False),
    app_only=True,
)
