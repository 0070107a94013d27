"""What operators and visitors ask the server itself: is it alive (`/healthz`), may it take
traffic (`/readyz`), and what is it (`/`, the page the admin's "View site" opens).

- `/healthz` answers as long as the process runs: it touches nothing (a load balancer's liveness).
- `/readyz` answers 200 only when this replica can serve a call as it should: the database
  answers, every migration of this release is applied, and the tool-surface rules it governs
  calls by were read from the tables within their refresh bound (governance/runtime.py).
  Otherwise 503, naming what is not ready. The deploy recipe waits for it before moving to the
  next replica (docs/deploy.md). What every replica shares, and so would take every replica out
  at once, is a warning in the `governance` detail, never a 503: tool-surface rows left out
  because they do not validate (check tools.E120), and a failing `GOVERNANCE_CLOCK` replaced by
  the system clock (tools.E019; docs/governance.md, "Operating it").
"""

from __future__ import annotations

import asyncio
from typing import Any

from asgiref.sync import sync_to_async
from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, connections
from django.db.migrations.executor import MigrationExecutor
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render

from core.version import SERVER_NAME, version

CHECK_SECONDS = 5.0
"""The most a readiness check may take before it counts as not ready."""
_migrated = False
"""Once every migration was found applied, it stays so for this process (nothing unapplies them)."""


def healthz(request: HttpRequest) -> JsonResponse:
    return JsonResponse({"status": "ok", "name": SERVER_NAME, "version": version()})


def _database() -> tuple[bool, str]:
    connection = connections[DEFAULT_DB_ALIAS]
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
    except Exception as error:  # an unreachable database is an answer here, not a crash
        return False, f"unreachable ({type(error).__name__})"
    finally:
        connection.close()
    return True, "ok"


def _migrations() -> tuple[bool, str]:
    global _migrated
    if _migrated:
        return True, "ok"
    connection = connections[DEFAULT_DB_ALIAS]
    try:
        executor = MigrationExecutor(connection)
        pending = executor.migration_plan(executor.loader.graph.leaf_nodes())
    except Exception as error:
        return False, f"unknown ({type(error).__name__})"
    finally:
        connection.close()
    if pending:
        names = ", ".join(f"{migration.app_label}.{migration.name}" for migration, _ in pending[:5])
        return False, f"{len(pending)} not applied: {names}"
    _migrated = True
    return True, "ok"


async def _governance() -> tuple[bool, str]:
    from protocol.http import mcp_endpoint

    dispatcher = mcp_endpoint().dispatcher
    if dispatcher is None or "governance" not in dispatcher.probes:
        return False, "no governance"
    return await dispatcher.probes["governance"]()


async def _timed(name: str, check: Any) -> tuple[str, bool, str]:
    try:
        ready, detail = await asyncio.wait_for(check, CHECK_SECONDS)
    except TimeoutError:
        return name, False, f"no answer within {CHECK_SECONDS:g} s"
    return name, ready, detail


async def readyz(request: HttpRequest) -> JsonResponse:
    """200 `{"status": "ready", "checks": {...}}` when every check passes, else 503 `"not ready"`."""
    results = []
    database = await _timed("database", sync_to_async(_database, thread_sensitive=False)())
    results.append(database)
    if database[1]:
        results.append(await _timed("migrations", sync_to_async(_migrations, thread_sensitive=False)()))
        results.append(await _timed("governance", _governance()))
    else:
        results += [("migrations", False, "database unreachable"), ("governance", False, "database unreachable")]
    ready = all(ok for _, ok, _ in results)
    body = {
        "status": "ready" if ready else "not ready",
        "name": SERVER_NAME,
        "version": version(),
        "checks": {name: {"ok": ok, "detail": detail} for name, ok, detail in results},
    }
    response = JsonResponse(body, status=200 if ready else 503)
    response["Cache-Control"] = "no-store"
    return response


def home(request: HttpRequest) -> HttpResponse:
    """What this server is and how to connect an MCP client to it; staff are pointed to the admin."""
    endpoint = request.build_absolute_uri(settings.MCP_PATH)
    context = {
        "name": SERVER_NAME,
        "version": version(),
        "endpoint": endpoint,
        "api_key": "api-key" in settings.MCP_AUTH,
        "oauth": "oauth" in settings.MCP_AUTH,
        "hosted": settings.MCP_HOSTED,
        "is_staff": bool(getattr(request, "user", None) and request.user.is_active and request.user.is_staff),
    }
    return render(request, "tomtom_mcp/home.html", context)
