"""MCP over stdio: stdout carries only JSON-RPC; logs go to stderr.

A client may write its last requests and close stdin at once (a script piping a file in, a
desktop client quitting after a final call). The SDK's serving loop ends at the end of input and
cancels what is still running, so those requests would get "Connection closed" instead of their
answers. `serve_stdio` therefore holds the end of input back from the loop until every request it
read has been answered (or cancelled by the client with `notifications/cancelled`, which the
protocol leaves unanswered), for at most `drain_seconds`: the tool-call deadline and a margin, so a
call that hangs cannot keep the process alive. The streams are wrapped, not patched: the loop sees
an input stream that ends a little later (docs/adr/0047-stdio-drains-and-mcp-names-its-host.md).
"""

from __future__ import annotations

import base64
import os
from collections.abc import Callable
from types import TracebackType
from typing import Any, Self

import anyio
from mcp.server.context import ServerRequestContext
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from mcp.types import JSONRPCError, JSONRPCNotification, JSONRPCRequest, JSONRPCResponse

from protocol.handlers.callers import client_name_from_handshake
from protocol.server import build_server, log_server_started
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


DRAIN_MARGIN_SECONDS = 5.0
"""How much longer than one tool call's deadline stdio waits for answers after input ends."""


class Unanswered:
    """The ids of the requests read and not yet answered, and a way to wait until there are none."""

    def __init__(self) -> None:
        self._ids: set[str | int] = set()
        self._none_left = anyio.Event()
        self._none_left.set()

    def read(self, item: SessionMessage | Exception) -> None:
        if not isinstance(item, SessionMessage):
            return
        message = item.message
        if isinstance(message, JSONRPCRequest):
            self._ids.add(message.id)
            self._none_left = anyio.Event()
        elif isinstance(message, JSONRPCNotification) and message.method == "notifications/cancelled":
            self._settle((message.params or {}).get("requestId"))  # the protocol leaves it unanswered

    def written(self, item: SessionMessage) -> None:
        if isinstance(item.message, JSONRPCResponse | JSONRPCError):
            self._settle(item.message.id)

    def _settle(self, request_id: object) -> None:
        if isinstance(request_id, str | int):
            self._ids.discard(request_id)
        if not self._ids:
            self._none_left.set()

    async def wait(self, seconds: float) -> None:
        with anyio.move_on_after(seconds):
            await self._none_left.wait()


class _Wrapped:
    """A stream of `stdio_server()`'s, closed with its wrapper (and as its context manager)."""

    def __init__(self, inner: Any, unanswered: Unanswered) -> None:
        self._inner = inner
        self._unanswered = unanswered

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()


class DrainingInput(_Wrapped):
    """The stdin message stream, whose end is passed on only once `unanswered` has none left
    (or `drain_seconds` have passed): a `ReadStream` for the SDK's serving loop."""

    def __init__(self, inner: Any, unanswered: Unanswered, drain_seconds: float) -> None:
        super().__init__(inner, unanswered)
        self._drain_seconds = drain_seconds

    @property
    def last_context(self) -> Any:
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> SessionMessage | Exception:
        try:
            item: SessionMessage | Exception = await self._inner.receive()
        except anyio.EndOfStream:
            await self._unanswered.wait(self._drain_seconds)
            raise
        self._unanswered.read(item)
        return item

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> SessionMessage | Exception:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None


class AnsweringOutput(_Wrapped):
    """The stdout message stream, telling `unanswered` which requests each message answers:
    a `WriteStream` for the SDK's serving loop."""

    async def send(self, item: SessionMessage, /) -> None:
        await self._inner.send(item)
        self._unanswered.written(item)


async def serve_stdio(
    dispatcher: Dispatcher, config: ServerConfig, *, api_key: str | None, backend: Backend | None
) -> None:
    server = build_server(dispatcher, stdio_context_factory(config, api_key=api_key, backend=backend))
    drain_seconds = config.client.total_timeout + DRAIN_MARGIN_SECONDS
    async with stdio_server() as (read_stream, write_stream):
        log_server_started("stdio")
        unanswered = Unanswered()
        await server.run(
            DrainingInput(read_stream, unanswered, drain_seconds),
            AnsweringOutput(write_stream, unanswered),
            server.create_initialization_options(),
        )
