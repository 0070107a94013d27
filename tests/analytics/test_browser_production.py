"""The admin, the dashboard and the API docs are styled under the production server.

gunicorn with uvicorn workers, the static files as `collectstatic` writes them (hash-named,
compressed) into a STATIC_ROOT of their own and served by WhiteNoise: what `make serve-prod` and
a replica of docs/deploy.md run, not runserver's finders. A staff user logs in through the form.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from analytics.api import api
from tests.conftest import REPO, server_process
from tests.support.chromium import NEEDS_CHROMIUM, launched

pytestmark = [*NEEDS_CHROMIUM, pytest.mark.live_server_process]

STAFF = ("operator", "a-long-enough-password-4e1b")
HEADER_BG = "rgb(65, 118, 144)"
"""`#header`'s background: the admin's `--secondary` (#417690), set only by admin/css/base.css."""


def manage(env: dict[str, str], *command: str) -> None:
    subprocess.run(
        [sys.executable, "manage.py", *command], cwd=REPO, env={**os.environ, **env}, check=True, capture_output=True
    )


@pytest.fixture(scope="module")
def production_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    root = tmp_path_factory.mktemp("production")
    env = {
        "DATABASE_URL": f"sqlite:///{root / 'db.sqlite3'}",
        "DJANGO_STATIC_ROOT": str(root / "static"),
        "DOTENV_PATH": "/nonexistent",
    }
    manage(env, "migrate", "--no-input", "-v", "0")
    manage(env, "collectstatic", "--no-input", "-v", "0")
    manage(
        {**env, "DJANGO_SUPERUSER_PASSWORD": STAFF[1]},
        "createsuperuser",
        "--no-input",
        "--username",
        STAFF[0],
        "--email",
        "ops@example.com",
    )
    assert (root / "static" / "staticfiles.json").is_file()  # the manifest: hash-named files
    with server_process(env, workers=2) as base:
        yield base


@pytest.fixture
def page(production_server: str) -> Iterator[Any]:
    """A light-scheme page that records every stylesheet and script answered with an error."""
    with launched() as chromium:
        page = chromium.new_context(color_scheme="light").new_page()
        page.failed = []
        page.on(
            "response", lambda response: response.status >= 400 and page.failed.append((response.status, response.url))
        )
        page.on("requestfailed", lambda request: page.failed.append(("failed", request.url)))
        yield page


def style(page: Any, selector: str, prop: str) -> str:
    return page.locator(selector).first.evaluate(f"e => getComputedStyle(e).getPropertyValue('{prop}')")


def stylesheets(page: Any) -> list[str]:
    return page.evaluate("[...document.styleSheets].map(s => s.href).filter(Boolean)")


def test_the_admin_login_and_the_dashboard_are_styled(production_server, page):
    page.goto(production_server + "/admin/login/?next=/analytics/")

    assert style(page, "#header", "background-color") == HEADER_BG
    assert style(page, "#header", "display") == "flex"
    assert style(page, ".login #container", "border-top-style") == "solid"  # admin/css/login.css
    sheets = stylesheets(page)
    assert any("/static/admin/css/base." in sheet for sheet in sheets)
    assert all(sheet.startswith(production_server + "/static/") for sheet in sheets)

    page.fill("#id_username", STAFF[0])
    page.fill("#id_password", STAFF[1])
    page.click("input[type=submit]")
    page.wait_for_url(production_server + "/analytics/")

    assert style(page, "#header", "background-color") == HEADER_BG
    assert style(page, ".analytics-filters", "display") == "flex"  # analytics/dashboard.css
    assert any("/static/analytics/dashboard." in sheet for sheet in stylesheets(page))
    assert page.failed == []


def test_the_api_docs_page_loads_swagger_ui_from_this_server(production_server, page):
    page.goto(production_server + "/admin/login/?next=/api/analytics/docs")
    page.fill("#id_username", STAFF[0])
    page.fill("#id_password", STAFF[1])
    page.click("input[type=submit]")
    page.wait_for_url(production_server + "/api/analytics/docs")

    # Drawn by ninja's bundled Swagger UI script from the schema, fetched with the staff session.
    assert page.locator("#swagger-ui .info .title").inner_text().startswith("TomTom MCP analytics")
    operations = api.get_openapi_schema(path_prefix="/api/analytics/")["paths"].values()
    assert page.locator("#swagger-ui .opblock").count() == sum(len(methods) for methods in operations)
    assert style(page, "#swagger-ui .opblock.opblock-get", "background-color") == "rgba(97, 175, 254, 0.1)"
    assert any("/static/ninja/swagger-ui." in sheet for sheet in stylesheets(page))
    assert page.failed == []
