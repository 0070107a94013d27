"""The two TomTom backends a deployment can talk to.

Orbis (`tomtom-orbis-maps`, the default) and TomTom Maps (`tomtom-maps`, the Genesis APIs that
accounts without Orbis access need). Tools build the backend's path; the answer shapes they
return are the same on both.
"""

from __future__ import annotations

from enum import StrEnum


class Backend(StrEnum):
    ORBIS = "tomtom-orbis-maps"
    GENESIS = "tomtom-maps"

    @classmethod
    def parse(cls, value: str, *, source: str) -> Backend:
        try:
            return cls(value.strip().lower())
        except ValueError:
            allowed = ", ".join(b.value for b in cls)
            raise ValueError(f"{source}: {value!r} is not a TomTom backend; use one of {allowed}") from None
