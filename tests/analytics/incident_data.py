"""The on-call engineer's incident of issue #42, as a deterministic data set relative to a moment
`now`: four days of tool calls and widget reports from eight hosts, where

- `cursor-vscode` (BROKEN) broke three hours before `now`: from then on three calls in four end
  `internal` (before, one in fifty ended `unavailable`, like every healthy host);
- `ChatGPT/1.2026.317` (STEADY) fails steadily at a higher level: three calls in ten end
  `unavailable` or `retry_later` all four days, and one widget in three fails;
- `fleet-agent` (SILENT), an in-house agent, gets app data for a widget with every call and never
  reports a widget back;
- `goose` (TINY) calls once every three hours, and its last two calls failed: a rate from two calls;
- `windsurf` sends a wrong argument in one call of eight (a caller error, steadily);
- `claude-ai`, `Visual Studio Code` and `zed` are healthy.

Each busy host calls every two minutes (30 calls an hour: a rate from an hour of them is sampled),
the in-house agent every four; a quarter of the busy hosts' calls are to the map tool, whose
results carry app data that the host's widget reports on (joined by `delivery_request_id`). Every
event is logged before `now`, and the same `now` gives the same lines. Ranked by level, the steady
host leads the 24-hour view and the broken one is third at about 11 %; ranked by change against
each host's own baseline, the broken one leads every view whose baseline holds data (the last hour,
6 hours, 24 hours; the 7- and 30-day views' baselines are before the four days, so they rank by level).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from core.app_status import AppData, Drawn, Failed
from core.calls import ToolCall
from tests.analytics.conftest import written

BROKEN, STEADY, SILENT, TINY, CALLER = "cursor-vscode", "ChatGPT/1.2026.317", "fleet-agent", "goose", "windsurf"
HEALTHY = ("claude-ai", "Visual Studio Code", "zed")
HOSTS = (*HEALTHY, BROKEN, STEADY, SILENT, TINY, CALLER)
TOOLS = ("tomtom-geocode", "tomtom-routing", "tomtom-dynamic-map", "tomtom-traffic")
MAP = "tomtom-dynamic-map"
BROKE = timedelta(hours=3)
"""How long before `now` the broken host broke."""
DAYS = 4
MESSAGES = {
    "unavailable": "TomTom did not answer within 20 s (TOMTOM_TIMEOUT); try again later.",
    "retry_later": "TomTom's rate limit was reached; retry later.",
    "internal": "Internal error: the server log has the details under this request id.",
    "invalid_arguments": "locations: needs at least 2 items; send [[lon, lat], [lon, lat]]",
}
EVERY = {SILENT: 4, TINY: 180}
"""Minutes between two calls of a host (2 for every other)."""
TAG = {host: f"h{index}" for index, host in enumerate(HOSTS)}
"""A short prefix of each host's request ids."""


def _at(moment: datetime) -> str:
    return moment.astimezone(UTC).replace(tzinfo=None).isoformat(timespec="seconds")


def outcome(host: str, step: int, moment: datetime, now: datetime, steps: int) -> str:
    """How a host's `step`-th call (0 the newest, `steps` in all) at `moment` ended."""
    if host == BROKEN and moment >= now - BROKE:
        return "internal" if step % 4 else "ok"
    if host == STEADY:
        return ("unavailable", "retry_later", "unavailable", "ok", "ok", "ok", "ok", "ok", "ok", "ok")[step % 10]
    if host == TINY:
        return "internal" if step < 2 else "ok"
    if host == CALLER and step % 8 == 5:
        return "invalid_arguments"
    return "unavailable" if step % 50 == 7 else "ok"


def incident_lines(now: datetime, *, days: int = DAYS) -> list[str]:
    """Every line of the data set, in time order (as logs are)."""
    lines: list[str] = []
    for index, host in enumerate(HOSTS):
        every = EVERY.get(host, 2)
        steps = days * 24 * 60 // every
        for step in range(steps):
            moment = now - timedelta(minutes=every * step, seconds=30 + 5 * index)
            tool = MAP if host == SILENT else TOOLS[(step // 3 + index) % len(TOOLS)]
            code = outcome(host, step, moment, now, steps)
            request_id = f"{TAG[host]}-{step:06d}"
            lines.append(
                written(
                    ToolCall(
                        tool=tool,
                        client=host,
                        user_agent=f"{host}/ua",
                        transport="http",
                        tenant=None,
                        backend="tomtom-orbis-maps",
                        outcome=code,
                        upstream_calls=0 if code in ("internal", "invalid_arguments") else 1,
                        upstream_rate_limited=1 if code == "retry_later" else 0,
                        upstream_ms=float(40 + (step * 37) % 400),
                        total_ms=float(60 + (step * 53) % 900),
                        bytes=800 + step % 1000,
                        request_id=request_id,
                        error=MESSAGES.get(code),
                    ),
                    _at(moment),
                )
            )
            if tool != MAP or code != "ok":
                continue
            caller = {"tool": tool, "client": host, "user_agent": f"{host}/ua", "request_id": request_id}
            lines.append(written(AppData(**caller, delivery="inline", raw_bytes=6_000), _at(moment)))
            if host == SILENT:
                continue  # the in-house agent never runs the widget
            report = {**caller, "request_id": f"{TAG[host]}-rep-{step:06d}", "delivery_request_id": request_id}
            widget = (
                Failed(**report, source="inline", stage="render", error="WebGL context lost")
                if host == STEADY and step % 20 == 6
                else Drawn(**report, source="inline", duration_ms=150.0)
            )
            lines.append(written(widget, _at(moment + timedelta(seconds=20))))
    return sorted(lines, key=lambda line: line[9:38])  # by time, as logs are
