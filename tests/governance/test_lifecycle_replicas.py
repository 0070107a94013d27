"""The lifecycle on two real server processes sharing one database (PostgreSQL in the
PostgreSQL pass, a SQLite file otherwise), with a third process playing the admin: a deprecation
is listed with its notice on both within the refresh time, an alias reaches its target on both,
a scheduled retirement fires on both after its date (an injected clock, moved forward in a file,
not slept through) yet, that clock being a rehearsal, is written nowhere; recorded once when two
processes fire it at once for a date that truly came; an outdated call names every outdated
input; and the who-still-calls report ingested from both servers' logs equals the counts in
those logs."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest
from mcp_types import Implementation

from tests.conftest import REPO, http_client, server_process
from tests.governance.test_kill_switch import django_env, run_django, shared_database
from tests.support import clock

pytestmark = pytest.mark.live_server_process

REFRESH_SECONDS = 1
BOUND = REFRESH_SECONDS + 3
"""The documented bound is GOVERNANCE_REFRESH_SECONDS plus one request; the slack absorbs a slow CI."""
BEFORE = datetime(2027, 1, 14, 23, 59, 50, tzinfo=UTC)
RETIRE_ON = "2027-01-15"
AFTER = datetime(2027, 1, 15, 0, 0, 1, tzinfo=UTC)
NOTICE = "tomtom-traffic is deprecated, retired on 2027-01-15: use tomtom-routing or tomtom-geocode instead."
BBOX = {"bbox": [4.8, 52.3, 4.9, 52.4]}
RECORDED = """
import json
from governance.models import GovernanceEvent, RetiredTool
print(json.dumps({
    "retired": sorted([r.tool_id, r.since.isoformat(), r.message] for r in RetiredTool.objects.filter(
        tool_id__in=["tomtom-traffic", "tomtom-search"])),
    "events": sorted([e.tool, e.subject, e.action, e.via] for e in GovernanceEvent.objects.filter(
        tool__in=["tomtom-traffic", "tomtom-search"], via="schedule")),
}))
"""
FIRE = f"""
from datetime import date
from governance import services
services.scheduled_retirements_fire(day=date.fromisoformat("{RETIRE_ON}"))
"""


def django_output(database_url: str, code: str, env: dict[str, str]) -> str:
    script = f"import django\ndjango.setup()\n{code}"
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=REPO,
        env={**django_env(database_url), **env},
        check=True,
        capture_output=True,
        text=True,
    )
    return done.stdout


async def within(seconds: float, check: Callable[[], Awaitable[bool]]) -> float:
    """Poll `check` until it holds; return how long that took."""
    started = time.monotonic()
    while time.monotonic() - started < seconds:
        if await check():
            return time.monotonic() - started
        await asyncio.sleep(0.1)
    raise AssertionError(f"not within {seconds} s")


def result(answer) -> dict:
    return json.loads(answer.content[0].text)


async def test_the_lifecycle_reaches_both_replicas(tmp_path: Path, stub):
    stub.route("GET", r".*/incidentDetails", json_body={"incidents": []})
    stub.route(
        "GET", r"/maps/orbis/places/search/.*", json_body=json.loads((REPO / "tests/data/poi_search.json").read_text())
    )
    clock_file = tmp_path / "now"
    clock.write(clock_file, BEFORE)
    clocked = {"GOVERNANCE_CLOCK": clock.PATH, clock.CLOCK_FILE: str(clock_file)}
    with shared_database(tmp_path) as database:
        env = {
            "DATABASE_URL": database,
            "TOMTOM_API_BASE_URL": stub.base_url,
            "GOVERNANCE_REFRESH_SECONDS": str(REFRESH_SECONDS),
            **clocked,
        }
        logs = []
        with server_process(env) as first:
            with server_process(env) as second:
                replicas = {"agent-one": first, "agent-two": second}
                names = {}
                for name, base in replicas.items():
                    async with http_client(base + "/mcp", client_info=Implementation(name=name, version="1")) as c:
                        names[name] = {tool.name: tool for tool in (await c.list_tools()).tools}
                assert all("Deprecated" not in tools["tomtom-traffic"].description for tools in names.values())

                # The product manager deprecates tomtom-traffic and renames tomtom-search (the admin's services).
                run_django(
                    database,
                    f"""
import os
os.environ.update({clocked!r})
from datetime import date
from governance import services
services.deprecation_create(name="tomtom-traffic", replaced_by=["tomtom-routing", "tomtom-geocode"],
                            retire_on=date.fromisoformat("{RETIRE_ON}"), reason="Incidents come with routes now.")
services.ledger_add(name="tomtom-search", first_seen=date(2025, 6, 30))
services.alias_create(name="tomtom-search", target="tomtom-fuzzy-search", arguments={{"q": "query"}},
                      retire_on=date.fromisoformat("{RETIRE_ON}"), reason="Renamed tomtom-fuzzy-search.")
