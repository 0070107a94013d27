"""stdio for desktop clients and the one-shot exec command, as real subprocesses."""

import asyncio
import json
import os
import subprocess
import sys

from mcp import Client, StdioServerParameters
from mcp_types import Implementation

from tests.conftest import CANARY_KEY, REPO, data


def env_for(stub) -> dict[str, str]:
    return {
        **os.environ,
        "TOMTOM_API_BASE_URL": stub.base_url,
        "TOMTOM_API_KEY": "server-key-not-used",
        "DOTENV_PATH": "/nonexistent",
    }


async def test_stdio_serves_the_catalog(stub):
    stub.route("GET", r"/maps/orbis/traffic/incidentDetails", json_body=data("traffic.json"))
    params = StdioServerParameters(
        command=sys.executable,
        args=["manage.py", "mcp_stdio", "--apikey", CANARY_KEY],
        cwd=str(REPO),
        env=env_for(stub),
    )
    async with Client(params, mode="legacy", client_info=Implementation(name="Claude Desktop", version="1")) as c:
        names = {tool.name for tool in (await c.list_tools()).tools}
        result = await c.call_tool("tomtom-traffic", {"bbox": [4.8, 52.33, 4.95, 52.4], "maxResults": 2})
    assert {"tomtom-geocode", "tomtom-routing", "tomtom-traffic"} <= names
    assert json.loads(result.content[0].text)["returned"] == 2
    sent = stub.requests[-1]
    assert sent.api_key == CANARY_KEY  # --apikey wins over TOMTOM_API_KEY
    assert sent.headers["tomtom-user-agent"] == "TomTomMCPSDK/0.1.0 Claude%20Desktop"


def test_stdout_carries_only_json_rpc(stub):
    messages = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "1"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "tomtom-geocode", "arguments": {"query": "x", "limit": 0}},
        },
    ]
    process = subprocess.Popen(
        [sys.executable, "manage.py", "mcp_stdio"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=REPO,
        env=env_for(stub),
    )
    # Stdin stays open until both answers are out, as an interactive client's does (the next
    # test closes it at once).
    process.stdin.write("".join(json.dumps(m) + "\n" for m in messages))
    process.stdin.flush()
    lines = [json.loads(process.stdout.readline()) for _ in range(2)]
    process.stdin.close()
    rest, stderr = process.stdout.read(), process.stderr.read()
    process.wait(60)
    assert rest == ""
    assert [line["id"] for line in lines] == [1, 2]
    assert all(line["jsonrpc"] == "2.0" for line in lines)
    assert '"Tool call"' in stderr  # the log went to stderr


def test_stdio_answers_every_request_it_read_before_stdin_closed(stub):
    """A client that writes its calls and hangs up at once still gets every answer: the calls
    in flight when input ends finish (here, against a TomTom that takes a second), then the
    process exits."""
    answer = json.dumps(data("traffic.json")).encode()

    async def slowly(writer):
        await asyncio.sleep(1.0)
        head = f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {len(answer)}\r\n\r\n"
        writer.write(head.encode() + answer)
        await writer.drain()

    stub.route("GET", r"/maps/orbis/traffic/incidentDetails", respond=slowly)
    initialize = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
    traffic = {"name": "tomtom-traffic", "arguments": {"bbox": [4.8, 52.33, 4.95, 52.4], "maxResults": 2}}
    messages = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": initialize},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": traffic},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": traffic},
        {"jsonrpc": "2.0", "id": 4, "method": "tools/list"},
    ]
    done = subprocess.run(
        [sys.executable, "manage.py", "mcp_stdio", "--apikey", CANARY_KEY],
        input="".join(json.dumps(m) + "\n" for m in messages),  # written, then stdin closes
        capture_output=True,
        text=True,
        cwd=REPO,
        env=env_for(stub),
        timeout=60,
    )
    answers = {line["id"]: line for line in map(json.loads, done.stdout.splitlines())}
    assert sorted(answers) == [1, 2, 3, 4]
    assert '"message":"Server started"' in done.stderr and '"transport":"stdio"' in done.stderr
    for call in (2, 3):
        assert "error" not in answers[call], answers[call]
        assert json.loads(answers[call]["result"]["content"][0]["text"])["returned"] == 2
    assert done.returncode == 0


def run_exec(stub, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "manage.py", "mcp_exec", *args],
        capture_output=True,
        text=True,
        cwd=REPO,
        env=env_for(stub),
        timeout=60,
    )


def test_exec_prints_the_result(stub):
    stub.route("GET", r"/maps/orbis/places/geocode", json_body=data("geocode_v2.json"))
    done = run_exec(stub, "tomtom-geocode", '{"query": "Dam 1"}', "--apikey", CANARY_KEY)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["results"][0]["type"] == "Point Address"


def test_exec_fails_on_a_tool_error_with_the_same_error(stub):
    done = run_exec(stub, "tomtom-routing", '{"locations": [[4.9, 52.3]]}')
    assert done.returncode == 1
    error = json.loads(done.stdout)["error"]
    assert (error["code"], error["argument"]) == ("invalid_arguments", "locations")


def test_exec_rejects_arguments_that_are_not_json(stub):
    done = run_exec(stub, "tomtom-geocode", "{query: Dam}")
    assert done.returncode == 2
    assert "not JSON" in done.stderr


def test_exec_unknown_tool(stub):
    done = run_exec(stub, "tomtom-nowhere", "{}")
    assert done.returncode == 1
    assert json.loads(done.stdout)["error"]["code"] == "unknown_tool"


def test_stdio_without_a_database_answers_from_the_committed_fixture(stub, tmp_path):
    """No database at all (its directory does not exist): retired names are still `retired`,
    old inputs still hear what changed, and the log says once where the answers come from."""
    messages = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "old", "version": "1"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "tools/call",
            "params": {"name": "tomtom-static-map", "arguments": {"center": {"lat": 52.37, "lon": 4.89}}},
        },
        {
            "jsonrpc": "2.0",
            "id": 4,
            "method": "tools/call",
            "params": {"name": "tomtom-ev-routing", "arguments": {"maxChargeKWH": 75}},
        },
    ]
    env = {**env_for(stub), "DATABASE_URL": f"sqlite:///{tmp_path / 'missing' / 'db.sqlite3'}"}
    process = subprocess.Popen(
        [sys.executable, "manage.py", "mcp_stdio"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=REPO,
        env=env,
    )
    process.stdin.write("".join(json.dumps(m) + "\n" for m in messages))
    process.stdin.flush()
    answers = {line["id"]: line["result"] for line in (json.loads(process.stdout.readline()) for _ in range(4))}
    process.stdin.close()
    stderr = process.stderr.read()
    process.wait(60)
    names = {tool["name"] for tool in answers[2]["tools"]}
    assert "tomtom-static-map" not in names and "tomtom-routing" in names
    assert json.loads(answers[3]["content"][0]["text"])["error"]["code"] == "retired"
    error = json.loads(answers[4]["content"][0]["text"])["error"]
    assert (error["change"], error["new_argument"], error["send"]) == (
        "renamed",
        "maxChargeInkWh",
        {"maxChargeInkWh": 75},
    )
    warnings = [json.loads(line) for line in stderr.splitlines() if "Tool-surface tables unreadable" in line]
    assert [w["message"] for w in warnings] == ["Tool-surface tables unreadable: answering from the committed fixture"]
    assert stub.requests == []
