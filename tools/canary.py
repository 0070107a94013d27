"""The upstream contract canary: one small real request per tool, read by the tool's own decoders.

Our tests know TomTom only from answers made by hand or recorded once, so nothing else notices
when TomTom changes a shape, retires a version or starts requiring a header. The canary calls
every tool that reaches TomTom once per backend it is listed on, through the dispatcher and the
tool's `run` (so through the same request building, status mapping and typed decoders a caller
gets), with the input `PROBES` declares for it and `response_detail` at its default, `compact`,
and sorts each answer:

- `ok`: the tool answered.
- `drift`: TomTom answered and the tool could not use it: `malformed` (a shape we cannot read),
  a request TomTom refused (`invalid_arguments` with TomTom's status: a path, version or
  parameter it no longer takes), `unauthorized` for some APIs while others took the same key (a
  required header, or the key lost access to that API), or anything else that ended the call.
- `key`: TomTom refused the key for every tool it answered on the backend (a key problem, not
  a contract change), or no key was given.
- `unreachable`: TomTom could not be reached, failed or rate-limited the canary (`unavailable`,
  `retry_later`): nothing was learned.
- `skipped`: the probe needs what another probe finds (a place id) and that one found none.

The calls go through a dispatcher with no interceptors: they are not users' calls, so they write
no `Tool call` line, and governance does not hide a tool from its own health check. Every check
reports the requests it made as the client recorded them (`UpstreamStats.sent`: method, path and
API version, never the key or the query) and the time they took. Plain Python (no Django): the
command that runs it, stores the result and exports it is protocol/management/commands/tomtom_canary.py.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from core.errors import ErrorCode
from core.events import clip
from tools.context import CallContext, ServerConfig
from tools.dispatch import Dispatcher
from tools.registry import default_registry
from tools.tomtom.backends import Backend
from tools.tomtom.client import SentRequest
from tools.tomtom.credentials import KeySources

CLIENT_NAME = "tomtom-canary"
"""The client name the canary's calls carry (the second token of their `TomTom-User-Agent`)."""
DETAIL_LENGTH = 500
"""Longest drift detail kept, in characters (a TomTom message is at most 500 already)."""

AMSTERDAM, UTRECHT = [4.9041, 52.3676], [5.1215, 52.0907]
ROTTERDAM, HAARLEM = [4.4777, 51.9244], [4.6462, 52.3874]
A10_WEST = [4.8799, 52.3386]
"""A point on Amsterdam's ring road, where flow data always exists."""


@dataclass(frozen=True, slots=True)
class Probe:
    """The input one tool is called with: small (one result, one leg, one cell), in the
    Netherlands (covered on both backends), at the default `response_detail`."""

    arguments: Mapping[str, Any]
    id_from: str | None = None
    """A tool whose answer's first result `id` is added as `id` (a place id that exists today,
    rather than one written here that TomTom may have retired)."""


@dataclass(frozen=True, slots=True)
class NoRequest:
    """A tool that never calls TomTom, so has nothing for the canary to check; why."""

    reason: str


