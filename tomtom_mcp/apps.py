from django.apps import AppConfig


class ProjectConfig(AppConfig):
    """The project itself: its deployment checks (tomtom_mcp/checks.py) and, when `TRACES_ENABLED`,
    the process's tracer (tools/tracing.py)."""

    name = "tomtom_mcp"
    verbose_name = "TomTom MCP server"

    def ready(self) -> None:
        from protocol.config import trace_settings
        from tomtom_mcp import checks  # noqa: F401  (registers the checks)
        from tools import tracing

        traces = trace_settings()
        if traces.enabled:  # once per process: each worker exports its own spans
            tracing.configure(traces)
