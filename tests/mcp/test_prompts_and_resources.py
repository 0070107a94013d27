"""Workflow prompts and reference resources, through the SDK's own client: in memory, over
HTTP and over stdio. Prompts and resources that need a tool are offered only to callers offered it."""

from __future__ import annotations

import json
import os
import sys

import pytest
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError

from governance.client_surface import ClientRule, ClientSurfaces, WidgetOffer
from protocol.prompts import MAX_ARGUMENT_LENGTH
from protocol.server import build_server
from protocol.service import build_dispatcher
from tests.conftest import CANARY_KEY, REPO, apps_extension, data, http_client, server_process
from tests.support.tomtom_stub import TomTomStub
from tools.context import CallContext
from tools.shaping.categories import MAX_INDEX
from tools.tomtom.backends import Backend

PROMPTS = ["trip-with-stops", "nearest-by-drive-time", "ev-trip"]
TOOL_NAME = r"tomtom-[a-z-]+"


def server(config, *, backend: Backend | None = None, rules=()):
    def make_context(ctx):
        return CallContext(config=config, transport="stdio", client_name="pytest", backend=backend)

    return build_server(build_dispatcher(), make_context, surfaces=ClientSurfaces(rules))


async def test_capabilities_say_prompts_and_resources_and_no_completion(config):
    async with Client(server(config)) as client:
        capabilities = client.server_capabilities
    assert capabilities.prompts is not None and capabilities.resources is not None
    assert capabilities.completions is None


async def test_every_prompt_is_listed_with_its_arguments(config):
    async with Client(server(config, backend=Backend.GENESIS)) as client:
        prompts = {prompt.name: prompt for prompt in (await client.list_prompts()).prompts}
    assert list(prompts) == PROMPTS
    trip = prompts["trip-with-stops"]
    assert [(a.name, a.required) for a in trip.arguments] == [
        ("start", True),
        ("stops", True),
        ("end", False),
        ("order", False),
    ]
    assert all(p.title and p.description for p in prompts.values())


async def test_a_prompt_names_the_tools_the_caller_is_offered(config):
    async with Client(server(config, backend=Backend.GENESIS)) as client:
        maps = await client.get_prompt("trip-with-stops", {"start": "Amsterdam", "stops": "Utrecht; Gouda"})
    async with Client(server(config, backend=Backend.ORBIS)) as client:
        orbis = await client.get_prompt("trip-with-stops", {"start": "Amsterdam", "stops": "Utrecht; Gouda"})
    maps_text, orbis_text = maps.messages[0].content.text, orbis.messages[0].content.text
    assert maps.messages[0].role == "user"
    assert maps_text.startswith("Plan a trip from Amsterdam via Utrecht; Gouda, ending at the last stop.")
    assert "tomtom-optimize-waypoints" in maps_text and "tomtom-routing" in maps_text
    assert "tomtom-optimize-waypoints" not in orbis_text  # Orbis does not serve it
    assert "Keep the stops in the order given." in orbis_text
    assert "tomtom-dynamic-map" not in maps_text  # a text-only client is offered no map
    assert orbis_text.endswith("4. Credit the data as the results' `attribution` says.")


async def test_an_apps_host_is_told_to_show_it_on_a_map(config):
    async with Client(server(config), extensions=[apps_extension()]) as client:
        result = await client.get_prompt("ev-trip", {"start": "Amsterdam", "destination": "Berlin"})
    text = result.messages[0].content.text
    assert "tomtom-ev-routing" in text and "show_ui: true" in text and "tomtom-dynamic-map" in text
    assert "ask for the battery capacity" in text


async def test_a_prompt_needing_a_hidden_tool_is_not_offered(config):
    rules = [ClientRule("*", WidgetOffer.DECLARED, frozenset({"tomtom-matrix-routing"}))]
    async with Client(server(config, rules=rules)) as client:
        names = [prompt.name for prompt in (await client.list_prompts()).prompts]
        with pytest.raises(MCPError) as refused:
            await client.get_prompt("nearest-by-drive-time", {"place": "Dam 1", "what": "pharmacy"})
    assert names == ["trip-with-stops", "ev-trip"]
    assert refused.value.error.code == -32602
    assert "known: trip-with-stops, ev-trip" in refused.value.error.message


