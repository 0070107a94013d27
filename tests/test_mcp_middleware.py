"""`MCP_PATH` runs through `MCP_MIDDLEWARE`, a part of `MIDDLEWARE` (tomtom_mcp/asgi.py, checks.py)."""

from __future__ import annotations

import json

import httpx
import pytest
from django.core.checks import Error
from django.test import override_settings

from tests.conftest import server_process
from tomtom_mcp.checks import check_mcp_middleware
from tomtom_mcp.middleware import is_subsequence


def test_the_configured_mcp_middleware_pass_the_check():
    assert check_mcp_middleware() == []


@pytest.mark.parametrize(
    "mcp_middleware",
    [
        ["django.middleware.common.CommonMiddleware", "django.middleware.security.SecurityMiddleware"],
        ["tomtom_mcp.middleware.McpHostMiddleware", "example.NotInMiddleware"],
    ],
)
def test_mcp_middleware_out_of_order_or_unknown_fail_the_check(mcp_middleware):
    with override_settings(MCP_MIDDLEWARE=mcp_middleware):
        assert check_mcp_middleware() == [
            Error(
                "MCP_MIDDLEWARE is not a part of MIDDLEWARE in its order.",
                hint="List in MCP_MIDDLEWARE only names from MIDDLEWARE, in the order MIDDLEWARE has them.",
                id="tomtom_mcp.E004",
            )
        ]


def test_subsequence_examples():
    assert is_subsequence([], ["a"])
    assert is_subsequence(["a", "c"], ["a", "b", "c"])
    assert not is_subsequence(["c", "a"], ["a", "b", "c"])
    assert not is_subsequence(["a", "a"], ["a"])


def test_mcp_calls_get_the_security_headers_and_none_of_the_browser_middleware(stub):
    with server_process({"TOMTOM_API_BASE_URL": stub.base_url}) as base:
        ping = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"})
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        mcp = httpx.post(base + "/mcp", content=ping, headers=headers)
        health = httpx.get(base + "/healthz")
    assert mcp.status_code == 200 and mcp.json()["result"] == {}
    assert mcp.headers["X-Content-Type-Options"] == "nosniff"  # SecurityMiddleware
    assert "X-Frame-Options" not in mcp.headers and "Set-Cookie" not in mcp.headers
    assert health.status_code == 200
    assert health.headers["X-Frame-Options"] == "DENY"  # every other path: the whole stack
