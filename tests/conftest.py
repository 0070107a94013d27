"""Shared fixtures: a TomTom stub on loopback, the server's configuration pointed at it,
in-process MCP clients, real server processes; and the plugins every run loads."""

from __future__ import annotations

import contextlib
import inspect
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import tomllib
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from protocol.service import build_dispatcher
from tests.support.tomtom_stub import TomTomStub
from tools.context import CallContext, ServerConfig
from tools.tomtom.backends import Backend
from tools.tomtom.client import ClientSettings, close_shared_clients

pytest_plugins = ["pytester", "tests.support.skip_policy"]
"""pytester for tests of our pytest plugins; skip_policy fails a CI run that skips a test
(tests/allowed_skips.toml lists the skips allowed)."""

REPO = Path(__file__).resolve().parent.parent
_FIND = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]["find"]
PACKAGES = tuple(name.removesuffix("*") for name in _FIND["include"])
"""The top-level packages the wheel installs, as pyproject.toml declares them."""
DATA = Path(__file__).resolve().parent / "data"
RECORDED = DATA / "recorded"
CANARY_KEY = "canary-KEY-7f3a9c"
"""The TomTom key every test uses; tests/test_key_leak.py fails if it shows up anywhere else."""
CREDIT = {
    Backend.ORBIS: {"attribution": "© TomTom, © OpenStreetMap"},
    Backend.GENESIS: {"attribution": "© TomTom"},
}
"""What ends every result that shows TomTom data, per backend (tools.attribution)."""


@pytest.fixture(scope="session", autouse=True)
def _no_collected_static_files() -> Iterator[None]:
    """In-process servers (the test client, `live_server`) have no `collectstatic` copy to serve,
    so none is configured: WhiteNoise would warn at start-up that STATIC_ROOT does not exist.
    Session-wide, so it is in place before `live_server` builds its handler."""
    from django.test import override_settings

    with override_settings(STATIC_ROOT=None):
        yield


PROXY_VARIABLES = ("http_proxy", "https_proxy", "all_proxy", "no_proxy")
"""What tools/connect.py reads (each in either case) to send a request through a proxy."""


@pytest.fixture(scope="session", autouse=True)
def _no_proxy_from_the_machine() -> Iterator[None]:
    """The stand-ins are on loopback: a proxy set on the machine running the tests (and passed on
    to the server processes they start) would receive their requests. Tests that mean a proxy
    set it themselves (tests/faults/test_upstream_proxy.py)."""
    names = [name for base in PROXY_VARIABLES for name in (base, base.upper())]
    saved = {name: os.environ.pop(name) for name in names if name in os.environ}
    yield
    os.environ.update(saved)


@pytest.fixture
def browser() -> Iterator[Any]:
    """A headless Chromium for one test (tests/support/chromium.py)."""
    from tests.support.chromium import launched

    with launched() as chromium:
        yield chromium


@pytest.fixture
async def _tomtom_session_closed() -> AsyncIterator[None]:
    yield
    await close_shared_clients()


@pytest.fixture(scope="session")
def django_db_setup(django_db_setup: None) -> Iterator[None]:
    """pytest-django's test databases, and before they are dropped, the connection of
    asgiref's `sync_to_async` executor thread closed: async tests reach the ORM through that
    thread, pytest-django closes only the main thread's connection, and PostgreSQL refuses to
    drop a database a session still uses. (Only runs that set the databases up pay for it.)"""
    yield
    from asgiref.sync import SyncToAsync
    from django.db import connections

    SyncToAsync.single_thread_executor.submit(connections.close_all).result(timeout=10)


@pytest.fixture(autouse=True)
def _tomtom_sessions_closed(request: pytest.FixtureRequest) -> None:
    """An async test's event loop closes its pooled TomTom session, as the server's lifespan
    does. (Only async tests: a sync one may drive a loop of its own, e.g. the browser's.)"""
    if inspect.iscoroutinefunction(request.function):
        request.getfixturevalue("_tomtom_session_closed")


