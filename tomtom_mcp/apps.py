from django.apps import AppConfig


class ProjectConfig(AppConfig):
    """The project itself: its deployment checks (tomtom_mcp/checks.py)."""

    name = "tomtom_mcp"
    verbose_name = "TomTom MCP server"

    def ready(self) -> None:
        from tomtom_mcp import checks  # noqa: F401  (registers the checks)
