"""The TomTom Maps MCP server as a Django project."""

from functools import cache
from importlib import metadata


@cache
def version() -> str:
    """The installed package version (from pyproject.toml), read once per process (reading the
    package metadata costs milliseconds, and `/healthz` says it on every probe)."""
    try:
        return metadata.version("tomtom-maps-mcp")
    except metadata.PackageNotFoundError:  # running from a checkout that was never installed
        return "0.0.0+unknown"


SERVER_NAME = "tomtom-maps-mcp"
