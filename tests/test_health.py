"""What operators and visitors ask the server itself: `/healthz`, `/readyz`, the root page and the
admin's "View site"; gunicorn's start line names its address; static files log no warning."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import httpx
import pytest
from django.db import connections

from tests.conftest import REPO, server_process
from tomtom_mcp import health

pytestmark = pytest.mark.django_db


def test_healthz_touches_nothing(client):
    assert client.get("/healthz").json()["status"] == "ok"


def test_readyz_is_ready_with_the_database_migrated_and_the_rules_fresh(client):
    response = client.get("/readyz")

    assert response.status_code == 200, response.content
    body = response.json()
    assert body["status"] == "ready" and response["Cache-Control"] == "no-store"
    assert {name: check["ok"] for name, check in body["checks"].items()} == {
        "database": True,
        "migrations": True,
        "governance": True,
    }
    assert body["checks"]["governance"]["detail"].startswith("rules read from the tables")


def test_readyz_names_a_migration_not_applied(client, monkeypatch):
    from django.db.migrations.executor import MigrationExecutor

    plan = MigrationExecutor.migration_plan

    def one_pending(self, targets, clean_start=False):
        migration = self.loader.get_migration("analytics", "0013_ingestion_marks")
        return [(migration, False), *plan(self, targets, clean_start)]

    monkeypatch.setattr(health, "_migrated", False)
    monkeypatch.setattr(MigrationExecutor, "migration_plan", one_pending)

    response = client.get("/readyz")

    assert response.status_code == 503
    assert response.json()["checks"]["migrations"] == {
        "ok": False,
        "detail": "1 not applied: analytics.0013_ingestion_marks",
    }


def test_readyz_is_not_ready_without_its_database(client, monkeypatch):
    def refused(self, *args, **kwargs):
        raise connections["default"].Database.OperationalError("connection refused")

    monkeypatch.setattr(type(connections["default"]), "cursor", refused)

    response = client.get("/readyz")

    assert response.status_code == 503
    checks = response.json()["checks"]
    assert checks["database"] == {"ok": False, "detail": "unreachable (OperationalError)"}
    assert checks["governance"]["ok"] is False


async def test_rules_from_the_committed_fixture_or_too_old_are_not_ready():
    from governance.runtime import REFRESH_WAIT_SECONDS, Governance
    from governance.surface import Surface

    now = [100.0]

    def unreadable() -> Surface:
        raise RuntimeError("no tables")

    from_fixture = Governance(refresh_seconds=5, load=unreadable, fallback=Surface, clock=lambda: now[0])
    from_fixture.prime()
    assert await from_fixture.readiness() == (
        False,
        "the tool-surface tables are unreadable: answering from the committed fixture",
    )

    reads = [Surface(), None]  # the second read fails: the last snapshot is kept
    tables = Governance(refresh_seconds=5, load=lambda: reads.pop(0) or unreadable(), clock=lambda: now[0])
    tables.prime()
    assert (await tables.readiness())[0] is True
    now[0] += 5 + REFRESH_WAIT_SECONDS + 1
    ready, detail = await tables.readiness()
    assert (ready, detail) == (False, "rules read 8 s ago: the tables could not be read again")


def test_the_root_page_says_what_this_is_and_how_to_connect(client, settings):
    settings.MCP_AUTH = ["api-key", "oauth"]
    html = client.get("/", HTTP_HOST="127.0.0.1").content.decode()

    assert "<h1>TomTom Maps MCP server</h1>" in html
    assert '<code id="endpoint">http://127.0.0.1/mcp</code>' in html
    assert "claude mcp add --transport http tomtom-maps http://127.0.0.1/mcp" in html
    assert 'id="oauth"' in html
    assert '<a href="/admin/">Sign in to the admin</a>' in html


def test_staff_are_linked_to_the_admin_and_view_site_lands_on_the_root_page(client, django_user_model):
    client.force_login(django_user_model.objects.create_user("ops", is_staff=True))

    admin = client.get("/admin/").content.decode()
    assert '<a href="/">View site</a>' in admin
    root = client.get("/").content.decode()
    assert '<a href="/analytics/">the analytics overview</a>' in root


@pytest.mark.live_server_process
def test_gunicorn_says_where_it_listens_and_static_files_log_no_warning(tmp_path):
    static = tmp_path / "static"
    env = {
        **os.environ,
        "DJANGO_STATIC_ROOT": str(static),
        "DOTENV_PATH": "/nonexistent",
        "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}",
    }
    subprocess.run([sys.executable, "manage.py", "collectstatic", "--no-input", "-v0"], cwd=REPO, env=env, check=True)
    css = json.loads((static / "staticfiles.json").read_text())["paths"]["admin/css/base.css"]

    with server_process({"DJANGO_STATIC_ROOT": str(static), "DATABASE_URL": env["DATABASE_URL"]}, workers=1) as base:
        port = base.rsplit(":", 1)[1]
        for _ in range(3):
            answer = httpx.get(f"{base}/static/{css}")
            assert answer.status_code == 200 and b"--body-bg" in answer.content
        assert httpx.get(f"{base}/static/{css}", headers={"If-None-Match": answer.headers["etag"]}).status_code == 304

    lines = [json.loads(line) for line in server_process.last_log.splitlines()]
    listening = [line["message"] for line in lines if line["message"].startswith("Listening at:")]
    assert len(listening) == 1 and listening[0].startswith(f"Listening at: http://127.0.0.1:{port} (")
    assert [line for line in lines if line["logger"] == "py.warnings"] == []
