"""The two TomTom backends a deployment can talk to.

Orbis (`tomtom-orbis-maps`, the default) and TomTom Maps (`tomtom-maps`, the Genesis APIs that
accounts without Orbis access need). Tools build the backend's path; the answer shapes they
return are the same on both. A caller picks one per request with the `BACKEND_HEADER` header
(or its tenant's default, or the deployment's `TOMTOM_MAPS_BACKEND`).
"""

from __future__ import annotations

from enum import StrEnum
from types import MappingProxyType

BACKEND_HEADER = "tomtom-maps-backend"
"""The HTTP request header that picks the backend of one request."""
BACKEND_SETTING = "TOMTOM_MAPS_BACKEND"
"""The setting that picks the deployment's default backend (stdio and exec use it)."""


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

    def others(self) -> list[Backend]:
        return [backend for backend in Backend if backend is not self]


CREDITS = MappingProxyType(
    {
        Backend.ORBIS: "© TomTom, © OpenStreetMap",
        Backend.GENESIS: "© TomTom",
    }
)
"""How each backend's data is credited: TomTom, and on Orbis, whose map is built with
OpenStreetMap data, OpenStreetMap too (as TomTom's own maps credit them). Results that show
TomTom data carry it (tools.attribution), and the widget's map shows it under its tiles
(docs/adr/0036-prompts-resources-attribution.md)."""


def switch_to(backends: list[Backend]) -> str:
    """How a caller reaches one of `backends`, for an `unsupported` answer that names it: over
    HTTP with the header, on stdio and exec with the setting."""
    return " or ".join(
        f"the {b.value} backend (header `{BACKEND_HEADER}: {b.value}`; {BACKEND_SETTING} on stdio and exec)"
        for b in backends
    )
