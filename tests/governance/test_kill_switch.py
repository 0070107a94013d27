"""Real server processes sharing one database: the answers over HTTP, and the kill switch.

The database is a fresh one both processes share: on PostgreSQL when DATABASE_URL points at
it (a database created for the test), otherwise a temporary SQLite file. A third process plays
the admin and writes through the services.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlparse

import pytest
from mcp_types import Implementation

from tests.conftest import REPO, http_client, server_process

pytestmark = pytest.mark.live_server_process

REFRESH_SECONDS = 1


def django_env(database_url: str) -> dict[str, str]:
    return {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "tomtom_mcp.settings",
        "DATABASE_URL": database_url,
        "DOTENV_PATH": "/nonexistent",
    }


def run_django(database_url: str, code: str) -> None:
    """Run `code` in another process, set up against `database_url`."""
    script = f"import django\ndjango.setup()\n{code}"
    subprocess.run([sys.executable, "-c", script], cwd=REPO, env=django_env(database_url), check=True)


@contextlib.contextmanager
def shared_database(tmp_path: Path) -> Iterator[str]:
    """A migrated (so seeded) database of its own; its URL."""
    url = os.environ.get("DATABASE_URL", "")
    if urlparse(url).scheme not in {"postgres", "postgresql"}:
        shared = f"sqlite:///{tmp_path / 'shared.sqlite3'}"
        run_django(shared, "from django.core.management import call_command\ncall_command('migrate', verbosity=0)")
        yield shared
        return
    import psycopg

    parsed = urlparse(url)
    name = f"governance_{uuid.uuid4().hex[:12]}"
    server = parsed._replace(path="/postgres").geturl()
    with psycopg.connect(server, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    shared = parsed._replace(path=f"/{name}").geturl()
    try:
        run_django(shared, "from django.core.management import call_command\ncall_command('migrate', verbosity=0)")
        yield shared
    finally:
        with psycopg.connect(server, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def app_status_lines(log: str, kind: str) -> list[dict]:
    lines = [json.loads(line) for line in log.splitlines() if line.startswith("{")]
    return [line for line in lines if line.get("event") == "app_status" and line["kind"] == kind]


async def test_answers_over_http(tmp_path, stub):
    agent = Implementation(name="legacy-agent", version="0.9")
    with shared_database(tmp_path) as database:
        env = {"DATABASE_URL": database, "TOMTOM_API_BASE_URL": stub.base_url}
        with server_process(env) as base:
            async with http_client(base + "/mcp", client_info=agent) as client:
                names = {tool.name for tool in (await client.list_tools()).tools}
                retired = await client.call_tool("tomtom-waypoint-routing", {"waypoints": [[4.9, 52.4], [5, 52]]})
                outdated = await client.call_tool("tomtom-traffic", {"bbox": [4.8, 52.3, 4.9, 52.4], "fields": "{}"})
        log = server_process.last_log
    assert "tomtom-waypoint-routing" not in names and "tomtom-traffic" in names
    assert json.loads(retired.content[0].text) == {
        "error": {
            "code": "retired",
            "message": "tomtom-waypoint-routing was retired on 2026-10-05 (1.6.11); use tomtom-routing instead. "
            "tomtom-routing takes every stop in order, origin first, in `locations`: [[longitude, latitude], ...].",
            "replaced_by": ["tomtom-routing"],
        }
    }
    error = json.loads(outdated.content[0].text)["error"]
    assert (error["code"], error["argument"], error["change"]) == ("invalid_arguments", "fields", "removed")
    assert stub.requests == []  # neither call reached TomTom
    [retired_line] = app_status_lines(log, "retired_tool")
    [outdated_line] = app_status_lines(log, "outdated_call")
    assert (retired_line["tool"], retired_line["client"]) == ("tomtom-waypoint-routing", "legacy-agent")
    assert (outdated_line["tool"], outdated_line["client"], outdated_line["input"]) == (
        "tomtom-traffic",
        "legacy-agent",
        "fields",
    )


async def killed_on(base: str, started: float, deadline: float) -> float:
    """Poll one replica until tomtom-traffic is answered as retired and no longer listed."""
    async with http_client(base + "/mcp", client_info=Implementation(name="poller", version="1")) as client:
        while time.monotonic() < deadline:
            answer = await client.call_tool("tomtom-traffic", {"bbox": [4.8, 52.3, 4.9, 52.4]})
            listing = {tool.name for tool in (await client.list_tools(cache_mode="bypass")).tools}
            retired = json.loads(answer.content[0].text).get("error", {}).get("code") == "retired"
            if retired and "tomtom-traffic" not in listing:
                return time.monotonic() - started
            await asyncio.sleep(0.1)
    raise AssertionError(f"{base} still serves tomtom-traffic")


async def test_the_kill_switch_reaches_every_replica_without_a_restart(tmp_path, stub):
    stub.route("GET", r".*/incidentDetails", json_body={"incidents": []})
    with shared_database(tmp_path) as database:
        env = {
            "DATABASE_URL": database,
            "TOMTOM_API_BASE_URL": stub.base_url,
            "GOVERNANCE_REFRESH_SECONDS": str(REFRESH_SECONDS),
        }
        with server_process(env) as first, server_process(env) as second:
            for base in (first, second):
                async with http_client(base + "/mcp") as client:
                    assert "tomtom-traffic" in {tool.name for tool in (await client.list_tools()).tools}
                    answer = await client.call_tool("tomtom-traffic", {"bbox": [4.8, 52.3, 4.9, 52.4]})
                    assert answer.is_error is False
            run_django(
                database,
                "from governance.services import retired_tool_create\n"
                "retired_tool_create(name='tomtom-traffic', replaced_by=['tomtom-geocode'], message='Test.')",
            )
            saved = time.monotonic()
            delays = [await killed_on(base, saved, saved + 15) for base in (first, second)]
    # The documented bound is GOVERNANCE_REFRESH_SECONDS plus one request; the slack absorbs a slow CI.
    assert max(delays) < REFRESH_SECONDS + 3, delays
