from django.apps import AppConfig


class ProtocolConfig(AppConfig):
    """The MCP edge: an app for its `mcp_stdio` and `mcp_exec` commands; it has no models."""

    name = "protocol"
    verbose_name = "MCP protocol"