@pytest.fixture(autouse=True)
def _static_files_without_collectstatic(settings):
    """In-process tests render the admin and dashboard straight from the apps' static folders;
    the hashed, compressed copies (production) exist only after `collectstatic`."""
    settings.STORAGES = {
        **settings.STORAGES,
        "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
    }


def apps_extension() -> Any:
    """What an MCP Apps host declares at `initialize`: pass as `Client(..., extensions=[...])`."""
    from mcp.client.extension import advertise
    from mcp.server.apps import APP_MIME_TYPE, EXTENSION_ID

    return advertise(EXTENSION_ID, {"mimeTypes": [APP_MIME_TYPE]})


def data(name: str) -> Any:
    """One of our own test answers (tests/data)."""
    return json.loads((DATA / name).read_text())


def recorded(name: str) -> Any:
    """A real TomTom answer recorded upstream (tests/data/recorded, provenance and licence there)."""
    return json.loads((RECORDED / name).read_text())


@pytest.fixture
def stub() -> Iterator[TomTomStub]:
    with TomTomStub() as running:
        yield running


def make_config(stub: TomTomStub, **overrides: Any) -> ServerConfig:
    values: dict[str, Any] = {
        "version": "9.9.9",
        "client": ClientSettings(base_url=stub.base_url, total_timeout=5.0, max_retries=2, backoff=0.01),
        "server_key": CANARY_KEY,
        "default_backend": Backend.ORBIS,
        "hosted": False,
    }
    values.update(overrides)
    return ServerConfig(**values)


@pytest.fixture
def config(stub: TomTomStub) -> ServerConfig:
    return make_config(stub)


@pytest.fixture
def dispatcher():
    return build_dispatcher()


@pytest.fixture
def context(config: ServerConfig) -> CallContext:
    return CallContext(config=config, transport="exec", client_name="pytest")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_until_healthy(
    base: str, process: subprocess.Popen[bytes], server_log: Callable[[], str], seconds: float = 90
) -> None:
    """Wait until the server at `base` answers `/healthz` with 200; fail with its log when it exits
    first or `seconds` pass (a loaded machine can take a while to import everything)."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            if httpx.get(base + "/healthz", timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        if process.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"server did not start:\n{server_log()}")
        time.sleep(0.1)


@contextlib.contextmanager
def server_process(env: dict[str, str] | None = None, *, workers: int = 0, port: int | None = None) -> Iterator[str]:
    """A real server on loopback (uvicorn, or gunicorn with `workers`); yields its base URL."""
    port = port or free_port()
    full_env = {
        **os.environ,
        "TOMTOM_API_KEY": CANARY_KEY,
        "LOG_LEVEL": "INFO",
        "DOTENV_PATH": "/nonexistent",
        **(env or {}),
    }
    if workers:
        command = [
            sys.executable,
            "-m",
            "gunicorn",
            "-c",
            str(REPO / "gunicorn.conf.py"),
            "-w",
            str(workers),
            "-b",
            f"127.0.0.1:{port}",
            "tomtom_mcp.asgi:application",
        ]
    else:
        command = [
            sys.executable,
            "-m",
            "uvicorn",
            "tomtom_mcp.asgi:application",
            "--port",
            str(port),
            "--log-level",
            "warning",
        ]
    log = tempfile.NamedTemporaryFile(prefix=f"server-{port}-", suffix=".log", delete=False)  # noqa: SIM115
    process = subprocess.Popen(command, cwd=REPO, env=full_env, stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    try:
        log_path = Path(log.name)
        wait_until_healthy(base, process, lambda: log_path.read_bytes().decode(errors="replace"))
        yield base
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
        log.seek(0)
        server_process.last_log = log.read().decode(errors="replace")  # type: ignore[attr-defined]
        log.close()
        os.unlink(log.name)


@contextlib.asynccontextmanager
async def http_client(url: str, headers: dict[str, str] | None = None, **kwargs: Any) -> AsyncIterator[Any]:
    """The SDK's own client over Streamable HTTP, with extra request headers."""
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    async with (
        httpx2.AsyncClient(headers=headers or {}, timeout=30) as http,
        Client(streamable_http_client(url, http_client=http), **kwargs) as client,
    ):
        yield client
