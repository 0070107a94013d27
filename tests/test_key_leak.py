"""The canary: a key sent through every tool and path must never come back anywhere else.

It must reach TomTom (in the `TomTom-Api-Key` header on Orbis, as the `key` parameter on TomTom
Maps) and nothing more: not a result, not an error, not a log line, not a response header, not
a trace — even when TomTom echoes it back in an answer.
"""

import json
import logging

import pytest

from protocol.service import build_dispatcher
from tests.conftest import CANARY_KEY, data, make_config
from tests.support import logs
from tools.context import CallContext
from tools.tomtom.backends import Backend
from tools.tomtom.credentials import KeySources

ROUTE = r"/.*(calculateRoute/.*|routes/calculate)"
"""Calculate Route on both backends (Orbis: Routing v3, `/maps/orbis/routing/routes/calculate`)."""
CALLS = {
    "tomtom-geocode": ({"query": "Dam"}, r"/.*geocode.*", "geocode.json"),
    "tomtom-routing": ({"locations": [[4.9, 52.3], [13.4, 52.5]]}, ROUTE, "route.json"),
    "tomtom-traffic": ({"bbox": [4.8, 52.33, 4.95, 52.4]}, r"/.*incidentDetails", "traffic.json"),
}


ORBIS_ANSWERS = {"geocode.json": "geocode_v2.json", "route.json": "route_v3.json"}
"""Answers whose Orbis version has its own shape (Orbis Geocoding v2, Routing v3)."""


def answer_both(stub, path: str, **answer) -> None:
    """The stub answers `path` whatever the method (Orbis Routing v3 is a POST)."""
    for method in ("GET", "POST"):
        stub.route(method, path, **answer)


def echoing(name: str, backend: Backend = Backend.ORBIS) -> dict:
    """A canned answer that also echoes the key, as some TomTom answers do (request echoes)."""
    answer = data(ORBIS_ANSWERS.get(name, name) if backend is Backend.ORBIS else name)
    answer["echo"] = {"request": f"https://api.tomtom.com/x?key={CANARY_KEY}", "apiKey": CANARY_KEY}
    return answer


@pytest.mark.parametrize("backend", list(Backend))
@pytest.mark.parametrize("detail", ["compact", "full"])
@pytest.mark.parametrize("source", ["header", "bearer", "cli", "server", "tenant"])
async def test_no_leak_on_success(stub, caplog, backend, detail, source):
    caplog.set_level(logging.DEBUG)
    dispatcher = build_dispatcher()
    keys = {
        "header": KeySources(header=CANARY_KEY),
        "bearer": KeySources(bearer=CANARY_KEY),
        "cli": KeySources(cli=CANARY_KEY),
        "server": KeySources(),
        "tenant": KeySources(tenant=CANARY_KEY, signed_in=True),
    }[source]
    config = make_config(stub, server_key=CANARY_KEY if source == "server" else "other")
    for name, (arguments, path, answer) in CALLS.items():
        answer_both(stub, path, json_body=echoing(answer, backend))
        context = CallContext(config=config, transport="http", keys=keys, backend=backend)
        outcome = await dispatcher.call(name, {**arguments, "response_detail": detail}, context)
        assert not outcome.is_error, outcome.text
        assert CANARY_KEY not in outcome.text
        sent = stub.requests[-1]
        assert sent.api_key == CANARY_KEY
        in_header = backend is Backend.ORBIS  # TomTom documents the header for Orbis only
        assert (sent.headers.get("tomtom-api-key") == CANARY_KEY) is in_header
        assert (sent.param("key") == CANARY_KEY) is not in_header
    assert CANARY_KEY not in caplog.text
    assert CANARY_KEY not in repr(context) and CANARY_KEY not in repr(keys)


@pytest.mark.parametrize("status", [400, 401, 403, 429, 500, 503])
async def test_no_leak_on_errors(stub, caplog, status):
    caplog.set_level(logging.DEBUG)
    dispatcher = build_dispatcher()
    config = make_config(stub)
    for name, (arguments, path, _) in CALLS.items():
        answer_both(stub, path, status=status, json_body={"errorText": f"bad key {CANARY_KEY} in /x?key={CANARY_KEY}"})
        outcome = await dispatcher.call(name, arguments, CallContext(config=config, transport="exec"))
        assert outcome.is_error
        assert CANARY_KEY not in outcome.text
    assert CANARY_KEY not in caplog.text


async def test_no_leak_from_unexpected_failures(stub, caplog):
    from tools.definition import define_tool
    from tools.dispatch import Dispatcher
    from tools.inputs import ToolInput
    from tools.registry import Registry

    caplog.set_level(logging.DEBUG)

    async def explode(arguments, context):
        raise RuntimeError(f"boom with {context.tomtom!r} and key {CANARY_KEY}")

    broken = define_tool(name="broken", title="Broken", description="fails", input=ToolInput, run=explode)
    outcome = await Dispatcher(Registry([broken])).call(
        "broken", {}, CallContext(config=make_config(stub), transport="exec")
    )
    assert outcome.data["error"]["code"] == "internal"
    assert CANARY_KEY not in outcome.text
    assert "boom" not in outcome.text and "RuntimeError" not in outcome.text
    assert json.loads(outcome.text)["error"]["request_id"]
    logged = [r for r in caplog.records if r.getMessage() == "Tool call failed unexpectedly"]
    assert "boom" in logs.fields(logged[0])["exception"]  # the log keeps the details for us, scrubbed
    assert CANARY_KEY not in logs.fields(logged[0])["exception"]


