"""The tool surface shaped to the client: what a text-only client and an MCP Apps host are listed,
the operator's rules, and the same answer from any replica over HTTP."""

from __future__ import annotations

import json
from datetime import date

import httpx
import orjson
import pytest
from mcp import Client

from governance.client_surface import ClientRule, ClientSurfaces, Shape, WidgetOffer, read_rules, shape
from governance.runtime import Governance
from governance.surface import Retirement, Surface
from protocol.appdata import APP_DATA_KEY, deliver_app_data
from protocol.server import build_server
from tests.conftest import apps_extension, data, server_process
from tools.context import CallContext
from tools.dispatch import Dispatcher
from tools.registry import default_registry

APP_ONLY = {"tomtom-get-app-data", "tomtom-get-map-key", "tomtom-report-app-status"}
NEEDS_WIDGET = {"tomtom-dynamic-map", "tomtom-data-viz"}
PLACE_TOOLS = {
    "tomtom-geocode",
    "tomtom-reverse-geocode",
    "tomtom-fuzzy-search",
    "tomtom-poi-search",
    "tomtom-ev-search",
    "tomtom-area-search",
    "tomtom-search-along-route",
    "tomtom-routing",
    "tomtom-ev-routing",
    "tomtom-reachable-range",
    "tomtom-traffic",
}
UI = {"io.modelcontextprotocol/ui": {"mimeTypes": ["text/html;profile=mcp-app"]}}


def server(config, rules=(), governance: Governance | None = None, name: str = "pytest"):
    dispatcher = Dispatcher(
        default_registry(),
        interceptors=(*([governance.intercept] if governance else []), deliver_app_data),
        listing_filters=(governance.filter_listing,) if governance else (),
    )

    def make_context(ctx):
        return CallContext(config=config, transport="stdio", client_name=name)

    return build_server(dispatcher, make_context, surfaces=ClientSurfaces(rules))


async def listing(server, *, apps: bool) -> dict:
    async with Client(server, extensions=[apps_extension()] if apps else None) as client:
        return {tool.name: tool for tool in (await client.list_tools()).tools}


async def test_a_text_only_client_is_listed_no_widget(config):
    tools = await listing(server(config), apps=False)
    assert set(tools).isdisjoint(APP_ONLY | NEEDS_WIDGET)
    assert set(tools) >= PLACE_TOOLS and "tomtom-poi-categories" in tools
    for tool in tools.values():
        assert "show_ui" not in tool.input_schema["properties"], tool.name
        assert tool.meta is None, tool.name
        text = json.dumps(tool.model_dump(by_alias=True, mode="json")).lower()
        assert "widget" not in text and "mcp apps" not in text and "ui://" not in text, tool.name


async def test_an_apps_host_is_listed_everything_its_backend_serves(config):
    tools = await listing(server(config), apps=True)
    assert set(tools) == {tool.name for tool in default_registry() if tool.serves(config.default_backend)}
    for name in PLACE_TOOLS | NEEDS_WIDGET:
        assert "show_ui" in tools[name].input_schema["properties"], name
        assert tools[name].meta["ui"]["resourceUri"] == "ui://tomtom-map/app.html", name
    for name in APP_ONLY:
        assert tools[name].meta == {"ui": {"visibility": ["app"]}}


async def test_the_text_only_schema_is_the_model_without_show_ui(config):
    text, apps = await listing(server(config), apps=False), await listing(server(config), apps=True)
    for name, tool in text.items():
        full = apps[name].input_schema
        expected = {**full, "properties": {k: v for k, v in full["properties"].items() if k != "show_ui"}}
        assert tool.input_schema == expected, name


async def test_a_text_only_client_that_sends_show_ui_still_gets_its_answer(stub, config):
    stub.route("GET", r"/maps/orbis/places/geocode", json_body=data("geocode_v2.json"))
    async with Client(server(config)) as client:
        result = await client.call_tool("tomtom-geocode", {"query": "Dam 1", "show_ui": True})
    assert not result.is_error
    text = orjson.loads(result.content[0].text)
    assert "show_ui" not in text and "tool" not in text and text["returned"] == 2
    assert not (result.meta or {}).get(APP_DATA_KEY)


