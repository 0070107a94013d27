"""Dynamic client registration is rate-limited per client address, counted in the database so
every replica counts together (authserver.ratelimit), and the addresses are not stored in clear."""

from __future__ import annotations

import threading

import pytest
from django.db import connection

from authserver import ratelimit
from authserver.models import RateBucket

pytestmark = pytest.mark.django_db

HOUR = 3600
T0 = 1_800_000_000.0  # the start of a window: 1_800_000_000 is a multiple of 3600


def test_the_limit_admits_exactly_that_many_per_window_and_then_refuses():
    answers = [ratelimit.allow("register", "203.0.113.7", 3, HOUR, now=T0 + i) for i in range(5)]
    assert answers == [True, True, True, False, False]


def test_a_new_window_starts_afresh():
    for i in range(4):
        ratelimit.allow("register", "203.0.113.7", 3, HOUR, now=T0 + i)
    assert not ratelimit.allow("register", "203.0.113.7", 3, HOUR, now=T0 + HOUR - 1)
    assert ratelimit.allow("register", "203.0.113.7", 3, HOUR, now=T0 + HOUR)
    assert [ratelimit.allow("register", "203.0.113.7", 3, HOUR, now=T0 + HOUR + 1) for _ in range(3)] == [
        True,
        True,
        False,
    ]


def test_addresses_and_buckets_are_counted_apart():
    assert ratelimit.allow("register", "203.0.113.7", 1, HOUR, now=T0)
    assert not ratelimit.allow("register", "203.0.113.7", 1, HOUR, now=T0)
    assert ratelimit.allow("register", "2001:db8::7", 1, HOUR, now=T0)
    assert ratelimit.allow("other", "203.0.113.7", 1, HOUR, now=T0)


def test_a_limit_of_zero_refuses_everyone():
    assert not ratelimit.allow("register", "203.0.113.7", 0, HOUR, now=T0)


def test_the_address_is_stored_only_as_a_hash_and_the_count_stops_above_the_limit():
    for _ in range(50):
        ratelimit.allow("register", "203.0.113.7", 2, HOUR, now=T0)
    (row,) = RateBucket.objects.all()
    assert "203.0.113.7" not in row.key
    assert row.key.startswith("register:") and len(row.key) == len("register:") + 32
    assert (row.window, row.count) == (int(T0 // HOUR), 3)


def test_old_windows_are_purged_so_the_table_keeps_only_recent_callers(monkeypatch):
    monkeypatch.setattr(ratelimit, "_purged", {})
    for hour, address in enumerate(["203.0.113.1", "203.0.113.2", "203.0.113.3"]):
        ratelimit.allow("register", address, 5, HOUR, now=T0 + hour * HOUR)
    ratelimit.allow("other", "203.0.113.9", 5, HOUR, now=T0)

    ratelimit.allow("register", "203.0.113.4", 5, HOUR, now=T0 + 3 * HOUR)

    kept = sorted((row.key.split(":")[0], row.window - int(T0 // HOUR)) for row in RateBucket.objects.all())
    assert kept == [("other", 0), ("register", 2), ("register", 3)], (
        "this window and the one before; other buckets kept"
    )


def test_bucket_names_that_would_not_fit_the_key_are_refused():
    with pytest.raises(ValueError):
        ratelimit.allow("x" * 68, "203.0.113.7", 1, HOUR)
    with pytest.raises(ValueError):
        ratelimit.allow("a:b", "203.0.113.7", 1, HOUR)


@pytest.mark.postgresql
@pytest.mark.django_db(transaction=True)
def test_concurrent_attempts_on_postgresql_admit_exactly_the_limit():
    """Twenty connections race for a limit of 7: the single UPSERT admits exactly 7."""
    if connection.vendor != "postgresql":
        pytest.skip("concurrent connections need PostgreSQL (DATABASE_URL=postgres://...)")
    from django.db import connections

    admitted: list[bool] = []
    start = threading.Barrier(20)

    def attempt() -> None:
        try:
            start.wait()
            admitted.append(ratelimit.allow("register", "198.51.100.1", 7, HOUR, now=T0))
        finally:
            connections.close_all()

    threads = [threading.Thread(target=attempt) for _ in range(20)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(admitted) == [False] * 13 + [True] * 7
    assert RateBucket.objects.get().count == 8
