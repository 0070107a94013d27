"""Writes tests/data/evidence_sessions.jsonl: recorded sessions for the evidence figures (issue #43).

    .venv/bin/python -m tests.data.evidence_sessions > tests/data/evidence_sessions.jsonl

Every line is written by the server's own formatter from the declared events (core/exchange.py,
core/calls.py, core/app_status.py), at fixed times over two UTC days: sessions of five hosts from
four host families (Claude, Cursor, ChatGPT under two versions, Goose) that initialize, list tools,
call them (names that do not exist, invalid arguments then corrected, a retired tool then its
replacement, corrections after the window, a failure corrected twice, sessionless failures), have
requests refused, and one call with two outdated inputs (two lines, one call). The file is the
record: tests/analytics/test_evidence_ingest.py counts the figures from its lines by hand.
"""

from __future__ import annotations

import sys
from datetime import UTC, datetime, timedelta

from core.app_status import OutdatedCall
from core.calls import ToolCall
from core.exchange import ListedTool, RequestRefused, SessionStarted, ToolsListed
from tests.analytics.conftest import written

START = datetime(2026, 11, 23, 9, 0, tzinfo=UTC)
CATALOGUE = [
    ("tomtom-geocode", 812),
    ("tomtom-routing", 1_904),
    ("tomtom-poi-search", 1_230),
    ("tomtom-map-image", 640),
    ("tomtom-traffic", 955),
]
HOSTS = [  # client, version, protocol revision, backend
    ("claude-ai", "0.12.4", "2025-06-18", "tomtom-orbis-maps"),
    ("cursor-vscode", "1.7.0", "2025-03-26", "tomtom-orbis-maps"),
    ("ChatGPT/1.2026.2", "1.2026.2", "2025-06-18", "tomtom-maps"),
    ("ChatGPT/1.2026.5", "1.2026.5", "2025-11-25", "tomtom-maps"),
    ("goose", "", "2025-03-26", "tomtom-orbis-maps"),
]


def at(seconds: float) -> str:
    return (START + timedelta(seconds=seconds)).isoformat().replace("+00:00", "")


def lines() -> list[str]:
    out: list[str] = []
    serial = 0

    def call(t: float, client: str, session: str | None, tool: str, outcome: str = "ok", **fields: object) -> None:
        nonlocal serial
        serial += 1
        event = ToolCall(
            tool=tool,
            client=client,
            transport="http",
            backend="tomtom-orbis-maps",
            outcome=outcome,
            total_ms=120.0,
            bytes=900,
            request_id=f"call-{serial}",
            session=session,
            protocol_version=fields.pop("protocol_version", "2025-06-18"),  # type: ignore[arg-type]
            **fields,  # type: ignore[arg-type]
        )
        out.append(written(event, at(t)))

    for day in (0, 1):
        base = day * 86_400
        for index, (client, version, protocol, backend) in enumerate(HOSTS):
            session = f"s{day}{index}"
            t = base + index * 1_000
            out.append(
                written(
                    SessionStarted(
                        client=client,
                        client_version=version,
                        protocol_version=protocol,
                        requested_version="2025-11-25" if protocol != "2025-11-25" else "",
                        transport="http",
                        apps="apps" if index % 2 == 0 else "text",
                        request_id=f"init-{session}",
                        session=session,
                    ),
                    at(t),
                )
            )
            listed = CATALOGUE if index != 4 else CATALOGUE[:3]
            for repeat in range(1 + index % 2):
                out.append(
                    written(
                        ToolsListed(
                            client=client,
                            protocol_version=protocol,
                            transport="http",
                            backend=backend,
                            bytes=sum(size for _name, size in listed) + 2,
                            tools=[ListedTool(name=name, bytes=size) for name, size in listed],
                            request_id=f"list-{session}-{repeat}",
                            session=session,
                        ),
                        at(t + 1 + repeat),
                    )
                )
            call(t + 10, client, session, "tomtom-geocode", protocol_version=protocol)
            # Invalid arguments, corrected 40 s later; then again, corrected twice (counted once).
            call(t + 20, client, session, "tomtom-routing", "invalid_arguments", argument_paths=["locations[1].lat"])
            call(t + 60, client, session, "tomtom-routing")
            call(t + 70, client, session, "tomtom-routing", "invalid_arguments", argument_paths=["locations", "avoid"])
            call(t + 80, client, session, "tomtom-routing")
            call(t + 90, client, session, "tomtom-routing")
            # A name that does not exist, corrected by the suggested tool.
            call(t + 100, client, session, "tomtom-search", "unknown_tool", suggested=["tomtom-poi-search"])
            call(t + 130, client, session, "tomtom-poi-search")
            if index % 2 == 0:  # a retired tool, then its replacement (listed: the suggestion)
                call(t + 200, client, session, "tomtom-static-map", "retired", suggested=["tomtom-map-image"])
                call(t + 230, client, session, "tomtom-map-image")
            else:  # a retired tool, then another tool: not a correction
                call(t + 200, client, session, "tomtom-static-map", "retired", suggested=["tomtom-map-image"])
                call(t + 230, client, session, "tomtom-traffic")
            # Failing, corrected only after the window (301 s later): not corrected.
            call(t + 300, client, session, "tomtom-geocode", "invalid_arguments", argument_paths=["query"])
            call(t + 601, client, session, "tomtom-geocode")
            # A success at the very same moment as a failure does not correct it (strictly later).
            call(t + 700, client, session, "tomtom-traffic", "invalid_arguments", argument_paths=["point"])
            call(t + 700, client, session, "tomtom-traffic")
            # A made-up name never corrected, and one in another host's session (no correction across sessions).
            call(t + 710, client, session, "tomtom-directions", "unknown_tool", suggested=["tomtom-routing"])
            call(t + 720, client, f"other-{session}", "tomtom-routing")
            # A sessionless failure: not in the corrections (no session), in the unknown names.
            call(t + 730, client, None, "get_weather", "unknown_tool")
            # Requests refused.
            out.append(
                written(
                    RequestRefused(
                        method="resources/subscribe",
                        code=-32601,
                        client=client,
                        protocol_version=protocol,
                        transport="http",
                        request_id=f"ref-{session}",
                        session=session,
                        error="Method not found",
                    ),
                    at(t + 740),
                )
            )
            if index == 1:
                out.append(
                    written(
                        RequestRefused(
                            method="tools/call",
                            code=-32602,
                            client=client,
                            protocol_version=protocol,
                            request_id=f"ref2-{session}",
                            session=session,
                        ),
                        at(t + 750),
                    )
                )
        # One call with two outdated inputs: two lines, one call.
        for name, change in (("avoid", "renamed"), ("units", "removed")):
            out.append(
                written(
                    OutdatedCall(
                        tool="tomtom-routing",
                        client="goose",
                        request_id=f"outdated-{day}",
                        session=f"s{day}4",
                        input=name,
                        change=change,
                    ),
                    at(base + 4_800),
                )
            )
    return out


if __name__ == "__main__":
    sys.stdout.write("".join(f"{text}\n" for text in lines()))