async def test_an_apps_host_gets_the_app_data(stub, config):
    stub.route("GET", r"/maps/orbis/places/geocode", json_body=data("geocode_v2.json"))
    async with Client(server(config), extensions=[apps_extension()]) as client:
        result = await client.call_tool("tomtom-geocode", {"query": "Dam 1", "show_ui": True})
    assert result.meta["delivery"] == "inline" and result.meta[APP_DATA_KEY]


async def test_a_rule_withholds_widgets_and_hides_tools_from_a_fleet(config):
    rules = [ClientRule("ci-agent-*", WidgetOffer.NEVER, frozenset({"tomtom-ev-routing", "tomtom-traffic"}))]
    fleet = await listing(server(config, rules, name="CI-Agent-7"), apps=True)
    other = await listing(server(config, rules, name="Claude"), apps=True)
    assert "tomtom-ev-routing" not in fleet and "tomtom-traffic" not in fleet
    assert set(fleet).isdisjoint(APP_ONLY | NEEDS_WIDGET)
    assert "show_ui" not in fleet["tomtom-routing"].input_schema["properties"]
    assert "tomtom-ev-routing" in other and "show_ui" in other["tomtom-routing"].input_schema["properties"]


async def test_a_rule_offers_widgets_to_a_host_that_does_not_declare_them(config):
    rules = [ClientRule("legacy-host", WidgetOffer.ALWAYS)]
    tools = await listing(server(config, rules, name="legacy-host"), apps=False)
    assert set(tools) >= APP_ONLY and "show_ui" in tools["tomtom-geocode"].input_schema["properties"]


async def test_hidden_tools_still_answer_and_governance_answers_first(stub, config):
    stub.route("POST", r"/maps/orbis/routing/routes/calculate", json_body=data("route_v3.json"))
    retired = Retirement(name="tomtom-traffic", replaced_by=("tomtom-routing",), since=date(2026, 1, 1))
    governance = Governance(refresh_seconds=3600, load=lambda: Surface(retired=(retired,)))
    governance.prime()
    rules = [ClientRule("*", WidgetOffer.DECLARED, frozenset({"tomtom-routing", "tomtom-traffic"}))]
    mcp_server = server(config, rules, governance)
    async with Client(mcp_server) as client:
        names = {tool.name for tool in (await client.list_tools()).tools}
        routed = await client.call_tool("tomtom-routing", {"locations": [[4.9, 52.3], [5.1, 52.1]]})
        gone = await client.call_tool("tomtom-traffic", {"bbox": [4.8, 52.3, 4.9, 52.4]})
        unknown = await client.call_tool("tomtom-teleport", {})
    assert "tomtom-routing" not in names and "tomtom-traffic" not in names
    assert not routed.is_error and orjson.loads(routed.content[0].text)["routes"]
    assert gone.is_error and orjson.loads(gone.content[0].text)["error"]["code"] == "retired"
    assert set(orjson.loads(unknown.content[0].text)["error"]["tools"]) == names  # only what was listed


def test_the_first_matching_rule_applies():
    rules = [ClientRule("claude-code*", WidgetOffer.NEVER), ClientRule("claude*", WidgetOffer.ALWAYS)]
    assert shape(rules, "Claude-Code", True) == Shape(widgets=False)
    assert shape(rules, "claude-ai", False) == Shape(widgets=True)
    assert shape(rules, "cursor", False) == Shape(widgets=False)
    assert shape(rules, "cursor", None) == Shape(widgets=True), "an unknown declaration keeps the widgets"


