"""The TomTom Maps MCP server as a Django project."""

from importlib import metadata


def version() -> str:
    """The installed package version (from pyproject.toml)."""
    try:
        return metadata.version("tomtom-maps-mcp")
    except metadata.PackageNotFoundError:  # running from a checkout that was never installed
        return "0.0.0+unknown"


SERVER_NAME = "tomtom-maps-mcp"
