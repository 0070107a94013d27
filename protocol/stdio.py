"""MCP over stdio: stdout carries only JSON-RPC; logs go to stderr."""

from __future__ import annotations

import base64
import os
from collections.abc import Callable
from typing import Any

from mcp.server.context import ServerRequestContext
from mcp.server.stdio import stdio_server

from protocol.handlers.callers import client_name_from_handshake
from protocol.server import build_server
from tools.context import CallContext, ServerConfig
from tools.dispatch import Dispatcher
from tools.tomtom.backends import Backend
from tools.tomtom.credentials import KeySources


def new_session_key() -> str:
    """A session key for one stdio server process (one client): 72 random bits, base64url, as
    long as the label of an HTTP session id (protocol.identity.session_label)."""
    return base64.urlsafe_b64encode(os.urandom(9)).decode("ascii")


def stdio_context_factory(
    config: ServerConfig, *, api_key: str | None, backend: Backend | None
) -> Callable[[ServerRequestContext[Any]], CallContext]:
    session = new_session_key()  # a stdio server serves one client, one session, for its lifetime

    def make_context(ctx: ServerRequestContext[Any]) -> CallContext:
        return CallContext(
            config=config,
            transport="stdio",
            keys=KeySources(cli=api_key),
            backend=backend,
            client_name=client_name_from_handshake(ctx) or "unknown",
            session=session,
            protocol_version=ctx.protocol_version,
        )

    return make_context


async def serve_stdio(
    dispatcher: Dispatcher, config: ServerConfig, *, api_key: str | None, backend: Backend | None
) -> None:
    server = build_server(dispatcher, stdio_context_factory(config, api_key=api_key, backend=backend))
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())