PROBES: Mapping[str, Probe | NoRequest] = {
    "tomtom-geocode": Probe({"query": "Dam 1, Amsterdam", "limit": 1}),
    "tomtom-reverse-geocode": Probe({"position": AMSTERDAM}),
    "tomtom-fuzzy-search": Probe({"query": "coffee", "position": AMSTERDAM, "limit": 1}),
    "tomtom-poi-search": Probe({"query": "pharmacy", "position": AMSTERDAM, "limit": 1}),
    "tomtom-place-details": Probe({}, id_from="tomtom-poi-search"),
    "tomtom-poi-categories": Probe({"filters": ["pharmacy"]}),
    "tomtom-ev-search": Probe({"position": AMSTERDAM, "radius": 2000, "limit": 1}),
    "tomtom-area-search": Probe({"query": "pharmacy", "center": AMSTERDAM, "radius": 1000, "limit": 1}),
    "tomtom-search-along-route": Probe({"origin": AMSTERDAM, "destination": UTRECHT, "query": "petrol", "limit": 1}),
    "tomtom-routing": Probe({"locations": [AMSTERDAM, UTRECHT]}),
    "tomtom-matrix-routing": Probe({"origins": [AMSTERDAM], "destinations": [UTRECHT]}),
    "tomtom-optimize-waypoints": Probe({"stops": [AMSTERDAM, UTRECHT, ROTTERDAM, HAARLEM]}),
    "tomtom-ev-routing": Probe({"locations": [AMSTERDAM, UTRECHT], "maxChargeInkWh": 75, "currentChargeInkWh": 60}),
    "tomtom-reachable-range": Probe({"origin": AMSTERDAM, "timeBudgetInSec": 600}),
    "tomtom-traffic": Probe({"bbox": [4.86, 52.35, 4.93, 52.39]}),
    "tomtom-traffic-flow": Probe({"position": A10_WEST}),
    "tomtom-map-image": Probe({"center": AMSTERDAM, "zoom": 12, "width": 64, "height": 64}),
    "tomtom-dynamic-map": Probe({"routePlans": [{"locations": [AMSTERDAM, UTRECHT]}]}),
    "tomtom-data-viz": NoRequest("draws the caller's own GeoJSON"),
    "tomtom-get-app-data": NoRequest("runs tomtom-data-viz again"),
    "tomtom-get-map-key": NoRequest("answers with the call's own key"),
    "tomtom-report-app-status": NoRequest("logs a widget's report"),
}
"""One row per tool of the registry (tests/analytics/test_canary.py fails for a tool without
one): the input it is checked with, or why it is not checked."""


class Status(StrEnum):
    OK = "ok"
    DRIFT = "drift"
    KEY = "key"
    UNREACHABLE = "unreachable"
    SKIPPED = "skipped"


EXIT_OK, EXIT_DRIFT, EXIT_UNREACHABLE = 0, 1, 2
"""The command's exit codes: every check ok; drift found (whatever else happened); else a check
could not reach TomTom, or the key was missing or refused."""


@dataclass(frozen=True, slots=True)
class Check:
    """One tool on one backend, as the canary found it."""

    tool: str
    backend: str
    status: Status
    detail: str = ""
    """What drifted, or why nothing was learned: the error's message (never the key)."""
    requests: tuple[str, ...] = ()
    """Each request sent, `METHOD /path`."""
    version: str = ""
    """The API version(s) the requests named: Orbis's `apiVersion`, else the number in the path."""
    latency_ms: float | None = None
    """Time spent in TomTom requests, retries included; None when none was sent."""
    answer: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @property
    def drifted(self) -> bool | None:
        """The verdict on the contract: True (drift), False (ok), None (nothing learned)."""
        return {Status.OK: False, Status.DRIFT: True}.get(self.status)

    def as_dict(self) -> dict[str, Any]:
        return {
            "tool": self.tool,
            "backend": self.backend,
            "status": self.status.value,
            "detail": self.detail,
            "requests": list(self.requests),
            "version": self.version,
            "latency_ms": self.latency_ms,
        }


def exit_code(checks: Sequence[Check]) -> int:
    statuses = {check.status for check in checks}
    if Status.DRIFT in statuses:
        return EXIT_DRIFT
    if statuses & {Status.KEY, Status.UNREACHABLE}:
        return EXIT_UNREACHABLE
    return EXIT_OK


async def run(
    config: ServerConfig, key: str, backends: Sequence[Backend], dispatcher: Dispatcher | None = None
) -> list[Check]:
    """Every probe on every backend in `backends`, one call after another (gentle on the
    account's rate limit), with `key`; the checks in listing order, backend by backend."""
    dispatcher = dispatcher or Dispatcher(default_registry())
    checks: list[Check] = []
    for backend in backends:
        checks += settle(await _run_backend(dispatcher, config, key, backend))
    return checks


