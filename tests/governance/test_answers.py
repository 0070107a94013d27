"""What callers are told (issue 43): a retired tool's answer and a deprecation notice name only
the replacements the caller is listed; a call with outdated inputs and other bad arguments
hears of all of them in one answer. Through the dispatcher and a real MCP client."""

from __future__ import annotations

import json
from datetime import date
from typing import Any

import pytest
from mcp import Client
from mcp_types import Implementation
from pydantic import Field

from governance.client_surface import ClientSurfaces
from governance.runtime import Governance
from governance.surface import Alias, ChangeKind, Deprecation, InputChange, LedgerEntry, Retirement, Surface
from protocol.appdata import deliver_app_data
from protocol.server import build_server
from protocol.service import build_dispatcher
from tests.conftest import apps_extension
from tests.support import logs
from tools.context import CallContext
from tools.definition import define_tool
from tools.dispatch import Dispatcher, log_calls
from tools.inputs import ToolInput
from tools.registry import Registry
from tools.tomtom.backends import Backend

DAY = date(2026, 10, 5)
RETIRE_ON = date(2027, 6, 1)
RAN: list[str] = []


async def _run(input: ToolInput, context: Any) -> dict[str, Any]:
    RAN.append(type(input).__name__)
    return {"echo": input.model_dump(exclude_unset=True)}


class MapInput(ToolInput):
    pass


class SearchInput(ToolInput):
    query: str = Field(min_length=3)
    limit: int | None = Field(None, ge=1, le=100)


class ChargeInput(ToolInput):
    charge: float = Field(ge=0)


def _tool(name: str, input: type[ToolInput], **declared: Any):
    return define_tool(
        name=name, title=name.title(), description=f"{name}, for tests.", input=input, run=_run, **declared
    )


TOOLS = [
    _tool("demo-map", MapInput, widget="ui://demo/map.html", needs_widget=True),  # widget clients only
    _tool("demo-image", MapInput),
    _tool("demo-search", SearchInput),
    _tool("demo-charge", ChargeInput),
    _tool("demo-legacy", MapInput),
]
HISTORY = Surface(
    ledger=tuple(LedgerEntry(name, DAY) for name in (*(t.name for t in TOOLS), "demo-old", "demo-gone", "demo-was")),
    retired=(
        Retirement("demo-old", ("demo-map", "demo-image"), DAY, "1.6.11", "Images left with the old backend."),
        Retirement("demo-gone", ("demo-map",), DAY, "", "demo-map draws it on a live map."),
    ),
    deprecated=(Deprecation("demo-legacy", ("demo-map", "demo-image"), DAY, RETIRE_ON, "Merged."),),
    aliases=(Alias("demo-was", "demo-legacy", DAY),),
    changes=(
        InputChange("demo-search", "fields", ChangeKind.REMOVED, DAY, "Leave it out."),
        InputChange("demo-search", "queryText", ChangeKind.RENAMED, DAY, "Same values.", new_input="query"),
        InputChange(
            "demo-charge",
            "chargePercent",
            ChangeKind.UNIT_CHANGED,
            DAY,
            "Send kWh.",
            new_input="charge",
            was="%",
            now="kWh",
        ),
    ),
)


class Clock:
    now = 1000.0

    def __call__(self) -> float:
        return self.now


def governed() -> Dispatcher:
    registry = Registry(TOOLS)
    governance = Governance(
        refresh_seconds=5, load=lambda: HISTORY, clock=Clock(), tools={tool.name: tool for tool in registry}
    )
    governance.prime()
    return Dispatcher(
        registry,
        interceptors=(log_calls, governance.resolve_alias, governance.intercept, deliver_app_data, governance.annotate),
        listing_filters=(governance.filter_listing,),
        refreshers=(governance.refresh_if_due,),
    )


def caller(config, *, widgets: bool, backend: Backend | None = None) -> CallContext:
    return CallContext(config=config, transport="stdio", client_name="agent", widgets=widgets, backend=backend)


@pytest.fixture(autouse=True)
def _nothing_ran():
    RAN.clear()


# --- Retired tools and deprecation notices name only what the caller is listed --------------------


async def test_a_retired_tool_names_only_the_replacements_this_caller_is_listed(config, caplog):
    dispatcher = governed()
    widget = await dispatcher.call("demo-old", {}, caller(config, widgets=True))
    text_only = await dispatcher.call("demo-old", {}, caller(config, widgets=False))
    assert widget.data["error"] == {
        "code": "retired",
        "message": "demo-old was retired on 2026-10-05 (1.6.11); use demo-map or demo-image instead. "
        "Images left with the old backend.",
        "replaced_by": ["demo-map", "demo-image"],
    }
    assert text_only.data["error"] == {
        "code": "retired",
        "message": "demo-old was retired on 2026-10-05 (1.6.11); use demo-image instead. "
        "Images left with the old backend.",
        "replaced_by": ["demo-image"],
    }
    # The app-status line says what replaced the tool, whoever asked (the analytics group by it).
    lines = [logs.fields(r) for r in caplog.records if r.name == "tools.app_status"]
    assert [line["replaced_by"] for line in lines] == [["demo-map", "demo-image"]] * 2


