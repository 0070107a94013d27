"""Live ingestion under the console script's `serve`, started as a user starts it.

`tomtom-maps-mcp serve` sets Django up, then uvicorn imports the ASGI module. With live ingestion
and the metrics token both on, a second `django.setup()` there configured logging again and
dropped the live handler: calls were answered, counted in the metrics, and never stored.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from tests.conftest import CANARY_KEY, data, free_port, http_client, wait_until_healthy

pytestmark = pytest.mark.live_server_process

TOKEN = "metrics-token-for-the-test"


def stored_calls(database: Path) -> list[str]:
    if not database.is_file():
        return []
    with sqlite3.connect(database) as connection:
        try:
            return [tool for (tool,) in connection.execute("SELECT tool FROM analytics_toolcallevent")]
        except sqlite3.OperationalError:  # not migrated yet
            return []


async def test_serve_with_live_ingestion_and_a_metrics_token_stores_a_call(stub, tmp_path: Path):
    stub.route("GET", r"/maps/orbis/traffic/incidentDetails", json_body=data("traffic.json"))
    port = free_port()
    env = {key: value for key, value in os.environ.items() if key not in {"DATABASE_URL", "DJANGO_SETTINGS_MODULE"}}
    env |= {
        "HOME": str(tmp_path),
        "TOMTOM_MCP_DATA_DIR": str(tmp_path / "data"),
        "TOMTOM_API_KEY": CANARY_KEY,
        "TOMTOM_API_BASE_URL": stub.base_url,
        "ANALYTICS_LIVE_INGEST": "true",
        "ANALYTICS_METRICS_TOKEN": TOKEN,
        "DOTENV_PATH": "/nonexistent",
    }
    script = Path(sys.executable).with_name("tomtom-maps-mcp")
    log = tmp_path / "serve.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            [script, "serve", "--port", str(port)], cwd=tmp_path, env=env, stdout=out, stderr=subprocess.STDOUT
        )
    base = f"http://127.0.0.1:{port}"
    try:
        wait_until_healthy(base, process, log.read_text, seconds=120)

        async with http_client(base + "/mcp") as client:
            result = await client.call_tool("tomtom-traffic", {"bbox": [4.8, 52.33, 4.95, 52.4], "maxResults": 2})
        assert json.loads(result.content[0].text)["returned"] == 2

        database = tmp_path / "data" / "db.sqlite3"
        deadline = time.monotonic() + 30  # the live writer gathers lines for up to a second
        while not stored_calls(database) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert stored_calls(database) == ["tomtom-traffic"], log.read_text()

        metrics = httpx.get(base + "/analytics/metrics", headers={"Authorization": f"Bearer {TOKEN}"}).text
        assert 'tomtom_mcp_tool_calls_total{host_family="' in metrics and 'tool="tomtom-traffic"' in metrics
    finally:
        process.terminate()
        process.wait(20)
