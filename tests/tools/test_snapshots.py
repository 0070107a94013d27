"""A lazily refreshed value: at most `refresh_seconds` old when asked, one read at a time,
a failed read keeps the value, a slow read is answered from the current one."""

from __future__ import annotations

import asyncio
import threading

from governance.snapshots import LazySnapshot, Rederived


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def reader(*values: object) -> tuple[list[int], object]:
    """A read answering `values` in turn (None: keep the current value), and its call count."""
    calls = [0]

    def read() -> object:
        calls[0] += 1
        return values[min(calls[0], len(values)) - 1]

    return calls, read


async def test_the_value_is_reread_only_once_it_is_older_than_the_refresh_time():
    clock, (calls, read) = Clock(), reader("first", "second")
    snapshot = LazySnapshot("none", read=read, refresh_seconds=10, wait_seconds=1, thread_name="t", clock=clock)
    snapshot.prime()

    assert (await snapshot.fresh(), calls[0]) == ("first", 1)
    clock.now = 9.9
    assert (await snapshot.fresh(), calls[0]) == ("first", 1)
    clock.now = 10.0
    assert (await snapshot.fresh(), calls[0]) == ("second", 2)


async def test_a_failed_read_keeps_the_value():
    clock, (calls, read) = Clock(), reader("first", None)
    snapshot = LazySnapshot("none", read=read, refresh_seconds=1, wait_seconds=1, thread_name="t", clock=clock)
    snapshot.prime()
    clock.now = 5

    assert (await snapshot.fresh(), calls[0]) == ("first", 2)


async def test_a_rederived_value_replaces_the_value_but_is_not_a_read():
    clock, (calls, read) = Clock(), reader("first", Rederived("first, judged again"))
    snapshot = LazySnapshot("none", read=read, refresh_seconds=1, wait_seconds=1, thread_name="t", clock=clock)
    snapshot.prime()
    clock.now = 5

    assert (await snapshot.fresh(), calls[0], snapshot.read_at) == ("first, judged again", 2, 0)


async def test_without_a_refresh_time_the_value_is_the_one_given():
    calls, read = reader("read")
    snapshot = LazySnapshot("given", read=read, refresh_seconds=None, wait_seconds=1, thread_name="t")
    snapshot.prime()

    assert (await snapshot.fresh(), snapshot.start_if_due(), calls[0]) == ("given", None, 0)


async def test_a_slow_read_is_answered_from_the_current_value_and_runs_once():
    release, calls = threading.Event(), [0]

    def slow() -> str:
        calls[0] += 1
        release.wait(5)
        return "new"

    snapshot = LazySnapshot("old", read=slow, refresh_seconds=1, wait_seconds=0.05, thread_name="t", clock=Clock())
    answers = await asyncio.gather(snapshot.fresh(), snapshot.fresh(), snapshot.fresh())
    release.set()
    running = snapshot.start_if_due()
    assert running is not None
    await running

    assert (answers, calls[0], snapshot.value) == (["old", "old", "old"], 1, "new")


def test_a_synchronous_caller_starts_nothing():
    calls, read = reader("read")
    snapshot = LazySnapshot("given", read=read, refresh_seconds=1, wait_seconds=1, thread_name="t", clock=Clock())

    assert (snapshot.start_if_due(), calls[0]) == (None, 0)
