"""A value read from the database and refreshed lazily: the governance tables' snapshot
(governance/runtime.py) and the client-surface rules (governance/client_surface.py).

Semantics, for both:

- `prime()` reads the value now, before serving, on a worker thread of its own (so it is safe
  inside or outside an event loop and never touches the caller's database connection).
- A request that finds the value older than `refresh_seconds` starts one read, on a worker
  thread (`asyncio.to_thread`); `fresh()` waits for it at most `wait_seconds`, and a slower read
  is answered from the current value. One read runs at a time per event loop; a request that
  comes while it runs waits for the same read.
- `read` returns the new value; None to keep the current one (it logs why itself); or
  `Rederived(value)`: a value derived again from the last one read, without reading (the
  governance view judged on a new day while the tables cannot be read), which replaces the
  current value but leaves `read_at`, the time of the last read, as it was.
- `refresh_seconds` None: the value given, for ever (tests, in-process servers).

So every process answers from a value at most `refresh_seconds` (plus one read) old: the bound
the admin states for a retirement or a client rule to be in force everywhere.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Rederived[T]:
    """A value `read` derived from the current one without reading: not a fresh read."""

    value: T


class LazySnapshot[T]:
    def __init__(
        self,
        value: T,
        *,
        read: Callable[[], T | Rederived[T] | None],
        refresh_seconds: float | None,
        wait_seconds: float,
        thread_name: str,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._value = value
        self._read = read
        self.refresh_seconds = refresh_seconds
        self._wait_seconds = wait_seconds
        self._thread_name = thread_name
        self._clock = clock
        self._due_at = 0.0
        self._refresh: asyncio.Task[None] | None = None
        self.read_at: float | None = None
        """When (`clock()`) a read last gave a value; None before the first."""

    @property
    def value(self) -> T:
        """The current value, however old (use `fresh()` to honour the bound)."""
        return self._value

    def prime(self) -> None:
        """Read the value now, on a worker thread of its own."""
        if self.refresh_seconds is None:
            return
        self._due_at = self._clock() + self.refresh_seconds
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix=self._thread_name) as pool:
            self._apply(pool.submit(self._read).result())

    async def fresh(self) -> T:
        """The value, refreshed first when it is due (waiting at most `wait_seconds`)."""
        refresh = self.start_if_due()
        if refresh is not None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(refresh), self._wait_seconds)
        return self._value

    def start_if_due(self) -> asyncio.Task[None] | None:
        """Start a read when the value is stale and none runs on this loop; return the running
        read, if any. Without a running loop (a synchronous caller) nothing starts: the next
        request in a loop refreshes."""
        if self.refresh_seconds is None:
            return None
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return None
        if self._refresh is not None and not self._refresh.done() and self._refresh.get_loop() is loop:
            return self._refresh
        if self._clock() < self._due_at:
            return None
        self._due_at = self._clock() + self.refresh_seconds
        self._refresh = loop.create_task(self._run_refresh())
        return self._refresh

    async def _run_refresh(self) -> None:
        self._apply(await asyncio.to_thread(self._read))

    def _apply(self, value: T | Rederived[T] | None) -> None:
        if isinstance(value, Rederived):
            self._value = value.value
        elif value is not None:
            self._value = value
            self.read_at = self._clock()
