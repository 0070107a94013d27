"""tomtom-data-viz and tomtom-get-app-data: the caller's GeoJSON, its download safety, and the
widget's second fetch.

Downloads never leave loopback: the resolver is a stand-in that answers what each test needs,
and a connector sends the pinned (public) address to a local HTTPS server with its own
certificate authority. So these tests prove what our code does with what DNS answers (refusals,
pinning, TLS on the name, limits); they do not prove anything about real DNS or the internet.
"""

from __future__ import annotations

import ipaddress
import logging

import orjson
import pytest

from protocol.appdata import APP_DATA_KEY
from protocol.service import build_dispatcher
from tests.conftest import make_config
from tests.support import logs
from tests.support.https_server import LocalHttps
from tools.context import CallContext
from tools.definitions import data_viz
from tools.download import DownloadPolicy, system_resolve
from tools.shaping.appdata import decode

GEOJSON = (
    '{"type":"FeatureCollection","features":['
    '{"type":"Feature","geometry":{"type":"Point","coordinates":[4.9,52.37]},"properties":{"name":"Dam","pop":10}},'
    '{"type":"Feature","geometry":{"type":"Point","coordinates":[5.12,52.09]},"properties":{"name":"Dom","pop":30}},'
    '{"type":"Feature","geometry":{"type":"Polygon","coordinates":[[[4.8,52.3],[4.95,52.3],[4.9,52.4],[4.8,52.3]]]},'
    '"properties":{"name":"Zone"}}]}'
)
LAYERS = [{"type": "markers", "color_property": "pop"}, {"type": "choropleth", "color_property": "density"}]
PUBLIC = "93.184.215.14"


def app_status(caplog) -> list[dict]:
    return logs.app_status(caplog.records)


def context_with(stub, **policy) -> CallContext:
    return CallContext(
        config=make_config(stub, downloads=DownloadPolicy(**policy)),
        transport="http",
        client_name="Claude",
        user_agent="Claude-User",
    )


def resolver(answers: dict[str, list[str]], asked: list[str] | None = None):
    async def resolve(host: str, port: int) -> list[str]:
        if asked is not None:
            asked.append(host)
        return answers.get(host, [])

    return resolve


@pytest.fixture
def https():
    with LocalHttps(["data.example", "localhost"]) as server:
        server.files["/data.geojson"] = (200, GEOJSON.encode(), {"Content-Type": "application/geo+json"}, 0.0)
        yield server


def over_https(stub, https: LocalHttps, dialled: list[str] | None = None, **policy) -> CallContext:
    def connect(address: str, port: int) -> tuple[str, int]:
        if dialled is not None:
            dialled.append(address)
        return "127.0.0.1", https.port

    return context_with(
        stub, resolve=resolver({"data.example": [PUBLIC]}), connect=connect, ssl_context=https.ssl_context(), **policy
    )


# --- the tool ----------------------------------------------------------------------------------


async def test_inline_geojson_summary_and_untouched_app_data(dispatcher, context):
    outcome = await dispatcher.call(
        "tomtom-data-viz", {"geojson": GEOJSON, "layers": LAYERS, "title": "Towns"}, context
    )
    assert not outcome.is_error, outcome.text
    text = orjson.loads(outcome.text)
    assert text == {
        "features": 3,
        "geometry_types": {"Point": 2, "Polygon": 1},
        "title": "Towns",
        "bbox": [4.8, 52.09, 5.12, 52.4],
        "properties": ["name", "pop"],
        "layers": ["markers", "choropleth"],
        "notes": ["layers[1].color_property: no feature has the property 'density'"],
        "show_ui": True,
        "tool": "tomtom-data-viz",
    }
    app_data = decode(outcome.meta[APP_DATA_KEY])["data_viz"]
    assert app_data == {"title": "Towns", "layers": LAYERS, "geojson": GEOJSON}


async def test_without_show_ui_there_is_no_app_data(dispatcher, context):
    outcome = await dispatcher.call(
        "tomtom-data-viz", {"geojson": GEOJSON, "layers": LAYERS, "show_ui": False}, context
    )
    assert outcome.meta == {"show_ui": False, "tool": "tomtom-data-viz", "request_id": context.request_id}


