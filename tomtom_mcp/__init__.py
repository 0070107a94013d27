"""The TomTom Maps MCP server as a Django project: settings, URLs, the ASGI entry point."""
