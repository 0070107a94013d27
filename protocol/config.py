"""The process-wide server configuration, read once from Django settings."""

from __future__ import annotations

from django.conf import settings

from core.version import version
from tools.context import ServerConfig
from tools.download import DownloadPolicy, parse_networks
from tools.tomtom.backends import BACKEND_SETTING, Backend
from tools.tomtom.client import ClientSettings
from tools.tracing import TraceSettings
from tools.widgets import MAPLIBRE_CDN, Widget, map_app


def server_config() -> ServerConfig:
    return ServerConfig(
        version=version(),
        client=ClientSettings(
            base_url=settings.TOMTOM_API_BASE_URL,
            connect_timeout=settings.TOMTOM_CONNECT_TIMEOUT,
            total_timeout=settings.TOMTOM_TIMEOUT,
            max_retries=settings.TOMTOM_MAX_RETRIES,
            max_retry_after=settings.TOMTOM_MAX_RETRY_AFTER,
            max_body_bytes=settings.TOMTOM_MAX_BODY_BYTES,
            max_decoded_bytes=settings.TOMTOM_MAX_DECODED_BYTES,
            max_header_bytes=settings.TOMTOM_MAX_HEADER_BYTES,
            max_connections=settings.TOMTOM_MAX_CONNECTIONS,
            max_full_chars=settings.MCP_MAX_FULL_CHARS,
        ),
        server_key=settings.TOMTOM_API_KEY,
        default_backend=Backend.parse(settings.TOMTOM_MAPS_BACKEND or "", source=BACKEND_SETTING),
        hosted=settings.MCP_HOSTED,
        downloads=DownloadPolicy(
            allowed_networks=parse_networks(settings.DATA_VIZ_ALLOWED_NETWORKS, source="DATA_VIZ_ALLOWED_NETWORKS")
        ),
    )


def trace_settings() -> TraceSettings:
    return TraceSettings(
        enabled=settings.TRACES_ENABLED,
        service_name=settings.OTEL_SERVICE_NAME,
        service_version=version(),
        endpoint=settings.OTEL_EXPORTER_OTLP_ENDPOINT,
        traces_endpoint=settings.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT,
        max_queue_size=settings.OTEL_BSP_MAX_QUEUE_SIZE,
        max_export_batch_size=settings.OTEL_BSP_MAX_EXPORT_BATCH_SIZE,
    )


def default_widgets() -> list[Widget]:
    """The process's widgets, configured from Django settings (WIDGET_MAPLIBRE_URL)."""
    return [map_app(settings.WIDGET_MAPLIBRE_URL or MAPLIBRE_CDN, version=version())]