async def test_a_retired_tool_with_no_replacement_for_this_client_says_so_and_names_nothing(config):
    dispatcher = governed()
    text_only = await dispatcher.call("demo-gone", {}, caller(config, widgets=False))
    assert text_only.data["error"] == {
        "code": "retired",
        # The recorded message names demo-map, which this client is never listed: it is left out.
        "message": "demo-gone was retired on 2026-10-05 and has no replacement for this client.",
        "replaced_by": [],
    }
    widget = await dispatcher.call("demo-gone", {}, caller(config, widgets=True))
    assert widget.data["error"]["message"] == (
        "demo-gone was retired on 2026-10-05; use demo-map instead. demo-map draws it on a live map."
    )
    assert widget.data["error"]["replaced_by"] == ["demo-map"]


async def test_a_deprecation_notice_names_only_the_replacements_this_caller_is_listed(config):
    dispatcher = governed()
    widget, text_only = caller(config, widgets=True), caller(config, widgets=False)
    listed = {
        who: {tool.name: tool.description for tool in await dispatcher.listing(context)}
        for who, context in (("widget", widget), ("text", text_only))
    }
    assert listed["widget"]["demo-legacy"] == (
        "Deprecated, retired on 2027-06-01: use demo-map or demo-image instead. demo-legacy, for tests."
    )
    assert (
        listed["text"]["demo-legacy"]
        == "Deprecated, retired on 2027-06-01: use demo-image instead. demo-legacy, for tests."
    )
    answered = await dispatcher.call("demo-legacy", {}, text_only)
    assert answered.data == {
        "notice": "demo-legacy is deprecated, retired on 2027-06-01: use demo-image instead.",
        "echo": {},
    }
    # Through an alias, the target's notice still knows what the caller is listed.
    through_alias = await dispatcher.call("demo-was", {}, text_only)
    assert through_alias.data["notice"].endswith(
        "demo-legacy is deprecated, retired on 2027-06-01: use demo-image instead."
    )


async def test_the_committed_static_map_answer_fits_each_kind_of_client(config):
    # No django_db mark: the replica answers from the committed fixture.
    dispatcher = build_dispatcher()

    async def replaced_by(widgets: bool, backend: Backend) -> tuple[list[str], str]:
        outcome = await dispatcher.call("tomtom-static-map", {}, caller(config, widgets=widgets, backend=backend))
        error = outcome.data["error"]
        assert error["code"] == "retired"
        return error["replaced_by"], error["message"]

    names, message = await replaced_by(False, Backend.GENESIS)
    assert names == ["tomtom-map-image"]
    assert message.startswith("tomtom-static-map was retired on 2026-10-05 (1.6.11); use tomtom-map-image instead.")
    names, message = await replaced_by(False, Backend.ORBIS)  # tomtom-map-image: on both backends
    assert names == ["tomtom-map-image"] and "tomtom-dynamic-map" not in message
    assert (await replaced_by(True, Backend.ORBIS))[0] == ["tomtom-dynamic-map", "tomtom-map-image"]
    assert (await replaced_by(True, Backend.GENESIS))[0] == ["tomtom-dynamic-map", "tomtom-map-image"]


# --- An outdated call with other bad arguments: one answer naming all of them ---------------------


async def test_an_outdated_call_with_other_bad_arguments_hears_all_of_them_at_once(config):
    dispatcher = governed()
    outcome = await dispatcher.call(
        "demo-search", {"queryText": "Amsterdam", "limit": 0, "colour": "red"}, caller(config, widgets=True)
    )
    assert outcome.data["error"] == {
        "code": "invalid_arguments",
        "message": "queryText: renamed to query in demo-search on 2026-10-05; send the same value as query. "
        'Same values. Send query: "Amsterdam". Also 2 other problems: unknown argument(s) colour in arguments; '
        "valid: limit, query; limit: should be greater than or equal to 1.",
        "argument": "queryText",
        "change": "renamed",
        "instead": "Same values.",
        "new_argument": "query",
        "send": {"query": "Amsterdam"},
        "arguments": ["queryText", "colour", "limit"],
        "problems": [
            {"argument": "colour", "message": "unknown argument(s) colour in arguments; valid: limit, query"},
            {"argument": "limit", "message": "limit: should be greater than or equal to 1"},
        ],
        "total": 2,
        "returned": 2,
        "truncated": False,
    }
    assert RAN == []  # judged, never run