@pytest.mark.parametrize(
    ("arguments", "named", "message"),
    [
        ({"layers": LAYERS}, ["data_url", "geojson"], "give the data to draw"),
        (
            {"geojson": GEOJSON, "data_url": "https://data.example/x", "layers": LAYERS},
            ["data_url", "geojson"],
            "give the data once",
        ),
        ({"geojson": "{not json", "layers": LAYERS}, "geojson", "geojson: is not JSON"),
        ({"geojson": '{"type": "Topology"}', "layers": LAYERS}, "geojson", "is not GeoJSON"),
        (
            {
                "geojson": '{"type":"FeatureCollection","features":[{"type":"Feature","geometry":{"type":"Blob"}}]}',
                "layers": LAYERS,
            },
            "geojson",
            "feature 0 is not a GeoJSON Feature",
        ),
        (
            {"geojson": GEOJSON, "layers": [{"type": "markers"}] * 11},
            "layers",
            "layers: should have at most 10 items",
        ),
        ({"geojson": GEOJSON, "layers": [{"type": "pie"}]}, "layers[0].type", "layers[0].type: 'pie' is not one of"),
        ({"geojson": GEOJSON, "layers": [{"type": "fill", "fill_opacity": 2}]}, "layers[0].fill_opacity", "less than"),
        (
            {"geojson": GEOJSON, "layers": [{"type": "line", "filter_property": "k", "filter_values": ["a", True]}]},
            "layers[0].filter_values[1]",
            "layers[0].filter_values[1]: should be text or a number",
        ),
        (
            {"geojson": GEOJSON, "layers": [{"type": "line", "filter_property": "k", "filter_values": [1e16]}]},
            "layers[0].filter_values[0]",
            "should be a number from",
        ),
        (
            {"geojson": GEOJSON, "layers": [{"type": "markers", "colour": "red"}]},
            "layers[0].colour",
            "unknown argument",
        ),
    ],
)
async def test_clear_errors_for_bad_input(dispatcher, context, arguments, named, message):
    outcome = await dispatcher.call("tomtom-data-viz", arguments, context)
    error = outcome.data["error"]
    assert error["code"] == "invalid_arguments"
    assert error.get("argument", error.get("arguments")) == named
    assert message in error["message"]


async def test_layers_reach_the_widget_as_given(dispatcher, context):
    layer = {"type": "line", "line_width": 2, "filter_property": "name", "filter_values": ["Dam", 3, 2.5]}
    outcome = await dispatcher.call("tomtom-data-viz", {"geojson": GEOJSON, "layers": [layer]}, context)
    assert decode(outcome.meta[APP_DATA_KEY])["data_viz"]["layers"] == [layer], "no defaults are added"


async def test_too_many_features(dispatcher, context, monkeypatch):
    monkeypatch.setattr(data_viz, "MAX_FEATURES", 2)
    outcome = await dispatcher.call("tomtom-data-viz", {"geojson": GEOJSON, "layers": LAYERS}, context)
    assert outcome.data["error"]["message"] == "geojson: has 3 features; at most 2 are drawn"


# --- downloads ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("http://data.example/x.geojson", "only https URLs are downloaded, not http"),
        ("ftp://data.example/x.geojson", "only https URLs are downloaded, not ftp"),
        ("https://user:secret@data.example/x.geojson", "must not carry a user name or password"),
        ("https://token@data.example/x.geojson", "must not carry a user name or password"),
        ("https:///x.geojson", "has no host name"),
        ("https://data.example:port/x", "has a port that is not a number"),
    ],
)
async def test_urls_that_are_refused_before_any_lookup(stub, dispatcher, url, message):
    asked: list[str] = []
    context = context_with(stub, resolve=resolver({}, asked))
    outcome = await dispatcher.call("tomtom-data-viz", {"data_url": url, "layers": LAYERS}, context)
    error = outcome.data["error"]
    assert (error["code"], error["argument"]) == ("invalid_arguments", "data_url")
    assert error["message"].startswith(f"data_url: {message}")
    assert "secret" not in outcome.text and "token" not in outcome.text
    assert asked == []


