"""Client name on every request: signed session ids, the User-Agent fallback, provenance."""

import base64
import json
import re

import httpx
import pytest

from protocol.identity import MAX_NAME_LENGTH, SessionIds, identify, upstream_metadata
from tests.conftest import data, server_process

AWKWARD_NAMES = [
    "Claude Desktop",
    "vs/code copilot",
    "100% agent",
    'say "hi"',
    "🗺️ map bot 🚗",
    "",
    "x" * MAX_NAME_LENGTH,
    "tab\tand\nnewline",
]


@pytest.mark.parametrize("name", AWKWARD_NAMES)
def test_names_round_trip_exactly(name):
    ids = SessionIds(["secret"])
    session_id = ids.mint(name)
    assert session_id.isascii() and session_id.isprintable() and " " not in session_id
    assert ids.read(session_id) == name


def test_long_names_are_cut_to_the_maximum():
    ids = SessionIds(["secret"])
    assert ids.read(ids.mint("é" * (MAX_NAME_LENGTH + 50))) == "é" * MAX_NAME_LENGTH


def test_each_session_gets_its_own_id():
    ids = SessionIds(["secret"])
    assert ids.mint("same") != ids.mint("same")


def tamper(session_id: str) -> str:
    parts = session_id.split(".")
    parts[2] = base64.urlsafe_b64encode(b"admin").rstrip(b"=").decode()
    return ".".join(parts)


def legacy_id(ids: SessionIds, name: str) -> str:
    """A session id as minted before the MCP Apps flag: `v1.<nonce>.<name>.<signature>`."""
    payload = "v1.bm9uY2Vub25jZQ." + base64.urlsafe_b64encode(name.encode()).rstrip(b"=").decode()
    return f"{payload}.{ids._sign(ids._keys[0], payload)}"


@pytest.mark.parametrize(
    "forge",
    [
        pytest.param(tamper, id="tampered name"),
        pytest.param(lambda s: s[:-5], id="truncated"),
        pytest.param(lambda s: s.rsplit(".", 1)[0], id="signature missing"),
        pytest.param(lambda s: s.replace("v2.", "v3.", 1), id="other version"),
        pytest.param(lambda s: s.replace(".text.", ".apps.", 1), id="flag flipped"),
        pytest.param(lambda s: s.replace(".text.", ".maybe.", 1), id="unknown flag"),
        pytest.param(lambda s: s.replace("v2.", "v1.", 1), id="flagged id as legacy"),
        pytest.param(lambda s: "not-base64!.$$$.***.%%%", id="not base64"),
        pytest.param(lambda s: SessionIds(["another secret"]).mint("x"), id="another secret"),
        pytest.param(lambda s: "v1." + "é" * 10 + ".a.b", id="non ascii"),
        pytest.param(lambda s: "", id="empty"),
    ],
)
def test_ids_the_server_never_minted_are_unknown(forge):
    ids = SessionIds(["secret"])
    forged = forge(ids.mint("claude"))
    assert ids.read(forged) is None
    assert identify({"mcp-session-id": forged}, {}, ids).client_name == "unknown"


@pytest.mark.parametrize("apps", [True, False])
def test_the_apps_declaration_round_trips(apps):
    ids = SessionIds(["secret"])
    session_id = ids.mint("Claude", apps)
    assert ids.read_session(session_id) == ("Claude", apps)
    assert identify({"mcp-session-id": session_id}, {}, ids).apps_declared is apps


def test_ids_minted_before_the_flag_still_read_with_the_declaration_unknown():
    ids = SessionIds(["secret"])
    old = legacy_id(ids, "cursor")
    assert ids.read(old) == "cursor" and ids.read_session(old) == ("cursor", None)
    identity = identify({"mcp-session-id": old}, {}, ids)
    assert (identity.client_name, identity.apps_declared) == ("cursor", None)


def test_initialize_reads_the_apps_declaration_from_the_capabilities():
    ids = SessionIds(["secret"])
    ui = {"io.modelcontextprotocol/ui": {"mimeTypes": ["text/html;profile=mcp-app"]}}

    def init(capabilities):
        params = {"clientInfo": {"name": "c"}, "capabilities": capabilities}
        return identify({}, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params}, ids).apps_declared

    assert init({"extensions": ui}) is True
    assert init({}) is False
    assert init({"extensions": {"io.modelcontextprotocol/ui": {"mimeTypes": ["text/html"]}}}) is False
    assert init({"extensions": {"io.modelcontextprotocol/ui": {}}}) is False
    assert init("not an object") is False


def test_rotated_secrets_still_read_old_ids():
    old = SessionIds(["old"]).mint("cursor")
    rotated = SessionIds(["new", "old"])
    assert rotated.read(old) == "cursor"
    assert SessionIds(["new"]).read(rotated.mint("cursor")) == "cursor"


