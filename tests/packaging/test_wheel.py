"""The built wheel as a user gets it: installed into a fresh environment with no checkout beside it,
started by its console script with a home of its own and no other environment.

The wheel is built with uv and installed (bytecode compiled, as pip does) with the locked versions
(constraints.txt) from the package index: nothing else is fetched.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from mcp import Client, StdioServerParameters
from mcp_types import Implementation

from tests.conftest import CANARY_KEY, PACKAGES, REPO, data, free_port, wait_until_healthy
from tools.geometry.simplify import cap_geometry

pytestmark = pytest.mark.packaging

UV = Path(sys.executable).with_name("uv")


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    subprocess.run([UV, "build", "--wheel", "--out-dir", out, REPO], check=True, capture_output=True, timeout=600)
    (built,) = out.glob("tomtom_maps_mcp-*.whl")
    return built


@pytest.fixture(scope="module")
def installed(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh virtual environment holding the wheel and its locked dependencies; its bin/."""
    venv = tmp_path_factory.mktemp("venv")
    subprocess.run([UV, "venv", "--quiet", "--python", sys.executable, venv], check=True, timeout=120)
    subprocess.run(
        [
            UV,
            "pip",
            "install",
            "--quiet",
            "--compile-bytecode",
            "--python",
            venv / "bin" / "python",
            "-c",
            REPO / "constraints.txt",
            wheel,
        ],
        check=True,
        timeout=900,
    )
    return venv / "bin"


@pytest.fixture
def home(tmp_path: Path) -> Path:
    (tmp_path / "home").mkdir()
    return tmp_path / "home"


def user_env(home: Path, stub_url: str) -> dict[str, str]:
    """What a desktop client gives the server: a home, a PATH, the key; TomTom is the stub."""
    return {"HOME": str(home), "PATH": "/usr/bin:/bin", "TOMTOM_API_KEY": CANARY_KEY, "TOMTOM_API_BASE_URL": stub_url}


def package_files(bin_dir: Path) -> dict[str, int]:
    """Every file of the installed packages, with its modification time."""
    site = next((bin_dir.parent / "lib").glob("python3*/site-packages"))
    return {str(p): p.stat().st_mtime_ns for name in PACKAGES for p in (site / name).rglob("*")}


def test_the_wheel_holds_every_file_the_packages_track(wheel: Path):
    """Templates, static files, the widget, the fixture, migrations, the logging config: whatever
    the packages track in git is in the wheel, so an installed server misses nothing a checkout has."""
    tracked = subprocess.run(["git", "ls-files", *PACKAGES], cwd=REPO, capture_output=True, text=True, check=True)
    in_wheel = set(zipfile.ZipFile(wheel).namelist())
    sources = [path for path in tracked.stdout.split() if path.endswith(".c")]  # in the wheel as built modules
    missing = [path for path in tracked.stdout.split() if path not in in_wheel and path not in sources]
    assert missing == []
    built = {path.split(".", 1)[0] for path in in_wheel if path.endswith(".so") or path.endswith(".pyd")}
    assert {path.removesuffix(".c") for path in sources} == built
    runtime = {"tools/widgets/map_app.html", "governance/fixtures/tool_surface.json", "tomtom_mcp/server-logging.json"}
    assert runtime <= in_wheel


async def test_stdio_starts_from_nothing_and_answers(installed: Path, home: Path, stub, tmp_path: Path):
    """The desktop client's one line: the first start migrates the embedded database in the user's
    data directory, then initialize, tools/list and a tool call work; no file of the package changes."""
    stub.route("GET", r"/maps/orbis/traffic/incidentDetails", json_body=data("traffic.json"))
    before = package_files(installed)
    params = StdioServerParameters(
        command=str(installed / "tomtom-maps-mcp"), args=[], cwd=str(tmp_path), env=user_env(home, stub.base_url)
    )
    async with Client(params, mode="legacy", client_info=Implementation(name="Claude Desktop", version="1")) as c:
        names = {tool.name for tool in (await c.list_tools()).tools}
        result = await c.call_tool("tomtom-traffic", {"bbox": [4.8, 52.33, 4.95, 52.4], "maxResults": 2})
    assert {"tomtom-geocode", "tomtom-routing", "tomtom-traffic"} <= names
    assert json.loads(result.content[0].text)["returned"] == 2
    assert stub.requests[-1].api_key == CANARY_KEY
    assert (home / ".local" / "share" / "tomtom-maps-mcp" / "db.sqlite3").is_file()
    assert package_files(installed) == before


def test_stdio_migrates_once_and_logs_it(installed: Path, home: Path, stub, tmp_path: Path):
    """`Embedded database migrated` on the first start only; stdout carries JSON-RPC alone."""
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
    }
    logs = []
    for _ in range(2):
        done = subprocess.run(
            [installed / "tomtom-maps-mcp", "stdio"],
            input=json.dumps(initialize) + "\n",
            capture_output=True,
            text=True,
            cwd=tmp_path,
            env=user_env(home, stub.base_url),
            timeout=300,
        )
        assert json.loads(done.stdout)["result"]["serverInfo"]["name"] == "tomtom-maps-mcp"
        logs.append([json.loads(line) for line in done.stderr.splitlines()])
    migrated = [[line for line in run if line["message"] == "Embedded database migrated"] for run in logs]
    assert len(migrated[0]) == 1 and migrated[1] == []
    assert migrated[0][0]["path"] == str(home / ".local" / "share" / "tomtom-maps-mcp" / "db.sqlite3")
    assert migrated[0][0]["migrations"] > 0


