"""The server's name and version."""

from functools import cache
from importlib import metadata

SERVER_NAME = "tomtom-maps-mcp"


@cache
def version() -> str:
    """The installed package version (from pyproject.toml), read once per process (reading the
    package metadata costs milliseconds, and `/healthz` says it on every probe)."""
    try:
        return metadata.version(SERVER_NAME)
    except metadata.PackageNotFoundError:  # running from a checkout that was never installed
        return "0.0.0+unknown"
