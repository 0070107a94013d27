"""OpenTelemetry traces: off unless `TRACES_ENABLED`; when on, exported over OTLP/HTTP in bounded
batches (docs/adr/0035-traces.md).

A tool call over HTTP makes three kinds of span, each where its facts are known:

    tools/call <tool>       SERVER    the `/mcp` edge (protocol/http/endpoint.py), outcome from protocol/spans.py
      execute_tool <tool>   INTERNAL  the dispatcher's outermost interceptor (tools.dispatch.trace_calls)
        GET / POST          CLIENT    each request sent to TomTom, retries included (tools/tomtom/client.py)

Off (the default), `tracer()` is None and every site tests that first: no attribute is built, no
span object is made, the SDK is never imported and no exporter or thread starts. On, the SDK's
`BatchSpanProcessor` holds at most `max_queue_size` ended spans (more are dropped, never waited
for) and sends at most `max_export_batch_size` per request from its own thread; the standard
`OTEL_*` variables the SDK reads itself (sampler, headers, timeouts, resource attributes) apply.

On, the JSON log lines written inside a recording span carry its `trace_id` and `span_id`
(core/logging.py reads them through the hook `configure` installs and `shutdown` removes), so a
span leads to its log lines and a line to its span; off, the formatter reads nothing.

No attribute carries a secret: on Orbis the key travels in the `TomTom-Api-Key` header, which no
span records, so `url.full` has no key at all; on TomTom Maps it is the `key` query parameter,
which `REDACTED` replaces in `url.full`; tokens and header keys are never read here;
error descriptions are the texts the call log keeps, scrubbed of the call's keys.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from core import logging as json_logging

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SpanExporter
    from opentelemetry.trace import Tracer

REDACTED = "REDACTED"
"""What replaces a secret query value in `url.full` (OpenTelemetry's URL conventions use this word)."""
INSTRUMENTATION = "tomtom_mcp"
DEFAULT_ENDPOINT = "http://localhost:4318"
"""OTLP/HTTP's default collector address (`OTEL_EXPORTER_OTLP_ENDPOINT` unset)."""
MAX_ATTRIBUTE_LENGTH = 2048
"""Longest attribute value recorded, in characters (a longer one is cut)."""

_tracer: Tracer | None = None
_provider: TracerProvider | None = None


@dataclass(frozen=True, slots=True)
class TraceSettings:
    """How this process traces (read once from Django settings by protocol/config.py; README, "Configuration")."""

    enabled: bool = False
    service_name: str = "tomtom-maps-mcp"
    service_version: str = ""
    endpoint: str = DEFAULT_ENDPOINT
    """The collector's base URL (`OTEL_EXPORTER_OTLP_ENDPOINT`); spans go to `<endpoint>/v1/traces`."""
    traces_endpoint: str | None = None
    """The full traces URL (`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`), used as is when set."""
    max_queue_size: int = 2048
    """Ended spans kept for export at most (`OTEL_BSP_MAX_QUEUE_SIZE`); more are dropped."""
    max_export_batch_size: int = 512
    """Spans sent in one export request at most (`OTEL_BSP_MAX_EXPORT_BATCH_SIZE`)."""

    def __post_init__(self) -> None:
        if not 1 <= self.max_export_batch_size <= self.max_queue_size <= 65536:
            raise ValueError(
                "OTEL_BSP_MAX_EXPORT_BATCH_SIZE must be at least 1 and at most OTEL_BSP_MAX_QUEUE_SIZE, which"
                f" must be at most 65536 (they are {self.max_export_batch_size} and {self.max_queue_size})"
            )

    @property
    def export_url(self) -> str:
        return self.traces_endpoint or self.endpoint.rstrip("/") + "/v1/traces"


def tracer() -> Tracer | None:
    """The process's tracer, or None when traces are off."""
    return _tracer


def configure(settings: TraceSettings, exporter: SpanExporter | None = None) -> None:
    """Start tracing as `settings` say (the OTLP exporter unless `exporter` is given: tests pass an
    in-memory one), or stop it; a running provider is flushed and shut down first."""
    global _tracer, _provider
    shutdown()
    if not settings.enabled:
        return
    try:
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor
    except ImportError:
        raise RuntimeError(
            "TRACES_ENABLED needs the OpenTelemetry SDK: install the `traces` extra"
            " (pip install 'tomtom-maps-mcp[traces]')"
        ) from None
    if exporter is None:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        exporter = OTLPSpanExporter(endpoint=settings.export_url)
    attributes = {"service.name": settings.service_name}
    if settings.service_version:
        attributes["service.version"] = settings.service_version
    provider = TracerProvider(resource=Resource.create(attributes))  # the sampler: OTEL_TRACES_SAMPLER
    provider.add_span_processor(
        BatchSpanProcessor(
            exporter, max_queue_size=settings.max_queue_size, max_export_batch_size=settings.max_export_batch_size
        )
    )
    _provider, _tracer = provider, provider.get_tracer(INSTRUMENTATION, settings.service_version or None)
    json_logging.set_trace_context(_trace_context())


def flush(timeout_millis: int = 30_000) -> bool:
    """Export every ended span now (True when all were sent in time; also when traces are off)."""
    return _provider.force_flush(timeout_millis) if _provider is not None else True


def shutdown() -> None:
    """Flush and stop the provider (process exit, or before configuring again); traces are then off."""
    global _tracer, _provider
    provider, _provider, _tracer = _provider, None, None
    json_logging.set_trace_context(None)
    if provider is not None:
        provider.shutdown()


def _trace_context() -> json_logging.TraceContext:
    """What a log line carries of the current span (core/logging.py): its trace and span ids as
    lowercase hex, the way W3C `traceparent` and OpenTelemetry write them, or None outside a
    recording span (none current, or one the sampler dropped)."""
    from opentelemetry.trace import get_current_span

    def ids() -> tuple[str, str] | None:
        span = get_current_span()
        if not span.is_recording():
            return None
        context = span.get_span_context()
        return "%032x" % context.trace_id, "%016x" % context.span_id  # noqa: UP031 - the fastest spelling

    return ids


def clip(value: str) -> str:
    return value if len(value) <= MAX_ATTRIBUTE_LENGTH else value[:MAX_ATTRIBUTE_LENGTH]


def attributes(**values: Any) -> dict[str, Any]:
    """Attributes from keyword arguments (`__` spells `.`), without the None ones."""
    return {name.replace("__", "."): value for name, value in values.items() if value is not None}
