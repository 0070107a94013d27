"""What day it is, for retire-on dates: the governance clock.

A retire-on date is a UTC day: from 00:00 UTC that day the name is retired. Every replica asks
this clock when it reads the tables (governance.runtime), and the services ask it before
they accept a date. `GOVERNANCE_CLOCK` may name another function returning an aware
`datetime` (an import path): a staging deployment can rehearse a scheduled retirement, and the
tests move time forward in running server processes without sleeping.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, date, datetime

from django.conf import settings
from django.utils import timezone
from django.utils.module_loading import import_string


def clock() -> Callable[[], datetime]:
    """The function that says what time it is (`GOVERNANCE_CLOCK`, or the system's)."""
    path = getattr(settings, "GOVERNANCE_CLOCK", "")
    return import_string(path) if path else timezone.now


def today() -> date:
    """Today's UTC day by the governance clock."""
    return clock()().astimezone(UTC).date()
