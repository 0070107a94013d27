"""A known ops data set relative to a moment: 40 days of tool calls and widget reports from nine
hosts (more than a chart has colours, so one line is `other`), with errors whose messages repeat,
TomTom requests, latencies across the histogram, tenants and both backends; and one call whose
request id joins its app data and its widget's failure report. Deterministic: the same `now`
gives the same lines."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from core.app_status import AppData, Drawn, Failed
from core.calls import ToolCall
from tests.analytics.conftest import written

HOSTS = (
    "claude-ai",
    "ChatGPT/1.2026.317",
    "cursor-vscode",
    "Visual Studio Code",
    "goose",
    "zed",
    "cline",
    "windsurf",
    "a-very-long-agent-name-" + "x" * 60 + "/9.9.9 (linux; build 2026-11-30; long tail)",
)
TOOLS = ("tomtom-geocode", "tomtom-routing", "tomtom-dynamic-map", "tomtom-traffic")
ERRORS = {
    "unavailable": "TomTom did not answer within 20 s (TOMTOM_TIMEOUT); try again later.",
    "invalid_arguments": "locations: needs at least 2 items; send [[lon, lat], [lon, lat]]",
    "retry_later": "TomTom's rate limit was reached; retry later.",
}
JOINED = "joined0000000001"
"""The request id of the call whose app data and widget report share it."""


def _at(moment: datetime) -> str:
    return moment.astimezone(UTC).replace(tzinfo=None).isoformat(timespec="seconds")


def ops_lines(now: datetime, *, days: int = 40, every_minutes: int = 53) -> list[str]:
    lines: list[str] = []
    steps = days * 24 * 60 // every_minutes
    for step in range(steps):
        moment = now - timedelta(minutes=every_minutes * step + 1)
        host, tool = HOSTS[step % len(HOSTS)], TOOLS[(step // 3) % len(TOOLS)]
        failing = step % 7 == 0 or (host == "ChatGPT/1.2026.317" and step % 5 < 2)
        code = list(ERRORS)[(step // len(HOSTS)) % 3] if failing else "ok"
        lines.append(
            written(
                ToolCall(
                    tool=tool,
                    client=host,
                    user_agent=f"{host[:40]}/ua",
                    transport="http",
                    tenant="acme" if step % 4 == 0 else None,
                    backend="tomtom-maps" if step % 5 == 0 else "tomtom-orbis-maps",
                    outcome=code,
                    upstream_calls=1 + step % 3,
                    upstream_rate_limited=1 if code == "retry_later" else 0,
                    upstream_ms=float(20 + (step * 37) % 900),
                    total_ms=float(30 + (step * 53) % 4000),
                    bytes=500 + step % 2000,
                    request_id=f"req{step:013d}",
                    error=ERRORS.get(code),
                ),
                _at(moment),
            )
        )
        if tool == "tomtom-dynamic-map":
            caller = {"tool": tool, "client": host, "user_agent": None, "request_id": f"rep{step:013d}"}
            widget = (
                Failed(**caller, source="inline", stage="render", error="WebGL context lost")
                if step % 5 == 0
                else Drawn(**caller, source="inline", duration_ms=120.0)
            )
            lines.append(written(widget, _at(moment + timedelta(seconds=20))))
    # One call followed through: its tool call, its app data, its widget's failure report.
    call_at = now - timedelta(hours=2, minutes=7)
    caller = {"tool": "tomtom-dynamic-map", "client": "claude-ai", "user_agent": "claude-ai/1.0", "request_id": JOINED}
    lines.append(
        written(
            ToolCall(
                tool="tomtom-dynamic-map",
                client="claude-ai",
                outcome="ok",
                backend="tomtom-maps",
                tenant="acme",
                upstream_calls=2,
                total_ms=140.0,
                request_id=JOINED,
            ),
            _at(call_at),
        )
    )
    lines.append(written(AppData(**caller, delivery="inline", raw_bytes=4_200), _at(call_at)))
    lines.append(
        written(
            Failed(**caller, source="inline", stage="decode", error="unexpected end of data"),
            _at(call_at + timedelta(seconds=3)),
        )
    )
    return sorted(lines, key=lambda line: line[9:38])  # by time, as logs are