async def test_wrong_prompt_arguments_are_named_all_at_once(config):
    async with Client(server(config)) as client:
        with pytest.raises(MCPError) as refused:
            await client.get_prompt(
                "nearest-by-drive-time", {"place": "x" * (MAX_ARGUMENT_LENGTH + 1), "colour": "red"}
            )
    message = refused.value.error.message
    assert refused.value.error.code == -32602
    assert "colour: unknown" in message and "what: required" in message
    assert f"place: {MAX_ARGUMENT_LENGTH + 1} characters; at most {MAX_ARGUMENT_LENGTH}" in message


async def test_resources_and_templates_are_listed(config):
    async with Client(server(config)) as client:
        resources = {r.uri: r for r in (await client.list_resources()).resources}
        templates = {t.uri_template: t for t in (await client.list_resource_templates()).resource_templates}
    assert {"ui://tomtom-map/app.html", "tomtom://travel-modes", "tomtom://poi-categories"} <= set(map(str, resources))
    assert list(templates) == ["tomtom://poi-categories/{language}"]
    assert resources["tomtom://travel-modes"].mime_type == "application/json"


async def test_travel_modes_are_what_each_backend_takes(config):
    async with Client(server(config)) as client:
        result = await client.read_resource("tomtom://travel-modes")
    modes = json.loads(result.contents[0].text)
    assert modes["tomtom-orbis-maps"]["tomtom-routing"] == ["car"]
    assert modes["tomtom-maps"]["tomtom-routing"] == ["car", "truck", "pedestrian", "bicycle"]
    assert "tomtom-optimize-waypoints" not in modes["tomtom-orbis-maps"]  # not served there
    assert modes["tomtom-maps"]["tomtom-optimize-waypoints"] == ["car", "truck"]


async def test_poi_categories_in_a_language_come_from_tomtom_with_attribution(stub, config):
    stub.route("GET", r"/search/2/poiCategories\.json", json_body=data("poi_categories.json"))
    async with Client(server(config, backend=Backend.GENESIS)) as client:
        result = await client.read_resource("tomtom://poi-categories/de-DE")
    content = result.contents[0]
    index = json.loads(content.text)
    assert content.mime_type == "application/json"
    assert stub.requests[-1].param("language") == "de-DE"
    assert index["categories"]["7326"] == "Pharmacy" and index["categories"]["7315025"] == "Italian"
    assert (index["backend"], index["language"], index["truncated"]) == ("tomtom-maps", "de-DE", False)
    assert index["total"] == index["returned"] == len(data("poi_categories.json")["poiCategories"])
    assert index["attribution"] == "© TomTom"


async def test_the_category_index_is_bounded(stub, config):
    many = {"poiCategories": [{"id": 1000 + i, "name": "n" * 300} for i in range(MAX_INDEX + 5)]}
    stub.route("GET", r"/maps/orbis/places/poiCategories\.json", json_body=many)
    async with Client(server(config)) as client:
        result = await client.read_resource("tomtom://poi-categories")
    index = json.loads(result.contents[0].text)
    assert (index["total"], index["returned"], index["truncated"]) == (MAX_INDEX + 5, MAX_INDEX, True)
    assert max(map(len, index["categories"].values())) == 100
    assert "language" not in stub.requests[-1].query


async def test_a_failed_read_says_why(stub, config):
    stub.route("GET", r"/maps/orbis/places/poiCategories\.json", status=403, json_body={"detailedError": {}})
    async with Client(server(config)) as client:
        with pytest.raises(MCPError) as refused:
            await client.read_resource("tomtom://poi-categories/nl-NL")
        with pytest.raises(MCPError) as bad_tag:
            await client.read_resource("tomtom://poi-categories/%3Cscript%3E")
        with pytest.raises(MCPError) as unknown:
            await client.read_resource("tomtom://nothing")
    assert refused.value.error.data["error"]["code"] == "unauthorized"
    assert bad_tag.value.error.code == -32602 and "not a language tag" in bad_tag.value.error.message
    assert unknown.value.error.code == -32602 and "tomtom://travel-modes" in unknown.value.error.message


