"""`/mcp` is a Django view: Django's test client, `runserver` and the middleware reach it."""

import json
import subprocess
import sys
import time
from unittest import mock

import httpx
import pytest
from asgiref.sync import SyncToAsync
from django.test import AsyncClient

from tests.conftest import REPO, free_port, server_process

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "django-test", "version": "1"},
    },
}
LIST = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
JSON = {"content_type": "application/json", "headers": {"Accept": "application/json, text/event-stream"}}


async def test_django_test_client_initializes_and_lists():
    client = AsyncClient()
    response = await client.post("/mcp", json.dumps(INITIALIZE), **JSON)
    assert response.status_code == 200
    assert response.json()["result"]["serverInfo"]["name"] == "tomtom-maps-mcp"
    assert response.headers["Mcp-Session-Id"]
    assert response.headers["TomTom-Upstream-Metadata"]
    # Django's middleware applied: SecurityMiddleware's and XFrameOptionsMiddleware's headers.
    assert response.headers["X-Content-Type-Options"] == "nosniff"
    assert response.headers["X-Frame-Options"] == "DENY"
    session = {"Mcp-Session-Id": response.headers["Mcp-Session-Id"], **JSON["headers"]}
    listed = await client.post("/mcp/", json.dumps(LIST), content_type="application/json", headers=session)
    assert "tomtom-geocode" in {tool["name"] for tool in listed.json()["result"]["tools"]}


@pytest.mark.parametrize(
    ("content_type", "accept"),
    [
        ("APPLICATION/JSON", "APPLICATION/JSON"),
        ("Application/Json; Charset=UTF-8", "Text/Event-Stream, Application/JSON"),
    ],
)
async def test_media_types_are_case_insensitive(content_type, accept):
    response = await AsyncClient().post(
        "/mcp", json.dumps(INITIALIZE), content_type=content_type, headers={"Accept": accept}
    )
    assert response.status_code == 200


async def test_a_host_that_is_not_ours_is_misdirected():
    headers = {"Host": "evil.example", **JSON["headers"]}
    response = await AsyncClient().post(
        "/mcp", json.dumps(INITIALIZE), content_type="application/json", headers=headers
    )
    assert response.status_code == 421
    assert response.json()["error"]["message"] == "Host not allowed"


@pytest.mark.parametrize("path", ["/mcp/tools", "/mcpx", "/api/mcp"])
async def test_other_paths_are_djangos_404(path):
    response = await AsyncClient().post(path, json.dumps(INITIALIZE), **JSON)
    assert response.status_code == 404
    assert "jsonrpc" not in response.content.decode()


async def test_an_mcp_call_runs_no_code_in_a_worker_thread():
    """The view path stays on the event loop: every thread hop costs about as much as a call."""
    from tomtom_mcp.asgi import application

    body = json.dumps(INITIALIZE).encode()
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": "/mcp",
        "raw_path": b"/mcp",
        "query_string": b"",
        "root_path": "",
        "headers": [
            (b"host", b"127.0.0.1:8000"),
            (b"content-type", b"application/json"),
            (b"accept", b"application/json"),
            (b"content-length", str(len(body)).encode()),
        ],
        "client": ("127.0.0.1", 5000),
        "server": ("127.0.0.1", 8000),
    }
    messages = [{"type": "http.request", "body": body, "more_body": False}]
    sent = []

    async def receive():
        if messages:
            return messages.pop()
        await __import__("asyncio").sleep(3600)

    async def send(message):
        sent.append(message)

    hops = []
    original = SyncToAsync.__call__

    async def counting(self, *args, **kwargs):
        hops.append(getattr(self.func, "__qualname__", repr(self.func)))
        return await original(self, *args, **kwargs)

    with mock.patch.object(SyncToAsync, "__call__", counting):
        await application(scope, receive, send)
    assert sent[0]["status"] == 200
    assert json.loads(b"".join(m.get("body", b"") for m in sent[1:]))["result"]["protocolVersion"] == "2025-11-25"
    assert hops == []


@pytest.mark.live_server_process
def test_mcp_under_a_sub_path():
    with server_process({"MCP_PATH": "/maps/mcp/"}) as base:
        served = httpx.post(base + "/maps/mcp", json=INITIALIZE, headers={"Accept": "application/json"})
        moved = httpx.post(base + "/mcp", json=INITIALIZE, headers={"Accept": "application/json"})
    assert served.status_code == 200 and served.json()["result"]["serverInfo"]["name"] == "tomtom-maps-mcp"
    assert moved.status_code == 404


@pytest.mark.live_server_process
def test_runserver_serves_mcp(tmp_path):
    port = free_port()
    env = {"DOTENV_PATH": "/nonexistent", "PATH": "/usr/bin:/bin", "DATABASE_URL": f"sqlite:///{tmp_path}/db.sqlite3"}
    server = subprocess.Popen(
        [sys.executable, "manage.py", "runserver", "--noreload", f"127.0.0.1:{port}"],
        cwd=REPO,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        for _ in range(100):
            try:
                response = httpx.post(
                    f"http://127.0.0.1:{port}/mcp", json=INITIALIZE, headers={"Accept": "application/json"}
                )
                break
            except httpx.TransportError:
                time.sleep(0.1)
        else:
            raise AssertionError("runserver did not start")
    finally:
        server.terminate()
        server.wait(10)
    assert response.status_code == 200
    assert response.json()["result"]["serverInfo"]["name"] == "tomtom-maps-mcp"


async def test_a_listing_is_served_again_alike_and_its_params_are_still_checked():
    client = AsyncClient()
    headers = {**JSON["headers"], "MCP-Protocol-Version": "2025-11-25"}
    first, second = [
        (await client.post("/mcp", json.dumps(LIST), content_type="application/json", headers=headers)).json()
        for _ in range(2)
    ]
    assert first == second and len(first["result"]["tools"]) > 10
    bad = {**LIST, "params": {"cursor": 5}}
    refused = (await client.post("/mcp", json.dumps(bad), content_type="application/json", headers=headers)).json()
    assert refused["error"]["code"] == -32602
    assert "cursor" in refused["error"]["message"]
