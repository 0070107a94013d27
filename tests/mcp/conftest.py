"""Fixtures of the MCP edge's tests over HTTP."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from protocol import http
from tests.conftest import CANARY_KEY, data

GEOCODE_PATH = r"/maps/orbis/places/geocode"


@pytest.fixture
def served(settings: Any, stub: Any) -> Iterator[Any]:
    """`/mcp` answering from the stub, the server's key the canary too."""
    settings.TOMTOM_API_BASE_URL = stub.base_url
    settings.TOMTOM_API_KEY = CANARY_KEY
    stub.route("GET", GEOCODE_PATH, json_body=data("geocode_v2.json"))
    http.mcp_endpoint.cache_clear()
    yield stub
    http.mcp_endpoint.cache_clear()