async def _run_backend(dispatcher: Dispatcher, config: ServerConfig, key: str, backend: Backend) -> list[Check]:
    found: dict[str, Check] = {}
    for tool in dispatcher.registry:
        probe = PROBES.get(tool.name)
        if not isinstance(probe, Probe) or not tool.offered_to(backend, True):
            continue
        arguments = dict(probe.arguments)
        if probe.id_from is not None:
            place = _first_id(found.get(probe.id_from))
            if place is None:
                found[tool.name] = Check(
                    tool.name, backend.value, Status.SKIPPED, f"{probe.id_from} found no place id to look up."
                )
                continue
            arguments["id"] = place
        context = CallContext(
            config=config,
            transport="exec",
            keys=KeySources(cli=key),
            backend=backend,
            client_name=CLIENT_NAME,
        )
        outcome = await dispatcher.call(tool.name, arguments, context)
        status, detail = classify(outcome.data if outcome.is_error else None)
        for secret in context.secrets():
            detail = detail.replace(secret, "***")
        sent = context.stats.sent
        found[tool.name] = Check(
            tool=tool.name,
            backend=backend.value,
            status=status,
            detail=clip(detail, DETAIL_LENGTH),
            requests=tuple(f"{request.method} {request.path}" for request in sent),
            version=versions(sent),
            latency_ms=round(context.stats.seconds * 1000, 1) if sent else None,
            answer={} if outcome.is_error else outcome.data,
        )
    return list(found.values())


def _first_id(check: Check | None) -> str | None:
    """The `id` of the first result a search answered with (compact answers list `results`)."""
    if check is None or check.status is not Status.OK:
        return None
    results = check.answer.get("results")
    first = results[0] if isinstance(results, list) and results else None
    place = first.get("id") if isinstance(first, Mapping) else None
    return str(place) if place else None


def classify(error_data: Mapping[str, Any] | None) -> tuple[Status, str]:
    """A call's outcome (its error answer, None for a success) as a status and what it says."""
    if error_data is None:
        return Status.OK, ""
    error = error_data.get("error") or {}
    code, message, status = error.get("code"), str(error.get("message", "")), error.get("status")
    match code:
        case ErrorCode.MALFORMED:
            return Status.DRIFT, f"shape: {message}"
        case ErrorCode.UNAVAILABLE | ErrorCode.RETRY_LATER:
            return Status.UNREACHABLE, message
        case ErrorCode.UNAUTHORIZED:
            return Status.KEY, f"key: TomTom refused it (HTTP {status})." if status else f"key: {message}"
        case ErrorCode.INVALID_ARGUMENTS if status:
            return (
                Status.DRIFT,
                f"request refused (HTTP {status}): a path, version or parameter TomTom no longer takes. {message}",
            )
        case ErrorCode.INVALID_ARGUMENTS:
            return Status.DRIFT, f"probe: the canary's input no longer fits the tool (tools/canary.py). {message}"
        case _:
            return Status.DRIFT, f"{code}: {message}"


def settle(checks: list[Check]) -> list[Check]:
    """One backend's checks, a refused key told apart from drift: when TomTom took the key for
    some tools, its refusal for others is a contract change (a required header, access to an
    API), not a key problem."""
    took_key = any(check.status in (Status.OK, Status.DRIFT) for check in checks)
    if not took_key:
        return checks
    return [
        Check(
            check.tool,
            check.backend,
            Status.DRIFT,
            "key refused for this API only, while TomTom took it for others: a header it now requires,"
            f" or the key lost access to this API ({check.detail.removeprefix('key: ')})",
            check.requests,
            check.version,
            check.latency_ms,
        )
        if check.status is Status.KEY and check.requests
        else check
        for check in checks
    ]


_VERSION_IN_PATH = re.compile(r"^[0-9]+$")


def versions(sent: Sequence[SentRequest]) -> str:
    """The API versions `sent` named, each once, in order: the separate `apiVersion` (Orbis),
    else the first all-digit segment of the path (TomTom Maps: `/search/2/...`, `/routing/1/...`)."""
    found: dict[str, None] = {}
    for request in sent:
        version = request.api_version or next(
            (part for part in request.path.split("/") if _VERSION_IN_PATH.match(part)), None
        )
        if version:
            found[version] = None
    return ",".join(found)
