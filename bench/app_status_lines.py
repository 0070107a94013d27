"""Realistic app-status log lines for the analytics benchmark: deterministic for a seed.

Each tool call with a widget writes the lines a real server would (docs/app-status.md):
`App data`, then what its widget reported. Hosts differ the way ADR 9 describes: one drops the
result `_meta` (the widget cannot draw), one sometimes fails to decode, long routes are too
large to inline; data-viz fetches its data again, and a few clients still call a retired tool
or send an outdated input. Lines are in time order over `days` days ending at `end`. With
`join_keys` (the default) a widget's report names the call that delivered its data
(`delivery_request_id`, the widget funnel's join key); without, the lines are those of a server
and widgets that predate it, otherwise the same.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Iterator
from datetime import datetime, timedelta

from core.app_status import (
    AppData,
    AppStatusEvent,
    DecodeFailed,
    Drawn,
    Failed,
    Fetched,
    FetchFailed,
    HostDropped,
    OutdatedCall,
    RetiredToolCalled,
    Simplification,
    TooLarge,
)
from core.events import Event
from core.logging import JsonLinesFormatter

HOSTS = {
    # client name: (share of calls, chance the host drops _meta, chance the widget fails to decode)
    "claude-ai": (0.34, 0.0, 0.002),
    "ChatGPT": (0.22, 0.0, 0.01),
    "Visual Studio Code": (0.14, 0.0, 0.004),
    "cursor-vscode": (0.10, 1.0, 0.0),
    "goose": (0.07, 0.0, 0.03),
    "mcp-inspector": (0.05, 0.0, 0.0),
    "unknown": (0.05, 0.2, 0.01),
    "fleet-agent": (0.03, 0.0, 0.0),
}
TOOLS = {
    # tool: (share of calls, chance its app data is too large)
    "tomtom-geocode": (0.35, 0.0),
    "tomtom-routing": (0.30, 0.04),
    "tomtom-traffic": (0.15, 0.0),
    "tomtom-dynamic-map": (0.10, 0.02),
    "tomtom-data-viz": (0.10, 0.0),
}
RETIRED = ("tomtom-fuzzy-search", ["tomtom-geocode", "tomtom-poi-search"])


def app_status_lines(
    count: int, *, end: datetime, days: int = 30, seed: int = 7, join_keys: bool = True
) -> Iterator[str]:
    """`count` lines (without newlines) spread evenly over `days` days before `end`."""
    rng = random.Random(seed)
    hosts, host_weights = list(HOSTS), [share for share, _, _ in HOSTS.values()]
    tools, tool_weights = list(TOOLS), [share for share, _ in TOOLS.values()]
    start = end - timedelta(days=days)
    step = (end - start) / count
    written = 0
    while written < count:
        when = start + step * written
        client = rng.choices(hosts, host_weights)[0]
        delivered = None  # the request id of this call's `App data` line
        for fields in _call(rng, client, rng.choices(tools, tool_weights)[0]):
            if written == count:
                return
            when += timedelta(milliseconds=rng.randint(5, 900))
            status = fields["status"]
            if join_keys and delivered is not None and status in (Drawn, Failed):
                fields["delivery_request_id"] = delivered
            text, request_id = _line(when, rng, client, fields)
            if status is AppData:
                delivered = request_id
            yield text
            written += 1


def _call(rng: random.Random, client: str, tool: str) -> Iterator[dict[str, object]]:
    """The lines of one tool call and its widget, as (status, fields) dicts."""
    _, drops_meta, decode_failure = HOSTS[client]
    if rng.random() < 0.004:
        yield {"status": RetiredToolCalled, "tool": RETIRED[0], "replaced_by": RETIRED[1]}
        return
    if rng.random() < 0.003:
        yield {"status": OutdatedCall, "tool": tool, "input": "language", "change": "string_now_list"}
    raw_bytes = rng.randint(2_000, 400_000)
    too_large = rng.random() < TOOLS[tool][1]
    app_data: dict[str, object] = {
        "status": AppData,
        "tool": tool,
        "delivery": "too_large" if too_large else "inline",
        "raw_bytes": raw_bytes,
        "encoded_chars": raw_bytes // 7,
        "result_chars": raw_bytes // 7 + rng.randint(400, 3_000),
    }
    if raw_bytes > 200_000:
        app_data["simplification"] = Simplification(original_points=raw_bytes // 10, points=9_000, max_error_m=4.0)
    if tool != "tomtom-traffic":
        yield app_data
    if too_large:
        yield {"status": TooLarge, "tool": tool, "raw_bytes": raw_bytes, "result_chars": 160_000}
        yield _failed(rng, tool, "none", "result", "App data too large for the result")
        return
    if tool == "tomtom-data-viz":
        if rng.random() < 0.02:
            yield {"status": FetchFailed, "tool": tool, "error_code": "upstream", "error": "HTTP 502"}
            yield _failed(rng, tool, "data_url", "fetch", "data_url could not be downloaded")
            return
        yield {"status": Fetched, "tool": tool, "source": "data_url", "reason": "too_large", "raw_bytes": raw_bytes}
        source = "data_url"
    elif tool == "tomtom-traffic":
        source = "tool_input"
    elif rng.random() < drops_meta:
        yield {"status": HostDropped, "tool": tool, "source": "inline"}
        yield _failed(rng, tool, "none", "result", "The host did not pass the result's _meta")
        return
    else:
        source = "inline"
    if rng.random() < decode_failure:
        yield {"status": DecodeFailed, "tool": tool, "source": source, "error": "incorrect header check"}
        yield _failed(rng, tool, source, "decode", "incorrect header check")
        return
    if rng.random() < 0.003:
        yield _failed(rng, tool, source, "render", "WebGL context lost")
        return
    yield {
        "status": Drawn,
        "tool": tool,
        "source": source,
        "duration_ms": round(rng.uniform(40, 2_500), 1),
        "features": rng.randint(1, 40),
    }


def _failed(rng: random.Random, tool: str, source: str, stage: str, error: str) -> dict[str, object]:
    return {
        "status": Failed,
        "tool": tool,
        "source": source,
        "stage": stage,
        "duration_ms": round(rng.uniform(5, 400), 1),
        "error": error,
    }


def _line(when: datetime, rng: random.Random, client: str, fields: dict[str, object]) -> tuple[str, str]:
    """One line as the server writes it (the event formatted by core.logging.JsonLinesFormatter),
    and its request id."""
    event_type = fields.pop("status")
    assert isinstance(event_type, type) and issubclass(event_type, AppStatusEvent)
    user_agent, request_id = f"{client}/1.{rng.randint(0, 9)} (bench)", f"{rng.getrandbits(64):016x}"
    event = event_type(client=client, user_agent=user_agent, request_id=request_id, **fields)  # type: ignore[arg-type]
    return formatted(event, when, pid=rng.randint(7, 10)), request_id


def formatted(event: Event, when: datetime, *, pid: int) -> str:
    """`event` as the server's formatter writes it, logged at `when` by process `pid`."""
    record = logging.LogRecord(event.LOGGER, event.level(), __file__, 0, event.MESSAGE, None, None)
    record.created, record.process, record.event = when.timestamp(), pid, event
    return _FORMATTER.format(record)


_FORMATTER = JsonLinesFormatter()
