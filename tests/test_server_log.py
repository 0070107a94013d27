"""The production server writes one log format: every line, gunicorn's and uvicorn's included,
is a JSON object, so ingesting the server's own log finds nothing malformed."""

import json
import subprocess
import sys

import httpx
import pytest

from tests.conftest import REPO, data, server_process
from tests.support.tomtom_stub import TomTomStub

pytestmark = pytest.mark.live_server_process
JSON = {"Accept": "application/json"}
CALL = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "tools/call",
    "params": {"name": "tomtom-geocode", "arguments": {"query": "Dam"}},
}


def test_every_line_of_the_servers_log_is_json(tmp_path):
    with TomTomStub() as stub:
        stub.route("GET", r"/maps/orbis/places/geocode", json_body=data("geocode_v2.json"))
        with server_process({"TOMTOM_API_BASE_URL": stub.base_url}, workers=2) as base:
            assert httpx.post(base + "/mcp", json=CALL, headers=JSON).json()["result"]["isError"] is False
            assert httpx.get(base + "/nowhere").status_code == 404
            assert httpx.post(base + "/mcp", content=b"{", headers={"Content-Type": "text/plain"}).status_code == 415
    log = server_process.last_log
    lines = log.splitlines()
    events = [json.loads(line) for line in lines]  # raises on the first line that is not JSON
    loggers = {event["logger"] for event in events}
    assert {"gunicorn.error", "uvicorn.error", "tools.calls"} <= loggers, loggers
    path = tmp_path / "server.log"
    path.write_text(log)
    env = {"DOTENV_PATH": "/nonexistent", "PATH": "/usr/bin:/bin", "DATABASE_URL": f"sqlite:///{tmp_path}/db.sqlite3"}
    subprocess.run([sys.executable, "manage.py", "migrate", "--no-input", "-v0"], cwd=REPO, env=env, check=True)
    done = subprocess.run(
        [sys.executable, "manage.py", "ingest_app_status", str(path)], cwd=REPO, capture_output=True, text=True, env=env
    )
    assert done.returncode == 0, done.stderr
    assert ", 0 malformed" in done.stdout, done.stdout + done.stderr


@pytest.mark.parametrize(("trusted", "status"), [("127.0.0.1", 302), ("10.9.9.9", 301)])
def test_a_proxy_header_counts_only_from_a_trusted_proxy(trusted, status):
    env = {"DJANGO_SECURE_SSL_REDIRECT": "true", "FORWARDED_ALLOW_IPS": trusted}
    with server_process(env, workers=1) as base:
        response = httpx.get(base + "/admin/", headers={"X-Forwarded-Proto": "https"})
    # Believed: the request was https, so the admin sends the anonymous caller to its login (302).
    # From anyone else: plain http, redirected to https (301).
    assert response.status_code == status