async def test_no_category_resources_for_a_caller_without_the_tool(config):
    rules = [ClientRule("*", WidgetOffer.DECLARED, frozenset({"tomtom-poi-categories"}))]
    async with Client(server(config, rules=rules)) as client:
        resources = {str(r.uri) for r in (await client.list_resources()).resources}
        templates = (await client.list_resource_templates()).resource_templates
        with pytest.raises(MCPError):
            await client.read_resource("tomtom://poi-categories")
    assert "tomtom://poi-categories" not in resources and templates == []


@pytest.fixture(scope="module")
def module_stub():
    with TomTomStub() as stub:
        yield stub


async def test_prompts_and_resources_over_http(module_stub):
    module_stub.route("GET", r"/maps/orbis/places/poiCategories\.json", json_body=data("poi_categories.json"))
    with server_process({"TOMTOM_API_BASE_URL": module_stub.base_url}) as base:
        async with http_client(base + "/mcp") as client:
            capabilities = client.server_capabilities
            prompts = [prompt.name for prompt in (await client.list_prompts()).prompts]
            trip = await client.get_prompt("nearest-by-drive-time", {"place": "Dam 1", "what": "pharmacy"})
            resources = {str(r.uri) for r in (await client.list_resources()).resources}
            modes = json.loads((await client.read_resource("tomtom://travel-modes")).contents[0].text)
            index = json.loads((await client.read_resource("tomtom://poi-categories/nl-NL")).contents[0].text)
        async with http_client(base + "/mcp", mode="legacy") as client:  # the handshake era's one-request path
            legacy = [prompt.name for prompt in (await client.list_prompts()).prompts]
            legacy_modes = json.loads((await client.read_resource("tomtom://travel-modes")).contents[0].text)
    assert (legacy, legacy_modes) == (prompts, modes)
    assert capabilities.prompts is not None and capabilities.resources is not None
    assert prompts == ["trip-with-stops", "nearest-by-drive-time", "ev-trip"]
    assert "tomtom-matrix-routing" in trip.messages[0].content.text
    assert {"tomtom://travel-modes", "tomtom://poi-categories"} <= resources
    assert modes["tomtom-orbis-maps"]["tomtom-routing"] == ["car"]
    assert index["categories"]["7326"] == "Pharmacy" and index["attribution"] == "© TomTom, © OpenStreetMap"
    assert module_stub.requests[-1].param("language") == "nl-NL"


async def test_prompts_and_resources_over_stdio(stub):
    stub.route("GET", r"/search/2/poiCategories\.json", json_body=data("poi_categories.json"))
    environment = {
        **os.environ,
        "TOMTOM_API_BASE_URL": stub.base_url,
        "TOMTOM_MAPS_BACKEND": "tomtom-maps",
        "DOTENV_PATH": "/nonexistent",
    }
    params = StdioServerParameters(
        command=sys.executable, args=["manage.py", "mcp_stdio", "--apikey", CANARY_KEY], cwd=str(REPO), env=environment
    )
    async with Client(params, mode="legacy") as client:
        prompt = await client.get_prompt(
            "ev-trip", {"start": "Amsterdam", "destination": "Berlin", "vehicle": "75 kWh"}
        )
        index = json.loads((await client.read_resource("tomtom://poi-categories/fr-FR")).contents[0].text)
    assert "from the vehicle (75 kWh)" in prompt.messages[0].content.text
    assert index["categories"]["7309"] == "Electric Vehicle Station" and index["attribution"] == "© TomTom"
    assert stub.requests[-1].param("language") == "fr-FR" and stub.requests[-1].api_key == CANARY_KEY