async def test_several_outdated_inputs_and_a_missing_one_in_one_answer(config):
    dispatcher = governed()
    outcome = await dispatcher.call("demo-search", {"fields": "a", "limit": 500}, caller(config, widgets=True))
    error = outcome.data["error"]
    assert error["arguments"] == ["fields", "query", "limit"]
    assert error["message"] == (
        "fields: removed from demo-search on 2026-10-05. Leave it out. Also 2 other problems: "
        "query: is required; limit: should be less than or equal to 100."
    )
    both = await dispatcher.call(
        "demo-search", {"fields": "a", "queryText": "Am", "limit": 0}, caller(config, widgets=True)
    )
    error = both.data["error"]
    assert error["message"].startswith("2 inputs of demo-search changed: fields: removed ")
    assert error["message"].endswith(
        "Also 2 other problems: query: should have at least 3 characters; limit: should be greater than or equal to 1."
    )
    assert error["arguments"] == ["fields", "queryText", "query", "limit"]
    assert [c["argument"] for c in error["changes"]] == ["fields", "queryText"]
    assert error["send"] == {"query": "Am"}
    assert [p["argument"] for p in error["problems"]] == ["query", "limit"]


async def test_a_new_input_the_change_already_explains_is_not_named_twice(config):
    dispatcher = governed()
    alone = await dispatcher.call("demo-charge", {"chargePercent": 80}, caller(config, widgets=True))
    assert "problems" not in alone.data["error"]  # `charge` is missing because of the change: said once
    with_another = await dispatcher.call(
        "demo-charge", {"chargePercent": 80, "colour": "red"}, caller(config, widgets=True)
    )
    assert with_another.data["error"]["arguments"] == ["chargePercent", "colour"]


@pytest.mark.parametrize(
    "arguments",
    [{"query": "Amsterdam", "fields": "a"}, {"queryText": "Amsterdam"}, {"fields": "a", "queryText": "Amsterdam"}],
    ids=["removed", "renamed", "both"],
)
async def test_a_call_whose_only_fault_is_an_outdated_input_is_answered_as_before(config, arguments):
    from governance.runtime import outdated_changes, outdated_error

    dispatcher = governed()
    outcome = await dispatcher.call("demo-search", arguments, caller(config, widgets=True))
    changes = outdated_changes(HISTORY.changes_by_tool["demo-search"], arguments)
    assert outcome.data == {"error": outdated_error(changes, arguments).as_dict()["error"]}
    assert "problems" not in outcome.data["error"]
    assert RAN == []


# --- Through a real MCP client --------------------------------------------------------------------


def mcp_client(config, *, apps: bool) -> Client:
    def make_context(ctx):
        return CallContext(config=config, transport="stdio", client_name="agent")

    server = build_server(governed(), make_context, surfaces=ClientSurfaces(()))
    extensions = [apps_extension()] if apps else None
    return Client(server, client_info=Implementation(name="agent", version="1.0"), extensions=extensions)


async def test_answers_through_an_mcp_client(config):
    answers = {}
    for apps in (False, True):
        async with mcp_client(config, apps=apps) as client:
            listing = {tool.name: tool for tool in (await client.list_tools()).tools}
            retired = await client.call_tool("demo-old", {})
            outdated = await client.call_tool("demo-search", {"queryText": "Amsterdam", "limit": 0})
        answers[apps] = listing, json.loads(retired.content[0].text)["error"], outdated
    text_listing, text_retired, text_outdated = answers[False]
    apps_listing, apps_retired, _ = answers[True]
    assert "demo-map" not in text_listing and "demo-map" in apps_listing
    assert text_retired["replaced_by"] == ["demo-image"] and "demo-map" not in text_retired["message"]
    assert apps_retired["replaced_by"] == ["demo-map", "demo-image"]
    assert text_listing["demo-legacy"].description.startswith(
        "Deprecated, retired on 2027-06-01: use demo-image instead."
    )
    assert apps_listing["demo-legacy"].description.startswith(
        "Deprecated, retired on 2027-06-01: use demo-map or demo-image"
    )
    assert text_outdated.is_error is True
    error = json.loads(text_outdated.content[0].text)["error"]
    assert (error["code"], error["arguments"], error["send"]) == (
        "invalid_arguments",
        ["queryText", "limit"],
        {"query": "Amsterdam"},
    )
    assert (
        'Send query: "Amsterdam". Also 1 other problem: limit: should be greater than or equal to 1.'
        in error["message"]
    )