WIDGET_CALLS = {
    **CALLS,
    "tomtom-dynamic-map": (
        {"routePlans": [{"locations": [[4.9, 52.3], [13.4, 52.5]]}], "markers": [{"position": [4.9, 52.3]}]},
        ROUTE,
        "route.json",
    ),
}


@pytest.mark.parametrize("source", ["header", "server"])
async def test_no_leak_into_app_data(stub, caplog, source):
    """The widget's app data is TomTom's answer as the client scrubbed it: never the key, even when
    TomTom echoes it. Only the app-only tomtom-get-map-key hands the key out, and only to a widget."""
    from protocol.appdata import APP_DATA_KEY
    from tools.shaping.appdata import decode

    caplog.set_level(logging.DEBUG)
    dispatcher = build_dispatcher()
    keys = KeySources(header=CANARY_KEY) if source == "header" else KeySources()
    config = make_config(stub, server_key=CANARY_KEY if source == "server" else "other")
    for name, (arguments, path, answer) in WIDGET_CALLS.items():
        answer_both(stub, path, json_body=echoing(answer))
        context = CallContext(config=config, transport="http", keys=keys)
        outcome = await dispatcher.call(name, {**arguments, "show_ui": True}, context)
        assert not outcome.is_error, outcome.text
        assert CANARY_KEY not in outcome.text
        assert CANARY_KEY not in json.dumps(outcome.meta)
        if APP_DATA_KEY in outcome.meta:
            assert CANARY_KEY not in json.dumps(decode(outcome.meta[APP_DATA_KEY]))
    assert CANARY_KEY not in caplog.text
    key_tool = dispatcher.get("tomtom-get-map-key")
    assert key_tool is not None and key_tool.app_only


@pytest.mark.django_db
def test_a_tenants_key_is_never_shown_again_nor_stored_in_the_clear(admin_client):
    """Typed once into the admin, the key is stored encrypted; no admin page shows it afterwards."""
    from tenants.models import Tenant, TenantKey

    acme = Tenant.objects.create(name="Acme", claim="acme")
    form = {
        "name": "Acme",
        "claim": "acme",
        "enabled": "on",
        "default_backend": "",
        "allowed_tools": "",
        "calls_per_minute": "",
        "calls_per_day": "",
        "keys-TOTAL_FORMS": "1",
        "keys-INITIAL_FORMS": "0",
        "keys-MIN_NUM_FORMS": "0",
        "keys-MAX_NUM_FORMS": "1000",
        "keys-0-label": "first",
        "keys-0-new_key": CANARY_KEY,
        "keys-0-active": "on",
        "members-TOTAL_FORMS": "0",  # the people signing in (built-in OAuth): none here
        "members-INITIAL_FORMS": "0",
        "members-MIN_NUM_FORMS": "0",
        "members-MAX_NUM_FORMS": "1000",
    }
    saved = admin_client.post(f"/admin/tenants/tenant/{acme.pk}/change/", form)
    assert saved.status_code == 302, saved.content.decode()[:2000]
    key = TenantKey.objects.get(tenant=acme)
    assert CANARY_KEY not in key.secret and CANARY_KEY not in repr(key) and CANARY_KEY not in str(key)
    for page in (f"/admin/tenants/tenant/{acme.pk}/change/", "/admin/tenants/tenant/", "/admin/tenants/tenantusage/"):
        assert CANARY_KEY not in admin_client.get(page).content.decode()
    from tenants.store import admit_now

    admission = admit_now("acme", 0)
    assert admission is not None and admission.api_key == CANARY_KEY  # it opens again, for TomTom only
    assert CANARY_KEY not in repr(admission)


@pytest.fixture
def spans():
    from tests.support.traces import recording

    yield from recording()


@pytest.mark.parametrize("source", ["header", "bearer", "cli", "server", "tenant"])
async def test_no_leak_into_traces(stub, spans, source):
    """With traces on, every span of a call, answered, echoed or refused, and its retries: the key
    (in its header, on Orbis) is in no `url.full`, no attribute, event or status."""
    from tests.support.traces import everything_recorded

    dispatcher = build_dispatcher()
    keys = {
        "header": KeySources(header=CANARY_KEY),
        "bearer": KeySources(bearer=CANARY_KEY),
        "cli": KeySources(cli=CANARY_KEY),
        "server": KeySources(),
        "tenant": KeySources(tenant=CANARY_KEY, signed_in=True),
    }[source]
    config = make_config(stub, server_key=CANARY_KEY if source == "server" else "other")
    for status in (200, 400, 401, 503):
        for name, (arguments, path, answer) in CALLS.items():
            error = {"errorText": f"bad key {CANARY_KEY} in /x?key={CANARY_KEY}"}
            answer_both(stub, path, status=status, json_body=echoing(answer) if status == 200 else error)
            context = CallContext(config=config, transport="http", keys=keys)
            outcome = await dispatcher.call(name, arguments, context)
            assert outcome.is_error is (status != 200)
    recorded = spans()
    assert {span.name for span in recorded} == {"GET", "POST", *(f"execute_tool {name}" for name in CALLS)}
    assert all("key=" not in span.attributes["url.full"] for span in recorded if span.name in ("GET", "POST"))
    assert CANARY_KEY not in everything_recorded(recorded)