@pytest.mark.parametrize(
    ("host", "message"),
    [
        ("a..example", "is not one DNS can look up"),
        (".example", "is not one DNS can look up"),
        ("a" * 64 + ".example", "is not one DNS can look up"),
        ("data." + "b" * 64, "is not one DNS can look up"),
        ("\u00e9" * 60 + ".example", "has no ASCII form (IDNA)"),
        ("join\u200ded.example", "has no ASCII form (IDNA)"),
    ],
    ids=[
        "empty label",
        "empty first label",
        "64-character label",
        "64-character last label",
        "long once encoded",
        "a joiner",
    ],
)
async def test_host_names_that_cannot_be_encoded_are_refused_before_any_lookup(stub, dispatcher, host, message):
    """Names the system resolver's IDNA encoding refuses (a UnicodeError, before any query)."""
    asked: list[str] = []

    async def resolve(name: str, port: int) -> list[str]:
        asked.append(name)
        return await system_resolve(name, port)

    context = context_with(stub, resolve=resolve)
    outcome = await dispatcher.call(
        "tomtom-data-viz", {"data_url": f"https://{host}/d.geojson", "layers": LAYERS}, context
    )
    error = outcome.data["error"]
    assert (error["code"], error["argument"]) == ("invalid_arguments", "data_url")
    assert message in error["message"]
    assert asked == []


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("https://exa mple.example/d", "is not one DNS can look up"),
        ("https://exa!mple.example/d", "is not one DNS can look up"),
        ("https://" + ".".join(["a" * 50] * 5) + "/d", "is not one DNS can look up"),
        ("https://[::1/d", "is not a URL"),
        ("https://exa\uff0fmple.example/d", "is not a URL"),
    ],
    ids=["a space", "a punctuation mark", "254 characters", "an unclosed bracket", "a slash once normalised"],
)
async def test_urls_whose_host_dns_cannot_carry_are_refused_before_any_lookup(stub, dispatcher, url, message):
    asked: list[str] = []
    context = context_with(stub, resolve=resolver({}, asked))
    outcome = await dispatcher.call("tomtom-data-viz", {"data_url": url, "layers": LAYERS}, context)
    error = outcome.data["error"]
    assert (error["code"], error["argument"]) == ("invalid_arguments", "data_url")
    assert message in error["message"]
    assert asked == []


async def test_an_internationalised_name_and_path_are_fetched_in_their_ascii_form(stub, dispatcher):
    """The lookup, TLS (SNI and the certificate) and `Host` get the name's ASCII form; the path
    goes percent-encoded as UTF-8, an escape already there kept as it is."""
    asked: list[str] = []
    with LocalHttps(["xn--bcher-kva.example"]) as https:
        https.files["/donn%C3%A9es%20v2.geojson?v=%C3%A9t%C3%A9"] = (200, GEOJSON.encode(), {}, 0.0)
        context = context_with(
            stub,
            resolve=resolver({"xn--bcher-kva.example": [PUBLIC]}, asked),
            connect=lambda address, port: ("127.0.0.1", https.port),
            ssl_context=https.ssl_context(),
        )
        outcome = await dispatcher.call(
            "tomtom-data-viz",
            {
                "data_url": "https://B\u00dccher.example\u3002/donn\u00e9es%20v2.geojson?v=\u00e9t\u00e9#top",
                "layers": LAYERS,
            },
            context,
        )
    assert not outcome.is_error, outcome.text
    assert asked == ["xn--bcher-kva.example"]
    (seen,) = https.seen
    assert (seen.host, seen.server_name) == ("xn--bcher-kva.example", "xn--bcher-kva.example")
    assert seen.path == "/donn%C3%A9es%20v2.geojson?v=%C3%A9t%C3%A9"


@pytest.mark.parametrize(
    "addresses",
    [
        ["127.0.0.1"],
        ["10.1.2.3"],
        ["192.168.1.10"],
        ["169.254.169.254"],
        ["100.64.0.1"],
        ["0.0.0.0"],
        ["224.0.0.251"],
        ["::1"],
        ["fd00::1"],
        ["fe80::1%eth0"],
        ["::ffff:127.0.0.1"],
        [PUBLIC, "10.0.0.5"],
        ["ff02::1"],
        ["192.0.2.1"],
        ["64:ff9b::7f00:1"],
        ["2002:7f00:1::1"],
        ["2001:0:4136:e378:8000:63bf:3fff:fdd2"],
        ["198.18.0.1"],
    ],
)
async def test_hosts_that_resolve_inside_are_refused(stub, dispatcher, addresses):
    context = context_with(stub, resolve=resolver({"data.example": addresses}))
    outcome = await dispatcher.call(
        "tomtom-data-viz", {"data_url": "https://data.example/d.geojson", "layers": LAYERS}, context
    )
    error = outcome.data["error"]
    assert error["code"] == "invalid_arguments" and error["argument"] == "data_url"
    assert "which is not a public address" in error["message"]