def test_resolution_order():
    ids = SessionIds(["secret"])
    initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"clientInfo": {"name": "at init"}}}
    assert identify({"user-agent": "ua"}, initialize, ids).client_name == "at init"
    assert identify({}, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}, ids).client_name == "unknown"
    modern = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"_meta": {"io.modelcontextprotocol/clientInfo": {"name": "modern"}}},
    }
    assert identify({"mcp-session-id": ids.mint("old")}, modern, ids).client_name == "modern"
    assert identify({"mcp-session-id": ids.mint("old"), "user-agent": "ua"}, {}, ids).client_name == "old"
    assert identify({"user-agent": "openai-mcp/1.0"}, {}, ids).client_name == "openai-mcp/1.0"
    assert identify({}, {"jsonrpc": "2.0", "id": 1, "method": "ping"}, ids).client_name == "unknown"


def test_upstream_metadata_is_base64_json():
    ids = SessionIds(["s"])
    identity = identify({"user-agent": "ChatGPT"}, {}, ids)
    decoded = json.loads(base64.b64decode(upstream_metadata(identity, "tomtom-api-key")))
    assert decoded == {"client": "ChatGPT", "auth_method": "tomtom-api-key"}


INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "Zed / 0.200 %"}},
}
CALL = {
    "jsonrpc": "2.0",
    "id": 2,
    "method": "tools/call",
    "params": {"name": "tomtom-geocode", "arguments": {"query": "Dam"}},
}
HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}


def test_any_replica_reads_an_id_another_minted(stub):
    stub.route("GET", r"/maps/orbis/places/geocode", json_body=data("geocode_v2.json"))
    env = {"TOMTOM_API_BASE_URL": stub.base_url, "MCP_SESSION_SECRETS": "shared-secret"}
    with server_process(env) as first, server_process(env) as second:
        session_id = httpx.post(first + "/mcp", json=INIT, headers=HEADERS).headers["mcp-session-id"]
        response = httpx.post(second + "/mcp", json=CALL, headers={**HEADERS, "Mcp-Session-Id": session_id})
        with server_process({**env, "MCP_SESSION_SECRETS": "other-secret"}) as stranger:
            httpx.post(stranger + "/mcp", json=CALL, headers={**HEADERS, "Mcp-Session-Id": session_id})
    assert response.json()["result"]["isError"] is False
    named, unnamed = stub.requests[-2:]
    assert named.headers["tomtom-user-agent"] == "TomTomMCPSDKHttp/0.1.0 Zed%20%2F%200.200%20%25"
    assert unnamed.headers["tomtom-user-agent"] == "TomTomMCPSDKHttp/0.1.0 unknown"
    metadata = json.loads(base64.b64decode(response.headers["tomtom-upstream-metadata"]))
    assert metadata == {"client": "Zed / 0.200 %", "auth_method": "server-key"}


def test_a_client_without_session_is_named_by_its_user_agent(stub):
    stub.route("GET", r"/maps/orbis/places/geocode", json_body=data("geocode_v2.json"))
    with server_process({"TOMTOM_API_BASE_URL": stub.base_url}) as base:
        response = httpx.post(base + "/mcp", json=CALL, headers={**HEADERS, "User-Agent": "openai-mcp/1.0 (ChatGPT)"})
    log = server_process.last_log
    assert response.json()["result"]["isError"] is False
    assert stub.requests[-1].headers["tomtom-user-agent"] == "TomTomMCPSDKHttp/0.1.0 openai-mcp%2F1.0%20%28ChatGPT%29"
    call_lines = [json.loads(line) for line in log.splitlines() if '"Tool call"' in line]
    assert call_lines[-1]["client"] == "openai-mcp/1.0 (ChatGPT)"
    assert call_lines[-1]["user_agent"] == "openai-mcp/1.0 (ChatGPT)"
    assert {"tool", "backend", "outcome", "upstream_ms", "total_ms", "bytes"} <= set(call_lines[-1])


# --- names that are not valid Unicode --------------------------------------------------------


LONE_SURROGATES = ["\ud800", "bad \udfff name", "\udc00\ud800"]
"""Names JSON allows (as `\\uXXXX` escapes) that UTF-8 cannot encode."""


@pytest.mark.parametrize("name", LONE_SURROGATES)
def test_lone_surrogates_in_a_name_become_replacement_characters(name):
    """A name that reaches the headers another way (a session id, a caller in-process) is sanitised."""
    from tools.tomtom.client import upstream_user_agent

    ids = SessionIds(["secret"])
    identity = identify({}, {}, ids)
    identity = type(identity)(name, None)
    expected = re.sub("[\ud800-\udfff]", "\ufffd", name)
    metadata = json.loads(base64.b64decode(upstream_metadata(identity, None)))
    assert metadata["client"] == expected
    user_agent = upstream_user_agent("TomTomMCPSDKHttp", "1.0", identity.client_name)
    assert user_agent.isascii() and "%EF%BF%BD" in user_agent
    assert ids.read(ids.mint(identity.client_name)) == expected


def test_the_user_agent_header_survives_a_lone_surrogate_given_directly():
    from tools.tomtom.client import upstream_user_agent

    assert upstream_user_agent("P", "1", "a\ud800b") == "P/1 a%EF%BF%BDb"
    identity = identify({}, {}, SessionIds(["s"]))
    assert upstream_metadata(type(identity)("x\udfff", None), None)
