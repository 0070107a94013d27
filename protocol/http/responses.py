"""The JSON-RPC error bodies `/mcp` answers before any JSON-RPC is read.

A refusal by the guard (or, for `misdirected`, by Django's first middleware) is still an MCP
answer: a JSON-RPC error with `id` null, the HTTP status saying what went wrong.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from django.http import HttpResponse


def jsonrpc_error(status: int, code: int, message: str, headers: Sequence[tuple[str, str]] = ()) -> HttpResponse:
    body = {"jsonrpc": "2.0", "id": None, "error": {"code": code, "message": message}}
    response = HttpResponse(json.dumps(body), status=status, content_type="application/json")
    for name, value in headers:
        response[name] = value
    return response


def misdirected() -> HttpResponse:
    """421: the `Host` is not one of ours (the MCP answer to a DNS-rebinding attempt)."""
    return jsonrpc_error(421, -32600, "Host not allowed")
