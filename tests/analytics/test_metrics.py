"""The Prometheus endpoint: counts from the log events, by host family, token-protected, multiprocess."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from collections.abc import Iterator

import pytest
from prometheus_client.parser import text_string_to_metric_families

from analytics.metrics import MetricsHandler, by_family, collected
from core.app_status import AppData, Cancelled, Drawn, Failed
from core.calls import ToolCall
from core.events import log
from tests.conftest import REPO

pytestmark = pytest.mark.django_db

TOKEN = "metrics-token-5e1"
calls_logger, app_status_logger = logging.getLogger("tools.calls"), logging.getLogger("tools.app_status")


@pytest.fixture
def handler() -> Iterator[MetricsHandler]:
    handler = MetricsHandler()
    saved = [(lg, lg.level) for lg in (calls_logger, app_status_logger)]
    for lg, _ in saved:
        lg.setLevel(logging.INFO)
        lg.addHandler(handler)
    yield handler
    for lg, level in saved:
        lg.removeHandler(handler)
        lg.setLevel(level)


def call(tool: str, client: str, outcome: str = "ok", upstream_ms: float = 120.0) -> None:
    log(
        ToolCall(
            tool=tool,
            client=client,
            outcome=outcome,
            upstream_calls=1,
            upstream_ms=upstream_ms,
            total_ms=upstream_ms + 5,
            bytes=100,
        )
    )


def samples(text: str) -> dict[tuple[str, tuple], float]:
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def test_tool_calls_and_widgets_are_counted_by_host_family(client, settings, handler):
    settings.ANALYTICS_METRICS_TOKEN = TOKEN
    call("tomtom-metrics-test", "ChatGPT/1.2026.1")
    call("tomtom-metrics-test", "ChatGPT/1.2026.2", outcome="unavailable", upstream_ms=3_000)
    call("tomtom-metrics-test", "fleet-agent")
    log(Drawn(tool="tomtom-metrics-test", client="metrics-test-host", source="inline"))
    for _ in range(2):
        log(Failed(tool="tomtom-metrics-test", client="metrics-test-host", source="inline", stage="render"))
    log(Cancelled(tool="tomtom-metrics-test", client="metrics-test-host", source="none", reason="user"))
    for _ in range(5):
        log(AppData(tool="tomtom-metrics-test", client="metrics-test-host", delivery="inline"))

    response = client.get("/analytics/metrics", HTTP_AUTHORIZATION=f"Bearer {TOKEN}")

    assert response.status_code == 200
    found = samples(response.text)
    tool = ("tool", "tomtom-metrics-test")
    assert found[("tomtom_mcp_tool_calls_total", (("host_family", "ChatGPT"), ("outcome", "ok"), tool))] == 1
    assert found[("tomtom_mcp_tool_calls_total", (("host_family", "ChatGPT"), ("outcome", "unavailable"), tool))] == 1
    assert found[("tomtom_mcp_tool_calls_total", (("host_family", "fleet-agent"), ("outcome", "ok"), tool))] == 1
    chatgpt = (("host_family", "ChatGPT"), ("le", "0.25"), tool)
    assert found[("tomtom_mcp_upstream_seconds_bucket", chatgpt)] == 1  # 0.12 s; the 3 s call is above
    assert found[("tomtom_mcp_upstream_seconds_count", (("host_family", "ChatGPT"), tool))] == 2
    host = ("host_family", "metrics-test-host")
    assert found[("tomtom_mcp_widgets_total", (host, ("outcome", "drawn")))] == 1
    assert found[("tomtom_mcp_widgets_total", (host, ("outcome", "failed")))] == 2
    assert found[("tomtom_mcp_widgets_total", (host, ("outcome", "cancelled")))] == 1
    assert found[("tomtom_mcp_widget_deliveries_total", (host,))] == 5, "the unreported-rate alert's series"


def test_the_endpoint_needs_the_token_and_is_off_without_one(client, settings):
    settings.ANALYTICS_METRICS_TOKEN = TOKEN
    assert client.get("/analytics/metrics").status_code == 401
    assert client.get("/analytics/metrics", HTTP_AUTHORIZATION=f"Bearer {TOKEN}x").status_code == 401
    settings.ANALYTICS_METRICS_TOKEN = ""
    assert client.get("/analytics/metrics", HTTP_AUTHORIZATION=f"Bearer {TOKEN}").status_code == 404


_WORKER = """
import logging
from analytics.metrics import MetricsHandler
from core.calls import ToolCall
event = ToolCall(tool="tomtom-geocode", client="goose", outcome="ok", total_ms=12.0)
record = logging.makeLogRecord({"name": "tools.calls", "msg": "Tool call", "levelno": 20, "event": event})
MetricsHandler().handle(record)
"""


def test_workers_add_up_in_multiprocess_mode(tmp_path, monkeypatch):
    env = {**os.environ, "PROMETHEUS_MULTIPROC_DIR": str(tmp_path), "PYTHONPATH": str(REPO)}
    for _ in range(2):  # two worker processes
        subprocess.run([sys.executable, "-c", _WORKER], env=env, check=True, cwd=REPO)
    monkeypatch.setenv("PROMETHEUS_MULTIPROC_DIR", str(tmp_path))

    (metric,) = [m for m in by_family(collected(), lambda client: client.title()) if m.name == "tomtom_mcp_tool_calls"]

    assert [(s.labels, s.value) for s in metric.samples] == [
        ({"tool": "tomtom-geocode", "outcome": "ok", "host_family": "Goose"}, 2.0)
    ]


def test_tomtom_requests_and_their_429s_are_counted(client, settings, handler):
    settings.ANALYTICS_METRICS_TOKEN = TOKEN
    log(ToolCall(tool="tomtom-metrics-429", client="goose", outcome="ok", upstream_calls=3, upstream_rate_limited=2))
    log(
        ToolCall(
            tool="tomtom-metrics-429", client="goose", outcome="retry_later", upstream_calls=3, upstream_rate_limited=3
        )
    )

    found = samples(client.get("/analytics/metrics", HTTP_AUTHORIZATION=f"Bearer {TOKEN}").text)

    labels = (("host_family", "Goose"), ("tool", "tomtom-metrics-429"))
    assert found[("tomtom_mcp_upstream_requests_total", labels)] == 6
    assert found[("tomtom_mcp_upstream_rate_limited_total", labels)] == 5
