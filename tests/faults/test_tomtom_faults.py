"""The TomTom client against a faulty stand-in: every fault ends in the right error code, and
every call ends within its deadline whatever the server does.

Deadlines are about a second so the suite stays fast; elapsed time is measured only to check
that the deadline held, with a generous margin (`deadline + 2 s`), never to assert speed.
"""

from __future__ import annotations

import asyncio
import time
import tracemalloc
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import pytest

from core.errors import ToolError
from tests.conftest import CANARY_KEY
from tests.support import faults
from tools.tomtom.backends import Backend
from tools.tomtom.client import ClientSettings, TomTomSession, parse_retry_after, read_bounded

PATH = "/search/2/geocode/x.json"
GOOD = b'{"summary": {"totalResults": 0}, "results": []}'
DEADLINE = 1.0
MARGIN = 2.0


def session(stub, **settings) -> TomTomSession:
    values = {"total_timeout": DEADLINE, "max_retries": 2, "backoff": 0.01, **settings}
    return TomTomSession(
        settings=ClientSettings(base_url=stub.base_url, **values),
        api_key=CANARY_KEY,
        backend=Backend.GENESIS,
        user_agent="TomTomMCPSDK/9.9.9 pytest",
    )


async def failure(tomtom: TomTomSession, path: str = PATH) -> tuple[ToolError, float]:
    """The error a GET ends with, and how long the call took (for the deadline check only)."""
    started = time.monotonic()
    with pytest.raises(ToolError) as raised:
        await tomtom.get(path)
    return raised.value, time.monotonic() - started


# --- the deadline ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "fault",
    [
        pytest.param(faults.hang_before_headers(), id="hang before headers"),
        pytest.param(faults.stall_mid_body(), id="stall mid-body"),
        pytest.param(faults.drip_feed(interval=0.1), id="drip-feed"),
    ],
)
async def test_slow_servers_end_at_the_deadline(stub, fault):
    stub.route("GET", PATH, respond=fault)
    error, elapsed = await failure(session(stub))
    assert error.code == "unavailable"
    assert "did not answer within 1 s (TOMTOM_TIMEOUT)" in error.message
    assert elapsed < DEADLINE + MARGIN


async def test_the_deadline_covers_retries_and_backoff(stub):
    stub.route("GET", PATH, respond=faults.drip_feed(interval=0.1))
    stub.route("GET", PATH, status=503, json_body={}, times=1)
    error, elapsed = await failure(session(stub, backoff=0.3))
    assert error.code == "unavailable"
    assert "TOMTOM_TIMEOUT" in error.message
    assert len(stub.requests) == 2
    assert elapsed < DEADLINE + MARGIN


async def test_the_deadline_covers_every_request_of_a_call(stub):
    """Two requests of one tool call (a route, then a search) share one deadline: each takes
    about 1 s, within a 1.5 s deadline alone but not together."""
    slow = faults.drip_feed(body=GOOD, interval=1.0 / len(GOOD))
    stub.route("GET", "/first", respond=slow)
    stub.route("GET", "/second", respond=slow)
    tomtom = session(stub, total_timeout=1.5)
    started = time.monotonic()
    with pytest.raises(ToolError) as raised:
        await tomtom.get("/first")
        await tomtom.get("/second")
    assert raised.value.code == "unavailable"
    assert "within 1.5 s (TOMTOM_TIMEOUT)" in raised.value.message
    assert time.monotonic() - started < 1.5 + MARGIN


async def test_an_answer_within_the_deadline_is_used(stub):
    stub.route("GET", PATH, respond=faults.drip_feed(body=GOOD, interval=0.001))
    assert (await session(stub).get(PATH))["results"] == []


# --- other faults ------------------------------------------------------------------------------


async def test_reset_is_unavailable(stub):
    stub.route("GET", PATH, respond=faults.reset())
    error, elapsed = await failure(session(stub))
    assert error.code == "unavailable"
    assert elapsed < DEADLINE + MARGIN


@pytest.mark.parametrize("status", [500, 502, 503, 504])
async def test_server_errors_are_unavailable(stub, status):
    stub.route("GET", PATH, status=status, json_body={})
    error, elapsed = await failure(session(stub))
    assert error.code == "unavailable"
    assert elapsed < DEADLINE + MARGIN


@pytest.mark.parametrize("body", [b"{not json", b"", b"[1, 2]", b"\xff\xfe", b'"just a string"'])
async def test_invalid_json_is_malformed(stub, body):
    stub.route("GET", PATH, body=body)
    error, _ = await failure(session(stub))
    assert error.code == "malformed"


# --- bounded bodies ----------------------------------------------------------------------------


@pytest.mark.parametrize("declare_length", [True, False], ids=["Content-Length", "chunked"])
async def test_oversized_bodies_are_malformed_and_not_read(stub, declare_length):
    stub.route("GET", PATH, respond=faults.oversized(3 * 1024 * 1024, declare_length=declare_length))
    error, elapsed = await failure(session(stub, max_body_bytes=1024 * 1024))
    assert error.code == "malformed"
    assert "larger than 1 MiB (TOMTOM_MAX_BODY_BYTES)" in error.message
    assert elapsed < DEADLINE + MARGIN


