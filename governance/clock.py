"""What day it is, for retire-on dates: the governance clock.

A retire-on date is a UTC day: from 00:00 UTC that day the name is retired. Every replica asks
this clock when it reads the tables (governance.runtime), and the services ask it before
they accept a date. `GOVERNANCE_CLOCK` may name another function returning an aware
`datetime` (an import path): a staging deployment can rehearse a scheduled retirement, and the
tests move time forward in running server processes without sleeping.

Two promises keep a rehearsal, or a broken clock, from reaching anyone else:

- A clock that fails (does not import, is not callable, raises, returns anything but an aware
  `datetime`) never fails a call: the system clock answers instead, and
  `Governance clock failed: judging dates by the system clock` is logged once, when it starts
  failing. System check tools.E019 reports it at start; `/readyz` names it as a warning.
- What is *written* (a retirement a retire-on date records) goes by the system clock only
  (`system_today`): a retirement that only the rehearsal clock says is due is applied in the
  memory of the processes that run that clock, never in the shared tables.
"""

from __future__ import annotations

import threading
from datetime import UTC, date, datetime

from django.conf import settings
from django.utils import timezone
from django.utils.module_loading import import_string

from core.events import ERROR_TEXT_LENGTH, clip, log
from core.operations import GovernanceClockFailed

_SHOWN = 80
"""How much of a clock's path or odd answer a message repeats."""

_lock = threading.Lock()
_failure: str | None = None
"""Why the configured clock last failed (None: it answered, or none is configured)."""


class ClockError(Exception):
    """The configured clock could not say what time it is; the message says why."""


def configured() -> str:
    """The import path of the configured clock; empty for the system's."""
    return str(getattr(settings, "GOVERNANCE_CLOCK", "") or "")


def system_now() -> datetime:
    """The system's time (the one clock that decides what is written)."""
    return timezone.now()


def system_today() -> date:
    """Today's UTC day by the system clock, whatever GOVERNANCE_CLOCK says."""
    return system_now().astimezone(UTC).date()


def read(path: str) -> datetime:
    """What the clock at `path` says, or `ClockError` saying what is wrong with it."""
    shown = clip(path, _SHOWN)
    try:
        function = import_string(path)
    except ImportError as exc:
        raise ClockError(f"GOVERNANCE_CLOCK {shown!r} cannot be imported: {clip(str(exc), _SHOWN)}") from None
    if not callable(function):
        raise ClockError(f"GOVERNANCE_CLOCK {shown!r} is a {type(function).__name__}, not a function")
    try:
        moment = function()
    except Exception as exc:  # any failure of the clock is its message, never a traceback
        raise ClockError(f"GOVERNANCE_CLOCK {shown!r} raised {type(exc).__name__}: {clip(str(exc), _SHOWN)}") from None
    if not isinstance(moment, datetime):
        answer = clip(repr(moment), _SHOWN)
        raise ClockError(f"GOVERNANCE_CLOCK {shown!r} returned {type(moment).__name__} {answer}, not a datetime")
    if moment.utcoffset() is None:
        raise ClockError(
            f"GOVERNANCE_CLOCK {shown!r} returned a naive datetime ({moment.isoformat()}): give it a tzinfo"
        )
    return moment


def problem() -> str | None:
    """What is wrong with the configured clock right now (None: nothing, or none is set)."""
    path = configured()
    if not path:
        return None
    try:
        read(path)
    except ClockError as exc:
        return str(exc)
    return None


def failure() -> str | None:
    """Why the configured clock failed the last time it was asked (None: it answered)."""
    return _failure


def now() -> datetime:
    """The time by the governance clock; the system's while the configured clock fails."""
    path = configured()
    if not path:
        return system_now()
    try:
        moment = read(path)
    except ClockError as exc:
        _failed(str(exc))
        return system_now()
    _answered()
    return moment


def today() -> date:
    """Today's UTC day by the governance clock."""
    return now().astimezone(UTC).date()


def _failed(why: str) -> None:
    global _failure
    with _lock:
        first, _failure = _failure is None, why
    if first:
        log(GovernanceClockFailed(error=clip(why, ERROR_TEXT_LENGTH)))


def _answered() -> None:
    global _failure
    if _failure is not None:
        with _lock:
            _failure = None
