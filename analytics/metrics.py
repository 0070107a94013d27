"""Prometheus metrics from the server's own log events, at /analytics/metrics.

`MetricsHandler` is a logging handler (wired in settings LOGGING on the `tools.calls` and
`tools.app_status` loggers when `ANALYTICS_METRICS_TOKEN` is set): every `Tool call` line, every
`App data` delivery and every `App drawn` / `App failed` / `App cancelled` report updates
prometheus-client counters and histograms, so nothing in tools/ knows about Prometheus. Under
gunicorn set `PROMETHEUS_MULTIPROC_DIR` (an empty directory, the same for every worker): each
worker writes its values there and a scrape of any worker adds them all up (prometheus-client's
multiprocess mode; gunicorn.conf.py marks a worker dead when it exits).

Metrics are recorded per exact client name and reported per host family: the scrape maps each
`client` label to its family (analytics/families.py) and sums, so the family table applies
without a restart. Labels are bounded: names are cut at MAX_LABEL_LENGTH, and past
MAX_LABEL_VALUES distinct clients (or tools) in one process the rest are recorded as `other`.

Gauges read from the database at each scrape come beside them: the analytics store's freshness
(`IngestionMark`) and the upstream contract canary's findings (`CanaryResult`, analytics/canary.py).

The endpoint answers only `Authorization: Bearer <ANALYTICS_METRICS_TOKEN>` (401 otherwise) and
is off (404) while the setting is empty.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import os
import threading
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest, multiprocess
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.exposition import CONTENT_TYPE_LATEST

from core.app_status import AppData, Cancelled, Drawn, Failed
from core.calls import ToolCall

MAX_LABEL_LENGTH = 100
MAX_LABEL_VALUES = 200
OTHER = "other"
LATENCY_BUCKETS_S = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 20.0, 60.0)
FAMILY_LABEL = "host_family"

REGISTRY = CollectorRegistry(auto_describe=True)
"""Our metrics only (not the process collectors): the in-process values, when not in multiprocess mode."""
TOOL_CALLS = Counter(
    "tomtom_mcp_tool_calls",
    "Tool calls, by tool, outcome (ok or the error code) and host.",
    ["tool", "outcome", "client"],
    registry=REGISTRY,
)
TOOL_CALL_SECONDS = Histogram(
    "tomtom_mcp_tool_call_seconds",
    "Total time of a tool call.",
    ["tool", "client"],
    buckets=LATENCY_BUCKETS_S,
    registry=REGISTRY,
)
UPSTREAM_SECONDS = Histogram(
    "tomtom_mcp_upstream_seconds",
    "Time a tool call spent in TomTom requests (calls that made one).",
    ["tool", "client"],
    buckets=LATENCY_BUCKETS_S,
    registry=REGISTRY,
)
UPSTREAM_REQUESTS = Counter(
    "tomtom_mcp_upstream_requests",
    "TomTom requests made by tool calls, retries included.",
    ["tool", "client"],
    registry=REGISTRY,
)
UPSTREAM_RATE_LIMITED = Counter(
    "tomtom_mcp_upstream_rate_limited",
    "TomTom requests answered 429 (rate limited), retries included.",
    ["tool", "client"],
    registry=REGISTRY,
)
WIDGETS = Counter(
    "tomtom_mcp_widgets",
    "Widget outcomes reported by widgets: drawn, failed or cancelled, by host.",
    ["outcome", "client"],
    registry=REGISTRY,
)
WIDGET_DELIVERIES = Counter(
    "tomtom_mcp_widget_deliveries",
    "Results delivered to a widget (`App data`: with app data, or an error result), by host.",
    ["client"],
    registry=REGISTRY,
)
"""The funnel's first step: `1 - widgets / deliveries` is the share that never reported back
(the WidgetUnreportedRateHigh alert)."""


class _Bounded:
    """Label values as recorded: cut to MAX_LABEL_LENGTH, at most MAX_LABEL_VALUES per process."""

    def __init__(self) -> None:
        self._seen: set[str] = set()
        self._lock = threading.Lock()

    def __call__(self, value: object) -> str:
        text = value[:MAX_LABEL_LENGTH] if isinstance(value, str) and value else "unknown"
        if text in self._seen:
            return text
        with self._lock:
            if len(self._seen) >= MAX_LABEL_VALUES:
                return OTHER
            self._seen.add(text)
        return text


_client_label, _tool_label = _Bounded(), _Bounded()


class MetricsHandler(logging.Handler):
    """Update the metrics from `Tool call` events, `App data` deliveries and the widgets' `App
    drawn`, `App failed` and `App cancelled` reports (core/calls.py, core/app_status.py: the
    record carries the event itself)."""

    def emit(self, record: logging.LogRecord) -> None:
        event = getattr(record, "event", None)
        try:
            if isinstance(event, ToolCall):
                self._tool_call(event)
            elif isinstance(event, Drawn | Failed | Cancelled):
                WIDGETS.labels(event.KIND, _client_label(event.client)).inc()
            elif isinstance(event, AppData):
                WIDGET_DELIVERIES.labels(_client_label(event.client)).inc()
        except Exception:
            self.handleError(record)

    @staticmethod
    def _tool_call(event: ToolCall) -> None:
        tool, client = _tool_label(event.tool), _client_label(event.client)
        TOOL_CALLS.labels(tool, event.outcome[:40], client).inc()
        if event.total_ms is not None:
            TOOL_CALL_SECONDS.labels(tool, client).observe(event.total_ms / 1000)
        if event.upstream_ms is not None and event.upstream_calls:
            UPSTREAM_SECONDS.labels(tool, client).observe(event.upstream_ms / 1000)
        if event.upstream_calls:
            UPSTREAM_REQUESTS.labels(tool, client).inc(event.upstream_calls)
        if event.upstream_rate_limited:
            UPSTREAM_RATE_LIMITED.labels(tool, client).inc(event.upstream_rate_limited)


def collected() -> list[Metric]:
    """Every worker's values in multiprocess mode (PROMETHEUS_MULTIPROC_DIR), else this process's."""
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)
        return list(registry.collect())
    return list(REGISTRY.collect())


def by_family(metrics: Iterable[Metric], family_of: Callable[[str], str]) -> Iterator[Metric]:
    """The metrics with each `client` label replaced by `host_family` (family_of(client)), samples
    with equal labels summed (counters, histogram buckets, counts and sums all add up)."""
    for metric in metrics:
        summed: dict[tuple[str, tuple[tuple[str, str], ...]], float] = {}
        for sample in metric.samples:
            if sample.name.endswith("_created"):  # a timestamp per label set: not summable
                continue
            labels = dict(sample.labels)
            if "client" in labels:
                labels[FAMILY_LABEL] = family_of(labels.pop("client"))
            key = (sample.name, tuple(sorted(labels.items())))
            summed[key] = summed.get(key, 0.0) + sample.value
        regrouped = Metric(metric.name, metric.documentation, metric.type)
        for (name, label_items), value in summed.items():
            regrouped.add_sample(name, dict(label_items), value)
        yield regrouped


class _Families:
    """A collector of already regrouped metrics, for generate_latest."""

    def __init__(self, metrics: list[Metric]) -> None:
        self._metrics = metrics

    def collect(self) -> Iterator[Metric]:
        yield from self._metrics


INGESTION_GAUGES = (
    (
        "data_up_to",
        "tomtom_mcp_analytics_data_up_to_timestamp_seconds",
        "Time of the newest event stored, per family of events (AppStatus, ToolCall).",
    ),
    (
        "last_ingest",
        "tomtom_mcp_analytics_last_ingest_timestamp_seconds",
        "When ingestion last stored a batch of events, per family.",
    ),
    (
        "kept_from",
        "tomtom_mcp_analytics_raw_events_kept_from_timestamp_seconds",
        "The retention's cutoff: raw events before it were dropped (rollups stay), per family.",
    ),
)
"""The analytics store's own freshness, read from the database at each scrape (the same on every
replica: alert rules take their `max`)."""


def ingestion_metrics(marks: Iterable[Any]) -> list[Metric]:
    """Gauges of `IngestionMark` rows: a sample per family whose time is known."""
    metrics: list[Metric] = []
    for field, name, documentation in INGESTION_GAUGES:
        gauge = GaugeMetricFamily(name, documentation, labels=["family"])
        for mark in marks:
            if (moment := getattr(mark, field)) is not None:
                gauge.add_metric([mark.family], moment.timestamp())
        metrics.append(gauge)
    return metrics


CANARY_DRIFT = (
    "tomtom_mcp_canary_drift",
    "1 when the upstream contract canary's last answered check of a tool on a backend found drift"
    " (a shape we cannot read, a path, version or header TomTom refused), else 0.",
)
CANARY_LAST_RUN = (
    "tomtom_mcp_canary_last_run_timestamp_seconds",
    "When the canary last got TomTom's answers on a backend (a run that reached no answer, or whose"
    " key was refused, checked nothing and does not count).",
)
CANARY_GAUGES = ((*CANARY_DRIFT, ("backend", "tool")), (*CANARY_LAST_RUN, ("backend",)))
"""The canary's gauges and their labels, read from `CanaryResult` rows at each scrape (the same on
every replica: alert rules take their `max`)."""


def canary_metrics(results: Iterable[Any]) -> list[Metric]:
    """Gauges of `CanaryResult` rows (analytics/canary.py): drift per tool and backend that a run
    answered, and per backend the newest answer."""
    (drift_name, drift_doc), (run_name, run_doc) = CANARY_DRIFT, CANARY_LAST_RUN
    drift = GaugeMetricFamily(drift_name, drift_doc, labels=["backend", "tool"])
    last_run = GaugeMetricFamily(run_name, run_doc, labels=["backend"])
    newest: dict[str, float] = {}
    for result in results:
        if result.drifted is not None:
            drift.add_metric([result.backend, result.tool], 1.0 if result.drifted else 0.0)
        if result.answered_at is not None:
            newest[result.backend] = max(newest.get(result.backend, 0.0), result.answered_at.timestamp())
    for backend, moment in sorted(newest.items()):
        last_run.add_metric([backend], moment)
    return [drift, last_run]


def exposition(family_of: Callable[[str], str], marks: Iterable[Any] = (), canary: Iterable[Any] = ()) -> bytes:
    """The Prometheus text exposition of every metric, by host family, the ingestion gauges and
    the canary's."""
    registry = CollectorRegistry(auto_describe=False)
    gauges = [*ingestion_metrics(list(marks)), *canary_metrics(canary)]
    registry.register(_Families([*by_family(collected(), family_of), *gauges]))
    return generate_latest(registry)


def token_matches(header: str, token: str) -> bool:
    """`header` is `Bearer <token>`; compared in constant time (hashed first, so not even the length leaks)."""
    offered = header.removeprefix("Bearer ").strip() if header.startswith("Bearer ") else ""
    return hmac.compare_digest(hashlib.sha256(offered.encode()).digest(), hashlib.sha256(token.encode()).digest())


def metrics_view(request):
    """GET /analytics/metrics: the exposition, for a bearer of ANALYTICS_METRICS_TOKEN."""
    from django.conf import settings
    from django.http import Http404, HttpResponse

    from analytics.families import Families
    from analytics.models import CanaryResult, IngestionMark

    token = settings.ANALYTICS_METRICS_TOKEN
    if not token:
        raise Http404("metrics are off: ANALYTICS_METRICS_TOKEN is not set")
    if not token_matches(request.headers.get("Authorization", ""), token):
        response = HttpResponse("a bearer token is required\n", status=401, content_type="text/plain")
        response["WWW-Authenticate"] = 'Bearer realm="metrics"'
        return response
    body = exposition(Families.load().family_of, IngestionMark.objects.all(), CanaryResult.objects.all())
    return HttpResponse(body, content_type=CONTENT_TYPE_LATEST)
