"""A governance clock tests set by hand (`GOVERNANCE_CLOCK = "tests.support.clock.now"`).

In this process: `clock.set_now(moment)` (the `governance_clock` fixture does it and puts it
back). In server processes, which cannot share this module's state: the environment variable
`CLOCK_FILE` names a file holding an ISO time, which a test rewrites to move every process's
clock forward without sleeping.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path

CLOCK_FILE = "TEST_GOVERNANCE_CLOCK_FILE"
PATH = "tests.support.clock.now"
"""The value of GOVERNANCE_CLOCK that selects this clock."""

_now: datetime | None = None


def now() -> datetime:
    path = os.environ.get(CLOCK_FILE)
    if path:
        return datetime.fromisoformat(Path(path).read_text(encoding="utf-8").strip())
    return _now or datetime.now(UTC)


def set_now(moment: datetime | None) -> None:
    """Stop this process's clock at `moment` (None: the system's again)."""
    global _now
    _now = moment


def write(path: Path, moment: datetime) -> None:
    """Set the clock of every process reading `path` (atomically: a reader never sees half a time)."""
    partial = path.with_suffix(".partial")
    partial.write_text(moment.isoformat(), encoding="utf-8")
    partial.replace(path)
