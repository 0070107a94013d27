"""Realistic `Tool call` log lines for the analytics benchmark: deterministic for a seed.

One line per call, the `Tool call` event (core/calls.py) as the server's formatter writes it:
the hosts of bench/app_status_lines.py (ChatGPT under several version strings), the common
tools, both backends, mostly `ok` with the error codes a real server sees, latencies with a long
tail. Lines are in time order over `days` days ending at `end`.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from datetime import datetime, timedelta

from app_status_lines import HOSTS, formatted

from core.calls import ToolCall

TOOLS = (
    "tomtom-geocode",
    "tomtom-routing",
    "tomtom-traffic",
    "tomtom-fuzzy-search",
    "tomtom-poi-search",
    "tomtom-dynamic-map",
    "tomtom-ev-routing",
    "tomtom-reverse-geocode",
)
TOOL_WEIGHTS = (0.25, 0.2, 0.1, 0.12, 0.1, 0.08, 0.05, 0.1)
OUTCOMES = ("ok", "invalid_arguments", "unavailable", "retry_later", "unauthorized", "malformed", "internal")
OUTCOME_WEIGHTS = (0.93, 0.035, 0.015, 0.01, 0.005, 0.003, 0.002)
TENANTS = (None, "acme-logistics", "fleetco", "mapsy")  # None: a caller with an API key, not signed in
TENANT_WEIGHTS = (0.7, 0.1, 0.1, 0.1)
CHATGPT_VERSIONS = ("ChatGPT/1.2026.310", "ChatGPT/1.2026.317", "ChatGPT/1.2026.324", "openai-mcp/1.0.0")


def tool_call_lines(
    count: int, *, end: datetime, days: int = 30, seed: int = 11, tenants: bool = False
) -> Iterator[str]:
    """`count` lines (without newlines) spread evenly over `days` days before `end`. Every caller
    has an API key (`"tenant": null`), or with `tenants` 30 % are signed in as one of three tenants."""
    rng = random.Random(seed)
    hosts, host_weights = list(HOSTS), [share for share, _, _ in HOSTS.values()]
    start = end - timedelta(days=days)
    step = (end - start) / count
    for index in range(count):
        when = start + step * index
        client = rng.choices(hosts, host_weights)[0]
        if client == "ChatGPT":
            client = rng.choice(CHATGPT_VERSIONS)
        outcome = rng.choices(OUTCOMES, OUTCOME_WEIGHTS)[0]
        upstream_calls = 0 if outcome == "invalid_arguments" else rng.choice((1, 1, 1, 2, 3))
        upstream_ms = round(rng.lognormvariate(4.6, 0.7) * upstream_calls, 1)
        event = ToolCall(
            tool=rng.choices(TOOLS, TOOL_WEIGHTS)[0],
            client=client,
            user_agent=f"{client}/1.0 (bench)",
            transport="http",
            tenant=rng.choices(TENANTS, TENANT_WEIGHTS)[0] if tenants else None,
            backend="tomtom-orbis-maps" if rng.random() < 0.7 else "tomtom-maps",
            outcome=outcome,
            upstream_calls=upstream_calls,
            upstream_ms=upstream_ms,
            total_ms=round(upstream_ms + rng.uniform(0.5, 30), 1),
            bytes=rng.randint(200, 60_000),
            request_id=f"{rng.getrandbits(64):016x}",
        )
        yield formatted(event, when, pid=rng.randint(7, 10))