""",
                )
                saved = time.monotonic()
                seen = {}
                for name, base in replicas.items():
                    async with http_client(base + "/mcp", client_info=Implementation(name=name, version="1")) as c:

                        async def deprecated(client=c) -> bool:
                            tools = {tool.name: tool for tool in (await client.list_tools(cache_mode="bypass")).tools}
                            return tools["tomtom-traffic"].description.startswith("Deprecated, retired on 2027-01-15")

                        await within(BOUND, deprecated)
                        seen[name] = time.monotonic() - saved
                        listed = {tool.name for tool in (await c.list_tools(cache_mode="bypass")).tools}
                        traffic = result(await c.call_tool("tomtom-traffic", BBOX))
                        alias = await c.call_tool("tomtom-search", {"q": "coffee"})
                        outdated = result(
                            await c.call_tool(
                                "tomtom-ev-routing", {"origin": [4.89, 52.37], "destination": [4.47, 51.92]}
                            )
                        )
                    assert "tomtom-search" not in listed and "tomtom-traffic" in listed
                    assert next(iter(traffic)) == "notice" and traffic["notice"] == NOTICE and "incidents" in traffic
                    assert alias.is_error is False
                    assert result(alias)["notice"].startswith(
                        "tomtom-search is deprecated, retired on 2027-01-15: call tomtom-fuzzy-search instead"
                    )
                    assert outdated["error"]["arguments"][:2] == ["origin", "destination"]  # then what is missing
                    assert "origin: removed" in outdated["error"]["message"]
                    assert "destination: removed" in outdated["error"]["message"]
                assert max(seen.values()) < BOUND, seen
                searched = [r for r in stub.requests if "/places/search/" in r.path]
                assert [r.path for r in searched] == ["/maps/orbis/places/search/coffee.json"] * 2  # q became query

                # The retire-on date comes: no deploy, no admin; every replica answers it as retired.
                clock.write(clock_file, AFTER)
                moved = time.monotonic()
                for name, base in replicas.items():
                    async with http_client(base + "/mcp", client_info=Implementation(name=name, version="1")) as c:

                        async def retired(client=c) -> bool:
                            answer = result(await client.call_tool("tomtom-traffic", BBOX))
                            tools = {tool.name for tool in (await client.list_tools(cache_mode="bypass")).tools}
                            return answer.get("error", {}).get("code") == "retired" and "tomtom-traffic" not in tools

                        await within(BOUND, retired)
                        gone = result(await c.call_tool("tomtom-search", {"q": "coffee"}))
                    assert gone["error"]["code"] == "retired"
                    assert gone["error"]["replaced_by"] == ["tomtom-fuzzy-search"]
                assert time.monotonic() - moved < 2 * BOUND
            logs.append(server_process.last_log)
        logs.append(server_process.last_log)

        rehearsed = json.loads(django_output(database, RECORDED, {}))
        # The date truly comes (the system clock's day, given explicitly): two processes at once.
        firing = [
            subprocess.Popen(
                [sys.executable, "-c", f"import django\ndjango.setup()\n{FIRE}"],
                cwd=REPO,
                env=django_env(database),
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
            )
            for _ in range(2)
        ]
        fired_output = [process.communicate(timeout=60)[0] for process in firing]
        recorded = json.loads(django_output(database, RECORDED, {}))
        written = [json.loads(line) for out in fired_output for line in out.splitlines() if line.startswith("{")]
        fired = [line for line in written if line.get("message") == "Scheduled retirement fired"]
        served = [json.loads(line) for log in logs for line in log.splitlines() if line.startswith("{")]
        assert [line for line in served if line.get("message") == "Scheduled retirement fired"] == []

        # Who still calls: both servers' logs ingested, the report against the lines themselves.
        log_file = tmp_path / "servers.log"
        log_file.write_text("\n".join(logs) + "\n", encoding="utf-8")
        subprocess.run(
            [sys.executable, "manage.py", "ingest_app_status", str(log_file)],
            cwd=REPO,
            env=django_env(database),
            check=True,
            capture_output=True,
        )
        report = json.loads(
            django_output(
                database,
                """
import json
from datetime import date
from analytics.selectors import ReportQuery, still_calling
rows = still_calling(ReportQuery(start=date(2026, 1, 1), end=date.today()))
print(json.dumps([[r.tool, r.kind, r.client, r.tenant, r.calls] for r in rows]))
""",
                {},
            )
        )

    assert rehearsed == {"retired": [], "events": []}  # the rehearsal clock wrote nothing
    assert recorded["retired"] == [
        ["tomtom-search", RETIRE_ON, "Renamed tomtom-fuzzy-search."],
        ["tomtom-traffic", RETIRE_ON, "Incidents come with routes now."],
    ]
    # Each retirement recorded once, whichever process came first; the other found it done.
    assert [event for event in recorded["events"] if event[1] == "retirement"] == [
        ["tomtom-search", "retirement", "created", "schedule"],
        ["tomtom-traffic", "retirement", "created", "schedule"],
    ]
    assert sorted(line["tool"] for line in fired) == ["tomtom-search", "tomtom-traffic"]

    lines = [json.loads(line) for log in logs for line in log.splitlines() if line.startswith("{")]
    old_lines = [
        line
        for line in lines
        if line.get("event") == "app_status"
        and line["kind"] in ("deprecated_tool", "alias_call", "retired_tool", "outdated_call")
    ]
    governance = Counter((line["tool"], line["kind"], line["client"], line.get("tenant", "")) for line in old_lines)
    # Who still calls counts calls: an outdated call logs a line per outdated input, one request id.
    calls = Counter(
        (line["tool"], line["kind"], line["client"], line.get("tenant", ""))
        for line in {line["request_id"]: line for line in old_lines}.values()
    )
    assert {(tool, kind, client, tenant): n for tool, kind, client, tenant, n in report} == calls
    assert governance[("tomtom-search", "alias_call", "agent-one", "")] == 1
    assert governance[("tomtom-ev-routing", "outdated_call", "agent-two", "")] == 2  # origin and destination
    assert calls[("tomtom-ev-routing", "outdated_call", "agent-two", "")] == 1  # in one call
