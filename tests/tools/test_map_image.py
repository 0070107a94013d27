"""tomtom-map-image: Static Image on TomTom Maps, raster tiles stitched on Orbis, pins, route and
area drawn on both, returned as MCP image content, bounded in size and tile count.

Tiles are made here with Pillow, one flat colour per tile, so a pixel tells which tile it came
from; pins and lines are checked by the colour at the pixel their position projects to.
"""

import base64
import io
import struct

import orjson
import pytest
from mcp import Client
from mcp.types import ImageContent, TextContent
from PIL import Image as Picture

from governance.client_surface import ClientSurfaces
from protocol.server import build_server
from protocol.service import build_dispatcher
from tests.conftest import CANARY_KEY, CREDIT, DATA, make_config
from tools.context import CallContext
from tools.definitions import map_image
from tools.imaging import canvas, view
from tools.imaging.view import View, fit, tiles_for
from tools.tomtom.backends import Backend

PATH = "/map/1/staticimage"
TILES = r"/maps/orbis/display/raster/tile/.*"
PNG = (DATA / "map_image.png").read_bytes()
AMSTERDAM = [4.9041, 52.3676]
DAM = [4.8932, 52.3731]
CENTRAAL = [4.9003, 52.3791]
BOX = [4.8, 52.33, 4.95, 52.4]


def server(stub, backend: Backend):
    config = make_config(stub)
    return build_server(
        build_dispatcher(),
        lambda ctx: CallContext(config=config, transport="stdio", client_name="pytest", backend=backend),
        surfaces=ClientSurfaces(()),
    )


def flat(colour: tuple[int, int, int], size: tuple[int, int] = (512, 512), kind: str = "PNG") -> bytes:
    out = io.BytesIO()
    Picture.new("RGB", size, colour).save(out, kind)
    return out.getvalue()


def colour_of(x: int, y: int) -> tuple[int, int, int]:
    """A tile's own flat colour, from its grid position (never white, red or blue)."""
    return (40 + (x * 37) % 150, 60 + (y * 53) % 150, 90)


def serve_tiles(stub, at: View) -> None:
    """Each tile `at` needs answered with its own colour."""
    _, tiles = tiles_for(at)
    for tile in tiles:
        path = rf"/maps/orbis/display/raster/tile/{tile.zoom}/{tile.x}/{tile.y}"
        stub.route("GET", path, body=flat(colour_of(tile.x, tile.y)))


def picture(outcome) -> Picture.Image:
    assert outcome.image is not None and outcome.image.mime_type == "image/png", outcome.text
    return Picture.open(io.BytesIO(outcome.image.data)).convert("RGB")


def near(pixel, colour, tolerance: int = 12) -> bool:
    return all(abs(a - b) <= tolerance for a, b in zip(pixel, colour, strict=True))


# TomTom Maps: Static Image


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


async def test_a_bbox_is_sent_with_the_zoom_that_fits_it_and_no_width_or_height(stub, dispatcher, context):
    stub.route("GET", PATH, body=PNG)
    context.backend = Backend.GENESIS
    outcome = await dispatcher.call("tomtom-map-image", {"bbox": BOX, "width": 300, "height": 200}, context)
    assert outcome.data["bbox"] == BOX and outcome.image is not None
    sent = stub.requests[-1]
    assert (sent.param("bbox"), sent.param("center")) == ("4.8,52.33,4.95,52.4", None)
    assert (sent.param("width"), sent.param("height")) == (None, None)  # Static Image sizes the picture to the box
    assert sent.param("zoom") == str(outcome.data["zoom"]) == "11"  # 12 would be 437 px wide, over 300
    assert outcome.data["image"]["width"] == 64  # what TomTom sent back, said as it is


async def test_markers_and_a_path_are_drawn_on_the_static_image(stub, dispatcher, context):
    stub.route("GET", PATH, body=flat((255, 255, 255)))
    context.backend = Backend.GENESIS
    arguments = {
        "center": AMSTERDAM,
        "zoom": 14,
        "markers": [{"position": DAM, "label": "Dam"}],
        "path": [[4.8932, 52.3700], [4.9100, 52.3700]],
    }
    outcome = await dispatcher.call("tomtom-map-image", arguments, context)
    drawn = picture(outcome)
    at = View.centred(AMSTERDAM, 14, 512, 512)
    x, y = at.pixel(*DAM)
    assert near(drawn.getpixel((round(x), round(y))), canvas.MARKER)
    x, y = at.pixel(4.9016, 52.3700)  # halfway along the line
    assert near(drawn.getpixel((round(x), round(y))), canvas.ROUTE)
    assert drawn.getpixel((5, 5)) == (255, 255, 255)  # the rest is TomTom's picture
    assert outcome.data["markers"] == {"count": 1, "labels": ["Dam"]} and outcome.data["path"] == {"points": 2}
    assert "markers" not in stub.requests[-1].query  # Static Image draws nothing itself