async def test_an_unknown_host(stub, dispatcher):
    context = context_with(stub, resolve=resolver({}))
    outcome = await dispatcher.call(
        "tomtom-data-viz", {"data_url": "https://nowhere.example/d", "layers": LAYERS}, context
    )
    assert outcome.data["error"]["message"] == "data_url: the host nowhere.example could not be found"


async def test_a_pinned_download(stub, dispatcher, https):
    asked: list[str] = []
    context = context_with(
        stub,
        resolve=resolver({"data.example": [PUBLIC]}, asked),
        connect=lambda address, port: ("127.0.0.1", https.port),
        ssl_context=https.ssl_context(),
    )
    outcome = await dispatcher.call(
        "tomtom-data-viz", {"data_url": "https://data.example/data.geojson", "layers": LAYERS}, context
    )
    assert not outcome.is_error, outcome.text
    assert orjson.loads(outcome.text)["features"] == 3
    assert decode(outcome.meta[APP_DATA_KEY])["data_viz"]["geojson"] == GEOJSON
    assert asked == ["data.example"], "the name is looked up once"
    (seen,) = https.seen
    assert (seen.host, seen.server_name, seen.path) == ("data.example", "data.example", "/data.geojson")


async def test_the_connection_goes_to_the_address_that_was_checked(stub, dispatcher, https):
    dialled: list[str] = []
    outcome = await dispatcher.call(
        "tomtom-data-viz",
        {"data_url": "https://data.example/data.geojson", "layers": LAYERS},
        over_https(stub, https, dialled),
    )
    assert not outcome.is_error
    assert dialled == [PUBLIC]


async def test_an_allowed_private_network(stub, dispatcher, https):
    context = context_with(
        stub,
        resolve=resolver({"data.example": ["10.9.8.7"]}),
        connect=lambda a, p: ("127.0.0.1", https.port),
        ssl_context=https.ssl_context(),
        allowed_networks=(ipaddress.ip_network("10.0.0.0/8"),),
    )
    outcome = await dispatcher.call(
        "tomtom-data-viz", {"data_url": "https://data.example/data.geojson", "layers": LAYERS}, context
    )
    assert not outcome.is_error, outcome.text


async def test_an_untrusted_certificate(stub, dispatcher, https):
    context = context_with(
        stub, resolve=resolver({"data.example": [PUBLIC]}), connect=lambda a, p: ("127.0.0.1", https.port)
    )
    outcome = await dispatcher.call(
        "tomtom-data-viz", {"data_url": "https://data.example/data.geojson", "layers": LAYERS}, context
    )
    assert outcome.data["error"]["code"] == "unavailable"
    assert "certificate" in outcome.data["error"]["message"]


async def test_a_certificate_for_another_name(stub, dispatcher, https):
    context = context_with(
        stub,
        resolve=resolver({"other.example": [PUBLIC]}),
        connect=lambda a, p: ("127.0.0.1", https.port),
        ssl_context=https.ssl_context(),
    )
    outcome = await dispatcher.call(
        "tomtom-data-viz", {"data_url": "https://other.example/data.geojson", "layers": LAYERS}, context
    )
    assert outcome.data["error"]["code"] == "unavailable"
    assert "certificate" in outcome.data["error"]["message"]


@pytest.mark.parametrize(
    ("file", "policy", "code", "message"),
    [
        ((200, b"x" * 5000, {}, 0.0), {"max_bytes": 1000}, "invalid_arguments", "the file is larger than"),
        (
            (200, b"x" * 5000, {"Content-Length": "999999999"}, 0.0),
            {"max_bytes": 1000},
            "invalid_arguments",
            "the file is larger than",
        ),
        ((302, b"", {"Location": "https://10.0.0.1/x"}, 0.0), {}, "invalid_arguments", "redirects are not followed"),
        ((404, b"", {}, 0.0), {}, "invalid_arguments", "answered 404"),
        ((503, b"", {}, 0.0), {}, "unavailable", "it answered 503"),
        ((200, GEOJSON.encode(), {}, 1.5), {"timeout": 0.3}, "unavailable", "the download took longer than 0.3 s"),
        ((200, b"\xff\xfe{}", {}, 0.0), {}, "invalid_arguments", "not UTF-8"),
    ],
)
async def test_download_limits(stub, dispatcher, https, file, policy, code, message):
    https.files["/f"] = file
    outcome = await dispatcher.call(
        "tomtom-data-viz", {"data_url": "https://data.example/f", "layers": LAYERS}, over_https(stub, https, **policy)
    )
    assert outcome.data["error"]["code"] == code
    assert message in outcome.data["error"]["message"]