async def test_a_decompression_bomb_is_malformed(stub):
    stub.route("GET", PATH, respond=faults.decompression_bomb(8 * 1024 * 1024))
    error, _ = await failure(session(stub, max_decoded_bytes=1024 * 1024))
    assert error.code == "malformed"
    assert "inflates to more than 1 MiB (TOMTOM_MAX_DECODED_BYTES)" in error.message


async def test_a_decompression_bomb_never_inflates_in_memory(stub):
    """200 MiB of gzipped spaces, with the default limits: memory stays near the 64 MiB limit."""
    stub.route("GET", PATH, respond=faults.decompression_bomb(200 * 1024 * 1024))
    tomtom = session(stub, total_timeout=30)
    tracemalloc.start()
    try:
        error, _ = await failure(tomtom)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert error.code == "malformed"
    assert "TOMTOM_MAX_DECODED_BYTES" in error.message
    assert peak < 100 * 1024 * 1024


async def _arrived_at_once(body: bytes):
    """A body that is all there already: iterating it never waits for the network."""
    yield body


def _read_bomb(decoded: int):
    return read_bounded(
        _arrived_at_once(faults.gzip_bomb(decoded)),
        "gzip",
        max_bytes=16 * 1024 * 1024,
        max_decoded_bytes=64 * 1024 * 1024,
    )


async def test_inflating_a_bomb_lets_the_event_loop_run():
    """A 48 MiB bomb that arrived in one piece: other tasks run while it inflates (at least once
    per 2 MiB), instead of waiting for the whole of it."""
    turns = 0

    async def other_request() -> None:
        nonlocal turns
        while True:
            turns += 1
            await asyncio.sleep(0)

    ticker = asyncio.create_task(other_request())
    await asyncio.sleep(0)
    before = turns
    body = await _read_bomb(48 * 1024 * 1024)
    ticker.cancel()
    assert len(body) == 48 * 1024 * 1024
    assert turns - before >= 24


async def test_a_deadline_ends_a_bomb_while_it_inflates():
    """Cancelling the read (what `asyncio.timeout` does at the deadline) stops it mid-inflation."""
    reading = asyncio.create_task(_read_bomb(48 * 1024 * 1024))
    await asyncio.sleep(0)  # the read starts, and must hand the loop back long before its end
    reading.cancel()
    with pytest.raises(asyncio.CancelledError):
        await reading


async def test_gzip_answers_within_the_limits_are_read(stub):
    import gzip

    body = gzip.compress(GOOD)
    stub.route("GET", PATH, body=body, headers={"Content-Encoding": "gzip"})
    assert (await session(stub).get(PATH))["results"] == []


async def test_a_cut_off_gzip_answer_is_malformed(stub):
    import gzip

    body = gzip.compress(GOOD * 50)[:-20]
    stub.route("GET", PATH, body=body, headers={"Content-Encoding": "gzip"})
    error, _ = await failure(session(stub))
    assert error.code == "malformed"


# --- Retry-After -------------------------------------------------------------------------------

NOW = datetime(2026, 1, 1, 12, 0, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("raw", "seconds"),
    [
        ("30", 30.0),
        ("0", 0.0),
        (" 7 ", 7.0),
        ("Thu, 01 Jan 2026 12:00:45 GMT", 45.0),  # IMF-fixdate
        ("Thursday, 01-Jan-26 12:00:45 GMT", 45.0),  # obsolete RFC 850 form
        ("Thu Jan  1 12:00:45 2026", 45.0),  # asctime
        ("Thu, 01 Jan 2026 11:00:00 GMT", 0.0),  # in the past
        ("inf", None),
        ("1e400", None),
        ("-5", None),
        ("1.5", None),
        ("NaN", None),
        ("soon", None),
        ("", None),
        (
            "Fri, 31 Dec 9999 23:59:59 GMT",
            pytest.approx((datetime(9999, 12, 31, 23, 59, 59, tzinfo=UTC) - NOW).total_seconds()),
        ),
    ],
)
def test_retry_after_parsing(raw, seconds):
    assert parse_retry_after(raw, now=NOW.timestamp()) == seconds


def test_huge_delta_seconds_are_finite():
    assert parse_retry_after("9" * 5000) == 1e15


@pytest.mark.parametrize(
    "value",
    [
        "inf",
        "1e400",
        "-1",
        "garbage",
        "99999999999999999999999",
        format_datetime(datetime.now(UTC) + timedelta(days=4000), usegmt=True),
    ],
)
async def test_retry_after_in_the_error_never_exceeds_the_cap(stub, value):
    stub.route("GET", PATH, status=429, json_body={}, headers={"Retry-After": value})
    error, elapsed = await failure(session(stub, max_retry_after=60))
    assert error.code == "retry_later"
    assert 1 <= error.data["retry_after"] <= 60
    assert elapsed < DEADLINE + MARGIN


async def test_retry_after_is_capped_when_waiting(stub):
    """A short deadline, a far Retry-After: no wait, retry_later at the cap."""
    stub.route("GET", PATH, status=503, json_body={}, headers={"Retry-After": "100000"})
    error, _ = await failure(session(stub, max_retry_after=30))
    assert error.code == "retry_later"
    assert error.data["retry_after"] == 30
    assert len(stub.requests) == 1


async def test_a_short_retry_after_is_honoured(stub):
    stub.route("GET", PATH, body=GOOD)
    stub.route("GET", PATH, status=429, json_body={}, headers={"Retry-After": "0"}, times=1)
    assert (await session(stub).get(PATH))["results"] == []
    assert len(stub.requests) == 2