async def test_a_saved_rule_is_applied_within_the_refresh_time():
    now = [0.0]
    stored: list[ClientRule] = []
    surfaces = ClientSurfaces(refresh_seconds=5, load=lambda: tuple(stored), clock=lambda: now[0])
    surfaces.prime()
    assert (await surfaces.shape_for("fleet", True)).widgets
    stored.append(ClientRule("fleet", WidgetOffer.NEVER))
    now[0] = 4.9
    assert (await surfaces.shape_for("fleet", True)).widgets, "still the snapshot read at start"
    now[0] = 5.0
    assert not (await surfaces.shape_for("fleet", True)).widgets, "the first request after the bound sees it"


async def test_an_unreadable_table_keeps_the_last_rules(caplog):
    now = [0.0]
    rules = [(ClientRule("fleet", WidgetOffer.NEVER),)]

    def load():
        if not rules:
            raise RuntimeError("database down")
        return rules.pop()

    surfaces = ClientSurfaces(refresh_seconds=1, load=load, clock=lambda: now[0])
    surfaces.prime()
    now[0] = 2
    assert not (await surfaces.shape_for("fleet", True)).widgets
    assert any("Client surface rules unreadable" in r.getMessage() for r in caplog.records)


@pytest.mark.django_db
def test_rules_come_from_the_admin_table(admin_client):
    response = admin_client.post(
        "/admin/tools/clientsurface/add/",
        {
            "pattern": "ci-*",
            "position": 10,
            "widgets": "never",
            "hidden_tools": ["tomtom-traffic", "tomtom-ev-routing"],
        },
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    refused = admin_client.post(
        "/admin/tools/clientsurface/add/",
        {"pattern": "x", "position": 1, "widgets": "never", "hidden_tools": ["tomtom-nope"]},
    )
    assert "Select a valid choice. tomtom-nope is not one of the available choices." in refused.content.decode()
    (rule,) = read_rules()
    assert rule == ClientRule("ci-*", WidgetOffer.NEVER, frozenset({"tomtom-traffic", "tomtom-ev-routing"}))


# --- over HTTP: the declaration travels in the signed session id ----------------------------------


def rpc(base: str, method: str, params: dict, session: str | None = None) -> httpx.Response:
    headers = {"Content-Type": "application/json", "Accept": "application/json"}
    if session:
        headers["Mcp-Session-Id"] = session
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    return httpx.post(base + "/mcp", json=body, headers=headers, timeout=30)


def initialize(base: str, name: str, capabilities: dict) -> str:
    params = {
        "protocolVersion": "2025-11-25",
        "capabilities": capabilities,
        "clientInfo": {"name": name, "version": "1"},
    }
    return rpc(base, "initialize", params).headers["mcp-session-id"]


@pytest.mark.live_server_process
def test_any_replica_shapes_the_listing_the_same_way():
    with server_process() as first, server_process() as second:
        text_session = initialize(first, "agent", {})
        apps_session = initialize(second, "Claude", {"extensions": UI})
        listings = {
            (who, replica): rpc(base, "tools/list", {}, session).json()["result"]["tools"]
            for who, session in (("text", text_session), ("apps", apps_session))
            for replica, base in (("first", first), ("second", second))
        }
    assert listings["text", "first"] == listings["text", "second"]
    assert listings["apps", "first"] == listings["apps", "second"]
    text = {tool["name"]: tool for tool in listings["text", "first"]}
    apps = {tool["name"]: tool for tool in listings["apps", "first"]}
    assert set(apps) - set(text) == APP_ONLY | NEEDS_WIDGET
    assert all("_meta" not in tool and "show_ui" not in tool["inputSchema"]["properties"] for tool in text.values())
    assert apps["tomtom-geocode"]["_meta"]["ui"]["resourceUri"] == "ui://tomtom-map/app.html"
    sizes = {who: len(json.dumps({"tools": listings[who, "first"]}, separators=(",", ":"))) for who in ("text", "apps")}
    print(f"tools/list over HTTP: text-only {sizes['text']:,} bytes, MCP Apps {sizes['apps']:,} bytes")
