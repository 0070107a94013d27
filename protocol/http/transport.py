"""The SDK's Streamable HTTP session manager, kept running for the `/mcp` endpoint.

What the single-request exchange (protocol/exchange.py) leaves to the SDK goes through its
stateless transport, which needs its manager running on the request's event loop; the exchange
needs the server's lifespan state the manager enters.
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from mcp.server.streamable_http_manager import StreamableHTTPSessionManager


class TransportRunner:
    """The SDK's session manager, running on the current event loop.

    The stateless transport spawns each request's server task into the manager's task group,
    which must be running. One manager runs per event loop: under uvicorn that is one per worker
    process, started by the ASGI lifespan (`start`) or by the first request; under `runserver`
    or Django's test client each request or test has a loop of its own, and its manager ends with
    it. A stateless manager holds no request state, so this is no state carried between requests.
    """

    def __init__(self, factory: Callable[[], StreamableHTTPSessionManager]) -> None:
        self._factory = factory
        self._running: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Running] = weakref.WeakKeyDictionary()

    async def manager(self) -> StreamableHTTPSessionManager:
        """This loop's running manager, started now if it is not yet."""
        return (await self.running()).manager

    async def running(self) -> _Running:
        loop = asyncio.get_running_loop()
        running = self._running.get(loop)
        if running is None or running.task.done():
            running = self._running[loop] = _Running.start(self._factory())
        if not running.started.is_set():
            await running.started.wait()
        return running

    async def start(self) -> None:
        await self.manager()

    async def stop(self) -> None:
        """Stop this loop's manager (ASGI lifespan shutdown); in-flight calls are cancelled."""
        running = self._running.pop(asyncio.get_running_loop(), None)
        if running is not None:
            running.stop.set()
            await running.task


@dataclass(slots=True)
class _Running:
    manager: StreamableHTTPSessionManager
    task: asyncio.Task[None]
    started: asyncio.Event
    stop: asyncio.Event
    lifespan_state: Any = None
    """The server's lifespan state for requests answered without the manager (protocol.exchange)."""

    @classmethod
    def start(cls, manager: StreamableHTTPSessionManager) -> _Running:
        started, stop = asyncio.Event(), asyncio.Event()
        holder: list[_Running] = []

        async def run() -> None:
            # The manager enters the server's lifespan for its own requests; the exchange's
            # requests get theirs here, for as long as the manager runs.
            async with manager.run(), manager.app.lifespan(manager.app) as state:
                holder[0].lifespan_state = state
                started.set()
                await stop.wait()

        running = cls(manager, asyncio.get_running_loop().create_task(run(), name="mcp-session-manager"), started, stop)
        holder.append(running)
        return running
