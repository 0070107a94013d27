"""The `Tool call` line says what the caller read when a call failed, and how often TomTom rate-limited it."""

from __future__ import annotations

import logging

from protocol.service import build_dispatcher
from tests.conftest import CANARY_KEY, data, make_config
from tests.support import logs
from tools.context import CallContext


def call_lines(caplog) -> list[dict]:
    return [logs.fields(record) for record in caplog.records if record.getMessage() == "Tool call"]


async def test_a_failed_call_logs_its_message_with_keys_masked(stub, caplog):
    caplog.set_level(logging.INFO)
    stub.route(
        "GET", r"/maps/orbis/places/geocode", status=400, json_body={"errorText": f"bad query; key {CANARY_KEY}"}
    )

    outcome = await build_dispatcher().call(
        "tomtom-geocode", {"query": "Dam"}, CallContext(config=make_config(stub), transport="exec")
    )

    (line,) = call_lines(caplog)
    assert line["outcome"] == "invalid_arguments"
    assert line["error"] == outcome.data["error"]["message"].replace(CANARY_KEY, "***")
    assert line["error"].startswith("TomTom rejected the request. TomTom said: bad query; key ")
    assert CANARY_KEY not in line["error"]
    assert line["upstream_rate_limited"] == 0


async def test_an_ok_call_logs_no_message_and_counts_the_429s_it_retried(stub, caplog):
    caplog.set_level(logging.INFO)
    stub.route("GET", r"/maps/orbis/places/geocode", json_body=data("geocode_v2.json"))
    stub.route("GET", r"/maps/orbis/places/geocode", status=429, json_body={}, headers={"Retry-After": "0"}, times=2)

    outcome = await build_dispatcher().call(
        "tomtom-geocode", {"query": "Dam"}, CallContext(config=make_config(stub), transport="exec")
    )

    assert not outcome.is_error
    (line,) = call_lines(caplog)
    assert line["outcome"] == "ok" and line["error"] is None
    assert line["upstream_calls"] == 3 and line["upstream_rate_limited"] == 2