# --- tomtom-get-app-data ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("reason", "message", "fields"),
    [
        ("too_large", "App data fetched", {"source": "data_url", "raw_bytes": len(GEOJSON)}),
        ("host_dropped", "App data fetched: host dropped it", {"source": "data_url"}),
        ("decode_failed", "App data fetched: app failed to decode it", {"source": "data_url", "error": "bad gzip"}),
    ],
)
async def test_the_data_viz_widget_fetches_its_data_again(stub, https, caplog, reason, message, fields):
    caplog.set_level(logging.INFO)
    dispatcher = build_dispatcher()
    arguments = {"data_url": "https://data.example/data.geojson", "layers": LAYERS, "title": "Towns"}
    call = {"tool": "tomtom-data-viz", "arguments": arguments, "reason": reason}
    if reason == "decode_failed":
        call["error"] = "bad gzip"
    outcome = await dispatcher.call("tomtom-get-app-data", call, over_https(stub, https))
    assert not outcome.is_error, outcome.text
    answer = orjson.loads(outcome.text)
    assert decode(answer["app_data"]) == {"data_viz": {"title": "Towns", "layers": LAYERS, "geojson": GEOJSON}}
    (line,) = app_status(caplog)
    assert line["message"] == message and line["tool"] == "tomtom-data-viz"
    assert (line["client"], line["user_agent"]) == ("Claude", "Claude-User")
    assert {k: line[k] for k in fields} == fields


@pytest.mark.parametrize(
    ("call", "code"),
    [
        ({"tool": "tomtom-routing", "arguments": {"layers": LAYERS}, "reason": "host_dropped"}, "invalid_arguments"),
        ({"tool": "tomtom-data-viz", "arguments": {"geojson": GEOJSON}, "reason": "host_dropped"}, "invalid_arguments"),
        (
            {"tool": "tomtom-data-viz", "arguments": {"geojson": "nope", "layers": LAYERS}, "reason": "too_large"},
            "invalid_arguments",
        ),
        (
            {
                "tool": "tomtom-data-viz",
                "arguments": {"data_url": "https://data.example/gone", "layers": LAYERS},
                "reason": "too_large",
            },
            "invalid_arguments",
        ),
    ],
)
async def test_a_failed_fetch_is_logged_and_answered(stub, https, caplog, call, code):
    caplog.set_level(logging.INFO)
    outcome = await build_dispatcher().call("tomtom-get-app-data", call, over_https(stub, https))
    assert outcome.data["error"]["code"] == code
    (line,) = app_status(caplog)
    assert line["message"] == "App data fetch failed" and line["tool"] == call["tool"]
    assert line["error_code"] == code and line["error"] == outcome.data["error"]["message"]


@pytest.mark.parametrize(
    ("arguments", "named", "message"),
    [
        ({"geojson": GEOJSON, "layers": [{"type": "pie"}]}, "arguments.layers[0].type", "arguments.layers[0].type: "),
        ({"layers": LAYERS}, ["arguments.data_url", "arguments.geojson"], "give the data to draw"),
        ({"geojson": "nope", "layers": LAYERS}, "arguments.geojson", "arguments.geojson: is not JSON"),
        ({"geojson": GEOJSON, "layers": LAYERS, "locations": []}, "arguments.locations", "unknown argument"),
    ],
)
async def test_errors_name_the_data_viz_input_inside_arguments(stub, https, arguments, named, message):
    call = {"tool": "tomtom-data-viz", "arguments": arguments, "reason": "too_large"}
    outcome = await build_dispatcher().call("tomtom-get-app-data", call, over_https(stub, https))
    error = outcome.data["error"]
    assert error["code"] == "invalid_arguments"
    assert error.get("argument", error.get("arguments")) == named
    assert message in error["message"]


async def test_a_tomtom_tools_data_is_never_made_again(stub, https, caplog):
    outcome = await build_dispatcher().call(
        "tomtom-get-app-data",
        {"tool": "tomtom-routing", "arguments": {"locations": [[4.9, 52.3], [5.1, 52.1]]}, "reason": "host_dropped"},
        over_https(stub, https),
    )
    assert outcome.data["error"]["argument"] == "tool"
    assert "only tomtom-data-viz app data can be made again" in outcome.data["error"]["message"]
    assert stub.requests == [] and https.seen == []
