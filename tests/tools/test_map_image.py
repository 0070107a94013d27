"""tomtom-map-image: Static Image on TomTom Maps, returned as MCP image content, bounded in size."""

import base64
import struct

import orjson
import pytest
from mcp import Client

from governance.client_surface import ClientSurfaces
from protocol.server import build_server
from protocol.service import build_dispatcher
from tests.conftest import CANARY_KEY, CREDIT, DATA, make_config
from tools.context import CallContext
from tools.definitions import map_image
from tools.tomtom.backends import Backend

PATH = "/map/1/staticimage"
PNG = (DATA / "map_image.png").read_bytes()
AMSTERDAM = [4.9041, 52.3676]


def server(stub, backend: Backend):
    config = make_config(stub)
    return build_server(
        build_dispatcher(),
        lambda ctx: CallContext(config=config, transport="stdio", client_name="pytest", backend=backend),
        surfaces=ClientSurfaces(()),
    )


async def test_a_text_only_host_gets_the_image_as_image_content(stub):
    stub.route("GET", PATH, body=PNG)
    async with Client(server(stub, Backend.GENESIS)) as client:  # no MCP Apps: text only
        assert "tomtom-map-image" in [t.name for t in (await client.list_tools()).tools]
        result = await client.call_tool("tomtom-map-image", {"center": AMSTERDAM, "zoom": 14})
    assert not result.is_error
    text, image = result.content
    assert (image.type, image.mime_type, base64.b64decode(image.data)) == ("image", "image/png", PNG)
    assert (
        orjson.loads(text.text)
        == {
            "image": {"format": "png", "width": 64, "height": 48, "bytes": len(PNG)},
            "center": AMSTERDAM,
            "zoom": 14,
        }
        | CREDIT[Backend.GENESIS]
    )
    assert stub.requests[-1].query == {
        "layer": ["basic"],
        "style": ["main"],
        "format": ["png"],
        "width": ["512"],
        "height": ["512"],
        "center": ["4.9041,52.3676"],
        "zoom": ["14"],
        "key": [CANARY_KEY],
    }


async def test_a_bbox_is_sent_instead_of_center_and_zoom(stub, dispatcher, context):
    stub.route("GET", PATH, body=PNG)
    context.backend = Backend.GENESIS
    box = [4.8, 52.33, 4.95, 52.4]
    outcome = await dispatcher.call("tomtom-map-image", {"bbox": box, "width": 300, "height": 200}, context)
    assert outcome.data["bbox"] == box and outcome.image is not None
    sent = stub.requests[-1]
    assert (sent.param("bbox"), sent.param("center"), sent.param("zoom")) == ("4.8,52.33,4.95,52.4", None, None)
    assert (sent.param("width"), sent.param("height")) == ("300", "200")


@pytest.mark.parametrize(
    ("arguments", "named"),
    [
        ({}, ["center", "bbox"]),
        ({"center": AMSTERDAM, "bbox": [4.8, 52.33, 4.95, 52.4]}, ["center", "bbox"]),
        ({"bbox": [4.8, 52.33, 4.95, 52.4], "zoom": 3}, ["zoom", "center"]),
    ],
)
async def test_one_view_is_asked_for(stub, dispatcher, context, arguments, named):
    context.backend = Backend.GENESIS
    error = (await dispatcher.call("tomtom-map-image", arguments, context)).data["error"]
    assert (error["code"], error["arguments"]) == ("invalid_arguments", named)
    assert stub.requests == []


async def test_sides_are_bounded(stub, dispatcher, context):
    context.backend = Backend.GENESIS
    error = (await dispatcher.call("tomtom-map-image", {"center": AMSTERDAM, "width": 4096}, context)).data["error"]
    assert (error["code"], error["argument"]) == ("invalid_arguments", "width")
    assert "1024" in error["message"]


async def test_an_image_over_the_size_limit_is_not_passed_on(stub, dispatcher, context, monkeypatch):
    monkeypatch.setattr(map_image, "MAX_IMAGE_BYTES", len(PNG) - 1)
    stub.route("GET", PATH, body=PNG)
    context.backend = Backend.GENESIS
    outcome = await dispatcher.call("tomtom-map-image", {"center": AMSTERDAM}, context)
    assert outcome.data["error"]["code"] == "malformed" and outcome.image is None


@pytest.mark.parametrize("body", [b'{"error": "no"}', b"GIF89a....", PNG[:20]])
async def test_what_is_not_a_png_is_malformed(stub, dispatcher, context, body):
    stub.route("GET", PATH, body=body)
    context.backend = Backend.GENESIS
    outcome = await dispatcher.call("tomtom-map-image", {"center": AMSTERDAM}, context)
    assert outcome.data["error"]["code"] == "malformed"
    assert "not a PNG" in outcome.data["error"]["message"]


def test_the_header_gives_the_size():
    assert map_image.png(PNG)[1:] == struct.unpack(">II", PNG[16:24]) == (64, 48)


async def test_not_listed_on_orbis_and_answered_with_what_to_do(stub):
    async with Client(server(stub, Backend.ORBIS)) as client:
        assert "tomtom-map-image" not in [t.name for t in (await client.list_tools()).tools]
        result = await client.call_tool("tomtom-map-image", {"center": AMSTERDAM})
    error = orjson.loads(result.content[0].text)["error"]
    assert error["code"] == "unsupported" and "tomtom-dynamic-map" in error["message"]
    assert len(result.content) == 1 and stub.requests == []
