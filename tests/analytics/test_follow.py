"""A log still being written: its lines, then each line appended, across rotations, until stopped."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from django.db import OperationalError

from analytics.ingest.pipeline import ingest
from analytics.ingest.sources import IDLE, follow
from analytics.models import AppStatusEvent
from core.app_status import Drawn
from tests.analytics.conftest import line
from tests.conftest import REPO

pytestmark = pytest.mark.django_db(transaction=True)


def drawn(second: int) -> str:
    return line(Drawn, f"2026-11-02T10:00:{second:02d}", source="inline")


def append(path: Path, *texts: str, end: str = "\n") -> None:
    with path.open("a") as log:
        log.write("\n".join(texts) + end)


class Collected(threading.Thread):
    """Reads `follow(path)` on a thread of its own, until stopped."""

    def __init__(self, path: Path) -> None:
        super().__init__(daemon=True)
        self.path, self.stop, self.items = path, threading.Event(), []

    def run(self) -> None:
        self.items.extend(follow(str(self.path), poll=0.01, stop=self.stop))

    def lines(self) -> list[str]:
        return [item.decode() for item in list(self.items) if item is not IDLE]

    def until(self, count: int) -> list[str]:
        deadline = time.monotonic() + 10
        while len(self.lines()) < count and time.monotonic() < deadline:
            time.sleep(0.01)
        return self.lines()


def test_a_followed_log_gives_each_line_once_its_newline_is_written_across_rotations(tmp_path):
    path = tmp_path / "server.log"
    append(path, "a", "b")
    reader = Collected(path)
    reader.start()

    assert reader.until(2) == ["a", "b"]
    append(path, "c", end="")  # no newline yet: not a line yet
    time.sleep(0.1)
    assert reader.lines() == ["a", "b"]
    append(path, "", "d")  # the newline ends `c`
    assert reader.until(4) == ["a", "b", "c", "d"]
    append(path, "e-unended", end="")  # the log is rotated with an unfinished last line
    os.rename(path, tmp_path / "server.log.1")
    append(path, "f")  # the new file, from its start
    assert reader.until(6) == ["a", "b", "c", "d", "e-unended", "f"]
    path.write_text("")  # truncated in place (copytruncate), then written again
    time.sleep(0.2)
    append(path, "g")
    assert reader.until(7)[-1] == "g"
    reader.stop.set()
    reader.join(5)
    assert not reader.is_alive() and IDLE in reader.items


def test_a_followed_log_is_stored_as_it_grows_in_a_batch_each_time_it_catches_up(tmp_path):
    path, stop = tmp_path / "server.log", threading.Event()
    append(path, drawn(1), drawn(2))
    reports = []
    thread = threading.Thread(
        target=lambda: reports.append(ingest(follow(str(path), poll=0.01, stop=stop), batch_size=1_000)),
        daemon=True,
    )
    thread.start()

    def count_now() -> int:
        """The stored events, once the follower's write lets the table be read: the test database
        is SQLite in memory with a shared cache, where a table being written is locked to a reader
        at once (no busy timeout applies), as a file database's readers are not."""
        while True:
            try:
                return AppStatusEvent.objects.count()
            except OperationalError as error:
                if "locked" not in str(error):
                    raise
                time.sleep(0.02)

    def stored(count: int) -> int:
        deadline = time.monotonic() + 10
        while count_now() < count and time.monotonic() < deadline:
            time.sleep(0.02)
        return count_now()

    assert stored(2) == 2  # written before 1,000 events: the log caught up
    append(path, drawn(3), drawn(1))  # one new, one already stored
    assert stored(3) == 3
    stop.set()
    thread.join(10)

    (report,) = reports
    assert (report.lines, report.events, report.new, report.duplicates) == (4, 4, 3, 1)
    assert report.batches >= 2


def stored_in(database: Path) -> int:
    with sqlite3.connect(database) as connection:
        return connection.execute(f"SELECT count(*) FROM {AppStatusEvent._meta.db_table}").fetchone()[0]


def test_the_command_follows_a_log_until_it_is_stopped(tmp_path):
    """As an operator runs it beside the server: `--follow`, then SIGTERM (the summary as for a file)."""
    path, database = tmp_path / "server.log", tmp_path / "db.sqlite3"
    env = {**os.environ, "DATABASE_URL": f"sqlite:///{database}", "DOTENV_PATH": "/nonexistent"}
    subprocess.run([sys.executable, "manage.py", "migrate", "--no-input", "-v0"], cwd=REPO, env=env, check=True)
    append(path, drawn(1), "{oops")
    command = [sys.executable, "manage.py", "ingest_app_status", "--follow", "--poll", "0.05", str(path)]
    follower = subprocess.Popen(command, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert follower.stderr is not None
        started = follower.stderr.readline()  # the command says when it follows (and handles SIGTERM)
        append(path, drawn(2))
        deadline = time.monotonic() + 30
        while stored_in(database) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        follower.send_signal(signal.SIGTERM)
        out, err = follower.communicate(timeout=30)

    assert started == f"{path}: following the log; SIGINT or SIGTERM stops it\n"
    assert follower.returncode == 0, err
    assert out == (
        f"{path}: 3 lines: 2 app-status events (2 new, 0 already stored, 0 of unknown kind), 0 tool calls "
        "(0 new, 0 already stored, 0 with unknown fields), 0 other lines skipped, 1 malformed\n"
    )
    assert f"{path}:2: not JSON (a partial line?)" in err


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["--follow", "a.log", "b.log"], "--follow takes exactly one log file (not '-')"),
        (["--follow", "-"], "--follow takes exactly one log file (not '-')"),
        (
            ["--follow", "--poll", "0", "a.log"],
            "Error: argument --poll: must be a number of seconds from 0.01 to 3,600, not '0'",
        ),
    ],
)
def test_the_command_refuses_a_follow_it_cannot_do(arguments, message):
    from django.core.management import call_command
    from django.core.management.base import CommandError

    with pytest.raises(CommandError) as refused:
        call_command("ingest_app_status", *arguments)

    assert str(refused.value) == message