@pytest.fixture
def served(installed: Path, home: Path, stub, tmp_path: Path) -> Iterator[str]:
    port = free_port()
    log = tmp_path / "serve.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            [installed / "tomtom-maps-mcp", "serve", "--port", str(port)],
            cwd=tmp_path,
            env=user_env(home, stub.base_url),
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    base = f"http://127.0.0.1:{port}"
    try:
        wait_until_healthy(base, process, log.read_text, seconds=300)
        yield base
    finally:
        process.terminate()
        process.wait(20)


def test_serve_answers_health_readiness_and_static_files(served: str, installed: Path, home: Path):
    health = httpx.get(served + "/healthz").json()
    assert (health["status"], health["name"], health["version"]) == ("ok", "tomtom-maps-mcp", "0.1.0")
    assert httpx.get(served + "/readyz").status_code == 200  # the embedded database is migrated
    css = httpx.get(served + "/static/admin/css/base.css")  # WhiteNoise, from the data directory
    assert css.status_code == 200 and "text/css" in css.headers["content-type"]
    assert (home / ".local" / "share" / "tomtom-maps-mcp" / "static" / "staticfiles.json").is_file()


def test_the_data_directory_setting_moves_the_database(installed: Path, home: Path, tmp_path: Path):
    elsewhere = tmp_path / "elsewhere"
    env = {**user_env(home, "http://127.0.0.1:9"), "TOMTOM_MCP_DATA_DIR": str(elsewhere)}
    done = subprocess.run(
        [installed / "tomtom-maps-mcp", "manage", "migrate", "-v0"],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert (elsewhere / "db.sqlite3").is_file()
    assert not (home / ".local").exists()


def test_the_console_script_runs_the_installed_code(installed: Path, tmp_path: Path):
    where = subprocess.run(
        [installed / "python", "-c", "import tomtom_mcp; print(tomtom_mcp.__file__)"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={"PATH": "/usr/bin:/bin"},
        check=True,
    ).stdout
    assert Path(where.strip()).is_relative_to(installed.parent)
    assert os.path.commonpath([where.strip(), str(REPO)]) != str(REPO)


def test_the_installed_simplifier_runs_its_compiled_kernel(installed: Path, tmp_path: Path):
    """The wheel was built where a compiler was at hand, so the installed package simplifies with
    the kernel (not the numpy fallback), and caps a line as the checkout does."""
    script = (
        "import json; from tools.geometry.compiled import kernel; from tools.geometry.simplify import cap_geometry; "
        "line = {'type': 'LineString', 'coordinates': [[4.9 + i / 1000, 52.3 + (i % 7) / 1000] for i in range(5000)]}; "
        "capped, report = cap_geometry(line, cap=100); "
        "print(json.dumps([kernel.__file__, capped, report.as_dict()]))"
    )
    done = subprocess.run(
        [installed / "python", "-c", script],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={"PATH": "/usr/bin:/bin"},
        check=True,
    )
    where, capped, report = json.loads(done.stdout)
    assert Path(where).is_relative_to(installed.parent.parent)
    line = {"type": "LineString", "coordinates": [[4.9 + i / 1000, 52.3 + (i % 7) / 1000] for i in range(5000)]}
    expected, expected_report = cap_geometry(line, cap=100)
    assert (capped, report) == (expected, expected_report.as_dict())


def test_the_wheel_says_what_it_is_and_installs_only_its_own_packages(wheel: Path):
    """What PyPI and a person reading `pip show` see: the licence (its text in the wheel), where
    the project lives, which Pythons it supports; and nothing at the top level but this project's
    seven packages (docs/adr/0048-release-artifacts.md says how their generic names are kept
    from colliding)."""
    archive = zipfile.ZipFile(wheel)
    (metadata_path,) = [name for name in archive.namelist() if name.endswith(".dist-info/METADATA")]
    dist_info = metadata_path.removesuffix("METADATA")
    metadata = archive.read(metadata_path).decode()
    headers = [line.split(": ", 1) for line in metadata.split("\n\n", 1)[0].splitlines() if ": " in line]
    values = {}
    for name, value in headers:
        values.setdefault(name, []).append(value)
    assert values["License-Expression"] == ["Apache-2.0"] and values["License-File"] == ["LICENSE"]
    assert archive.read(f"{dist_info}licenses/LICENSE") == (REPO / "LICENSE").read_bytes()
    assert {url.split(", ")[0] for url in values["Project-URL"]} >= {"Homepage", "Repository", "Issues"}
    pythons = {c for c in values["Classifier"] if c.startswith("Programming Language :: Python :: 3.")}
    assert pythons == {"Programming Language :: Python :: 3.12", "Programming Language :: Python :: 3.13"}
    assert values["Requires-Python"] == [">=3.12"]
    top_level = {name.split("/", 1)[0] for name in archive.namelist()} - {dist_info.rstrip("/")}
    assert top_level == set(PACKAGES)