async def test_with_no_view_the_picture_frames_what_is_drawn(stub, dispatcher, context):
    stub.route("GET", PATH, body=PNG)
    context.backend = Backend.GENESIS
    outcome = await dispatcher.call(
        "tomtom-map-image", {"markers": [{"position": DAM}, {"position": CENTRAAL}]}, context
    )
    sent = stub.requests[-1]
    lon, lat = (float(v) for v in sent.param("center").split(","))
    assert DAM[0] < lon < CENTRAAL[0] and DAM[1] < lat < CENTRAAL[1]
    assert (sent.param("width"), sent.param("height"), sent.param("zoom")) == ("512", "512", "15")
    assert outcome.data["markers"] == {"count": 2}


@pytest.mark.parametrize(
    ("arguments", "named"),
    [
        ({}, ["center", "bbox"]),
        ({"center": AMSTERDAM, "bbox": BOX}, ["center", "bbox"]),
        ({"bbox": BOX, "zoom": 3}, ["zoom", "center"]),
    ],
)
async def test_one_view_is_asked_for(stub, dispatcher, context, arguments, named):
    context.backend = Backend.GENESIS
    error = (await dispatcher.call("tomtom-map-image", arguments, context)).data["error"]
    assert (error["code"], error["arguments"]) == ("invalid_arguments", named)
    assert stub.requests == []


@pytest.mark.parametrize(
    ("arguments", "argument", "says"),
    [
        ({"center": AMSTERDAM, "width": 4096}, "width", "1024"),
        ({"markers": [{"position": DAM}] * 21}, "markers", "20"),
        ({"path": [DAM] * 2001}, "path", "2000"),
        ({"area": [DAM, CENTRAAL]}, "area", "3"),
        ({"markers": [{"position": DAM, "label": "x" * 41}]}, "markers[0].label", "40"),
    ],
)
async def test_sizes_and_drawings_are_bounded(stub, dispatcher, context, arguments, argument, says):
    error = (await dispatcher.call("tomtom-map-image", arguments, context)).data["error"]
    assert (error["code"], error["argument"]) == ("invalid_arguments", argument)
    assert says in error["message"] and stub.requests == []


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


# Orbis: Map Display v2 raster tiles, stitched here


async def test_a_text_only_orbis_client_is_listed_the_tool_and_gets_a_stitched_picture(stub):
    at = View.centred(AMSTERDAM, 14, 512, 512)
    serve_tiles(stub, at)
    async with Client(server(stub, Backend.ORBIS)) as client:  # no MCP Apps: text only
        assert "tomtom-map-image" in [t.name for t in (await client.list_tools()).tools]
        result = await client.call_tool("tomtom-map-image", {"center": AMSTERDAM, "zoom": 14})
    assert not result.is_error, result.content
    text, image = result.content
    assert isinstance(text, TextContent) and isinstance(image, ImageContent)
    drawn = Picture.open(io.BytesIO(base64.b64decode(image.data)))
    assert (image.mime_type, drawn.format, drawn.size) == ("image/png", "PNG", (512, 512))
    assert (
        orjson.loads(text.text)
        == {
            "image": {"format": "png", "width": 512, "height": 512, "bytes": len(base64.b64decode(image.data))},
            "center": AMSTERDAM,
            "zoom": 14,
        }
        | CREDIT[Backend.ORBIS]
    )
    _, tiles = tiles_for(at)
    asked = sorted(
        (r.path, r.headers.get("tomtom-api-version"), r.param("style"), r.param("tileSize")) for r in stub.requests
    )
    expected = sorted(
        (f"/maps/orbis/display/raster/tile/13/{t.x}/{t.y}", "2", "street-light", "512") for t in tiles
    )  # zoom 14's scale is 512-pixel tiles at 13
    assert asked == expected and len(asked) <= 9
    assert all(r.headers.get("tomtom-api-key") == CANARY_KEY and "key" not in r.query for r in stub.requests)
    assert {r.headers.get("accept") for r in stub.requests} == {"image/png, image/jpeg"}


async def test_each_tile_lands_where_its_ground_is(stub, dispatcher, context):
    at = View.centred(AMSTERDAM, 14, 300, 200)
    serve_tiles(stub, at)
    drawn = picture(
        await dispatcher.call(
            "tomtom-map-image", {"center": AMSTERDAM, "zoom": 14, "width": 300, "height": 200}, context
        )
    )
    assert drawn.size == (300, 200)
    _, tiles = tiles_for(at)
    for tile in tiles:
        x = min(max(tile.left + 256, 0), 299)  # a pixel inside the tile, within the picture
        y = min(max(tile.top + 256, 0), 150)  # above the credit band
        if tile.left <= x < tile.left + 512 and tile.top <= y < tile.top + 512:
            assert drawn.getpixel((x, y)) == colour_of(tile.x, tile.y), tile


async def test_the_credit_is_drawn_in_the_corner(stub, dispatcher, context):
    at = View.centred(AMSTERDAM, 12, 512, 512)
    serve_tiles(stub, at)
    drawn = picture(await dispatcher.call("tomtom-map-image", {"center": AMSTERDAM}, context))
    corner = drawn.crop((drawn.width - 150, drawn.height - 16, drawn.width, drawn.height))
    assert any(pixel == canvas.INK for pixel in corner.get_flattened_data())  # the credit's text
    assert canvas.INK not in drawn.crop((0, 0, 200, 200)).get_flattened_data()


