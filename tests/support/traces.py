"""Traces in tests: the SDK's in-memory exporter behind the server's own tracer set-up."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from tools import tracing

Spans = Callable[[], Sequence[ReadableSpan]]


def recording() -> Iterator[Spans]:
    """Traces on, exported to memory; yields a function returning every span ended so far
    (flushed through the batch processor first). Traces are off again afterwards."""
    exporter = InMemorySpanExporter()
    tracing.configure(tracing.TraceSettings(enabled=True), exporter)

    def finished() -> Sequence[ReadableSpan]:
        assert tracing.flush(5_000)
        return exporter.get_finished_spans()

    try:
        yield finished
    finally:
        tracing.shutdown()


def everything_recorded(spans: Sequence[ReadableSpan]) -> str:
    """Every name, attribute, event, link and status text of `spans`, as one text to search."""
    parts: list[Any] = []
    for span in spans:
        parts += [span.name, dict(span.attributes or {}), span.status.description]
        parts += [(event.name, dict(event.attributes or {})) for event in span.events]
        parts += [dict(link.attributes or {}) for link in span.links]
    parts.append([dict(span.resource.attributes) for span in spans[:1]])
    return json.dumps(parts, default=str)


def named(spans: Sequence[ReadableSpan], name: str) -> list[ReadableSpan]:
    return [span for span in spans if span.name == name]