async def test_markers_route_and_area_are_drawn_on_orbis(stub, dispatcher, context):
    area = [[4.88, 52.36], [4.89, 52.36], [4.89, 52.365], [4.88, 52.365]]
    path = [[4.895, 52.37], [4.91, 52.37]]
    arguments = {
        "center": AMSTERDAM,
        "zoom": 14,
        "markers": [{"position": DAM, "label": "Dam"}],
        "path": path,
        "area": area,
    }
    at = View.centred(AMSTERDAM, 14, 512, 512)
    serve_tiles(stub, at)
    outcome = await dispatcher.call("tomtom-map-image", arguments, context)
    drawn = picture(outcome)
    x, y = at.pixel(*DAM)
    assert near(drawn.getpixel((round(x), round(y))), canvas.MARKER)
    x, y = at.pixel(4.9025, 52.37)
    assert near(drawn.getpixel((round(x), round(y))), canvas.ROUTE)
    x, y = at.pixel(4.885, 52.3625)  # inside the area: the tile's colour, shaded
    _, tiles = tiles_for(at)
    under = next(colour_of(t.x, t.y) for t in tiles if t.left <= x < t.left + 512 and t.top <= y < t.top + 512)
    shaded = drawn.getpixel((round(x), round(y)))
    assert shaded != under and near(shaded, under, tolerance=60)
    assert (
        outcome.data
        == {
            "image": outcome.data["image"],
            "center": AMSTERDAM,
            "zoom": 14,
            "markers": {"count": 1, "labels": ["Dam"]},
            "path": {"points": 2},
            "area": {"points": 4},
        }
        | CREDIT[Backend.ORBIS]
    )


async def test_a_bbox_on_orbis_is_fitted_into_the_asked_size(stub, dispatcher, context):
    at = fit(BOX, 300, 200)
    serve_tiles(stub, at)
    outcome = await dispatcher.call("tomtom-map-image", {"bbox": BOX, "width": 300, "height": 200}, context)
    assert picture(outcome).size == (300, 200)
    assert (outcome.data["bbox"], outcome.data["zoom"]) == (BOX, 11)
    assert {r.path.split("/")[-3] for r in stub.requests} == {"10"}


async def test_the_largest_picture_needs_at_most_nine_tiles(stub, dispatcher, context):
    stub.route("GET", TILES, body=flat((200, 200, 200)))
    arguments = {"center": [4.9, 52.37], "zoom": 17, "width": 1024, "height": 1024}
    outcome = await dispatcher.call("tomtom-map-image", arguments, context)
    assert picture(outcome).size == (1024, 1024)
    paths = [r.path for r in stub.requests]
    assert len(paths) == len(set(paths)) <= 9


async def test_a_view_over_the_tile_bound_is_refused_before_any_request(stub, dispatcher, context, monkeypatch):
    monkeypatch.setattr(view, "MAX_TILES", 1)
    outcome = await dispatcher.call("tomtom-map-image", {"center": AMSTERDAM, "width": 1024}, context)
    error = outcome.data["error"]
    assert error["code"] == "invalid_arguments" and "at most 1" in error["message"]
    assert stub.requests == []


@pytest.mark.parametrize(
    ("body", "says"),
    [
        (b'{"detailedError": {"code": "OK"}}', "not a PNG or JPEG"),
        (b"GIF89a" + b"\0" * 64, "not a PNG or JPEG"),
        (canvas.PNG_SIGNATURE + b"\0" * 64, "could not be decoded"),
        (flat((1, 2, 3), size=(2048, 8)), "over 1024 pixels"),
    ],
)
async def test_a_tile_that_is_not_a_picture_is_malformed(stub, dispatcher, context, body, says):
    stub.route("GET", TILES, body=body)
    outcome = await dispatcher.call("tomtom-map-image", {"center": AMSTERDAM}, context)
    error = outcome.data["error"]
    assert error["code"] == "malformed" and says in error["message"] and outcome.image is None


async def test_jpeg_tiles_are_taken_too(stub, dispatcher, context):
    stub.route("GET", TILES, body=flat((120, 160, 90), kind="JPEG"))
    drawn = picture(await dispatcher.call("tomtom-map-image", {"center": AMSTERDAM}, context))
    assert near(drawn.getpixel((100, 100)), (120, 160, 90), tolerance=4)


async def test_a_tile_tomtom_fails_fails_the_picture(stub, dispatcher, context):
    stub.route("GET", TILES, body=flat((200, 200, 200)))
    stub.route("GET", r"/maps/orbis/display/raster/tile/11/1052/673", status=500, json_body={"detailedError": {}})
    outcome = await dispatcher.call("tomtom-map-image", {"center": AMSTERDAM}, context)  # zoom 12: tiles at 11
    assert outcome.data["error"]["code"] == "unavailable" and outcome.image is None
