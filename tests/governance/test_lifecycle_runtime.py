"""The lifecycle at call time: a deprecated tool listed and answered with its notice, an alias
reaching its target, a retire-on date that fires on its day, and every outdated input of a call
named at once; through the dispatcher and a real MCP client."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime

import pytest
from mcp import Client
from mcp_types import Implementation

from governance import services
from governance.runtime import Governance
from governance.surface import Alias, ChangeKind, Deprecation, InputChange, LedgerEntry, Surface
from protocol.appdata import deliver_app_data
from protocol.server import build_server
from protocol.service import build_dispatcher
from protocol.stdio import stdio_context_factory
from protocol.tenancy import enforce_terms, filter_listing
from tests.governance.conftest import fake_tool
from tests.support import logs
from tools.context import CallContext, TenantTerms
from tools.definition import Answer, define_tool
from tools.dispatch import Dispatcher, log_calls
from tools.inputs import ToolInput
from tools.registry import Registry

DAY = date(2026, 12, 1)
RETIRE_ON = date(2027, 1, 15)
TOOLS = [fake_tool("demo-old", query=str), fake_tool("demo-next", query=str, limit=int), fake_tool("demo-other")]
HISTORY = Surface(
    ledger=(*(LedgerEntry(t.name, DAY) for t in TOOLS), LedgerEntry("demo-search", DAY)),
    deprecated=(Deprecation("demo-old", ("demo-next", "demo-other"), DAY, RETIRE_ON, "Merged."),),
    aliases=(Alias("demo-search", "demo-next", DAY, (("q", "query"), ("ui", None)), RETIRE_ON, "Renamed."),),
    changes=(
        InputChange("demo-next", "origin", ChangeKind.REMOVED, DAY, "Send the stops in `locations`, origin first."),
        InputChange("demo-next", "destination", ChangeKind.REMOVED, DAY, "Send the stops in `locations`, last."),
        InputChange("demo-next", "max", ChangeKind.RENAMED, DAY, "Same values.", new_input="limit"),
    ),
)
NOTICE = "demo-old is deprecated, retired on 2027-01-15: use demo-next or demo-other instead."
ALIAS_NOTICE = "demo-search is deprecated, retired on 2027-01-15: call demo-next instead, which answered this call."


class Today:
    def __init__(self, day: date) -> None:
        self.day = day

    def __call__(self) -> date:
        return self.day


class Clock:
    now = 1000.0

    def __call__(self) -> float:
        return self.now


def governed(load=lambda: HISTORY, *, today=None, clock=None, tools=TOOLS) -> tuple[Dispatcher, Governance]:
    registry = Registry(tools)
    governance = Governance(
        refresh_seconds=5,
        load=load,
        clock=clock or Clock(),
        today=today or Today(DAY),
        tools={tool.name: tool for tool in registry},
    )
    governance.prime()
    dispatcher = Dispatcher(
        registry,
        interceptors=(
            log_calls,
            governance.resolve_alias,
            enforce_terms,
            governance.intercept,
            deliver_app_data,
            governance.annotate,
        ),
        listing_filters=(governance.filter_listing, filter_listing),
        refreshers=(governance.refresh_if_due,),
    )
    return dispatcher, governance


@pytest.fixture
def call_context(config) -> CallContext:
    return CallContext(config=config, transport="stdio", client_name="old-agent", tenant="acme")


def app_status(caplog, kind: str) -> list[dict]:
    lines = [logs.fields(r) for r in caplog.records if r.name == "tools.app_status"]
    return [line for line in lines if line["kind"] == kind]


async def test_a_deprecated_tool_stays_listed_with_its_notice_and_answers_with_it(call_context, caplog):
    dispatcher, _ = governed()
    listing = {tool.name: tool for tool in await dispatcher.listing(call_context)}
    assert list(listing) == ["demo-old", "demo-next", "demo-other"]  # the alias is not listed
    assert listing["demo-old"].description == (
        "Deprecated, retired on 2027-01-15: use demo-next or demo-other instead. demo-old, for tests."
    )
    assert listing["demo-next"].description == "demo-next, for tests."
    outcome = await dispatcher.call("demo-old", {"query": "Dam"}, call_context)
    assert outcome.text == json.dumps({"notice": NOTICE, "echo": {"query": "Dam"}}, separators=(",", ":"))
    refused = await dispatcher.call("demo-old", {"colour": "red"}, call_context)  # its errors carry it too
    assert (refused.data["notice"], refused.code) == (NOTICE, "invalid_arguments")
    [line, _] = app_status(caplog, "deprecated_tool")
    assert line == {
        "event": "app_status",
        "kind": "deprecated_tool",
        "tool": "demo-old",
        "client": "old-agent",
        "request_id": call_context.request_id,
        "tenant": "acme",
        "replaced_by": ["demo-next", "demo-other"],
    }


async def test_an_alias_reaches_its_target_with_its_arguments_renamed(call_context, caplog):
    dispatcher, _ = governed()
    outcome = await dispatcher.call("demo-search", {"q": "Dam", "ui": True, "limit": 3}, call_context)
    assert outcome.data == {"notice": ALIAS_NOTICE, "echo": {"query": "Dam", "limit": 3}}
    [line] = app_status(caplog, "alias_call")
    assert (line["tool"], line["tenant"], line["replaced_by"]) == ("demo-search", "acme", ["demo-next"])
    [call_line] = [logs.fields(r) for r in caplog.records if r.getMessage() == "Tool call"]
    assert (call_line["tool"], call_line["outcome"]) == ("demo-search", "ok")  # logged under the name called
    both = await dispatcher.call("demo-search", {"q": "Dam", "query": "Dam"}, call_context)
    assert both.data == {
        "notice": ALIAS_NOTICE,
        "error": {
            "code": "invalid_arguments",
            "message": "`q` and `query`: send each once, under the name demo-next takes: query (not q)",
            "arguments": ["q", "query"],
        },
    }
    outdated = await dispatcher.call("demo-search", {"max": 3}, call_context)  # the target's contract changes
    assert (outdated.data["notice"], outdated.data["error"]["argument"]) == (ALIAS_NOTICE, "max")


async def test_an_alias_answers_only_what_the_tenant_may_call(config):
    dispatcher, _ = governed()
    context = CallContext(
        config=config,
        transport="http",
        client_name="agent",
        tenant="acme",
        terms=TenantTerms(allowed_tools=frozenset({"demo-other", "demo-search"})),
    )
    refused = await dispatcher.call("demo-search", {"q": "Dam"}, context)
    assert refused.data["error"]["code"] == "unknown_tool"
    assert "demo-search" not in [tool.name for tool in await dispatcher.listing(context)]


async def test_a_scheduled_retirement_fires_on_its_day_without_a_write(call_context, caplog):
    today, clock = Today(date(2027, 1, 14)), Clock()
    dispatcher, governance = governed(today=today, clock=clock)
    assert (await dispatcher.call("demo-old", {"query": "Dam"}, call_context)).is_error is False
    today.day = RETIRE_ON
    assert (await dispatcher.call("demo-old", {"query": "Dam"}, call_context)).is_error is False  # not yet reread
    clock.now += 5  # the refresh bound: the next request rereads and judges the history on the new day
    retired = await dispatcher.call("demo-old", {"query": "Dam"}, call_context)
    alias = await dispatcher.call("demo-search", {"q": "Dam"}, call_context)
    assert retired.data == {
        "error": {
            "code": "retired",
            "message": "demo-old was retired on 2027-01-15; use demo-next or demo-other instead. Merged.",
            "replaced_by": ["demo-next", "demo-other"],
        }
    }
    assert alias.data["error"]["message"] == "demo-search was retired on 2027-01-15; use demo-next instead. Renamed."
    assert [tool.name for tool in await dispatcher.listing(call_context)] == ["demo-next", "demo-other"]
    assert "demo-old" in governance.snapshot.retired_by_name


async def test_an_outdated_call_hears_every_outdated_input_at_once(call_context, caplog):
    dispatcher, _ = governed()
    outcome = await dispatcher.call(
        "demo-next", {"destination": [4.9, 52.4], "origin": [4.8, 52.3], "max": 2}, call_context
    )
    error = outcome.data["error"]
    assert error["message"] == (
        "3 inputs of demo-next changed: destination: removed from demo-next on 2026-12-01. Send the stops in "
        "`locations`, last. origin: removed from demo-next on 2026-12-01. Send the stops in `locations`, origin "
        "first. max: renamed to limit in demo-next on 2026-12-01; send the same value as limit. Same values. "
        "Send limit: 2."
    )
    assert error["arguments"] == ["destination", "origin", "max"]
    assert [(c["argument"], c["change"]) for c in error["changes"]] == [
        ("destination", "removed"),
        ("origin", "removed"),
        ("max", "renamed"),
    ]
    assert error["send"] == {"limit": 2}
    assert [line["input"] for line in app_status(caplog, "outdated_call")] == ["destination", "origin", "max"]


async def test_the_committed_ev_routing_changes_name_both_removed_inputs_and_what_else_is_missing(call_context):
    # No django_db mark: the replica answers from the committed fixture.
    dispatcher = build_dispatcher()
    outcome = await dispatcher.call(
        "tomtom-ev-routing",
        {"origin": [4.89, 52.37], "destination": [4.47, 51.92], "maxChargeInkWh": 75},
        call_context,
    )
    error = outcome.data["error"]
    assert error["arguments"] == ["origin", "destination", "locations", "currentChargeInkWh"]
    assert error["message"].startswith("2 inputs of tomtom-ev-routing changed: origin: removed from ")
    assert "destination: removed from tomtom-ev-routing on 2026-10-15." in error["message"]
    assert error["message"].endswith("Also 2 other problems: locations: is required; currentChargeInkWh: is required.")
    assert [p["argument"] for p in error["problems"]] == ["locations", "currentChargeInkWh"]
    assert [c["instead"] for c in error["changes"]] == [
        "Send the stops in `locations`, origin first: [[longitude, latitude], ..., [longitude, latitude]].",
        "Send the stops in `locations`, destination last: [[longitude, latitude], ..., [longitude, latitude]].",
    ]


async def _drawn(input: ToolInput, context) -> Answer:
    return Answer({"places": [1, 2]}, app_data={"type": "FeatureCollection", "features": []}, show_ui=True)


async def test_a_widgets_answer_carries_the_notice_in_its_text_and_stays_whole(call_context):
    drawn = define_tool(
        name="demo-old", title="Old", description="Old.", input=ToolInput, run=_drawn, widget="ui://demo/map.html"
    )
    dispatcher, _ = governed(tools=[drawn, *TOOLS[1:]])
    outcome = await dispatcher.call("demo-old", {}, call_context)
    text = json.loads(outcome.text)
    assert list(text)[:2] == ["notice", "places"] and text["notice"] == NOTICE
    assert outcome.meta["delivery"] == "inline"


# --- Through a real MCP client, with the tables in the database -----------------------------------


@pytest.fixture
def lifecycle_release(use_registry, monkeypatch, settings, transactional_db, governance_clock):
    use_registry(*TOOLS)
    monkeypatch.setattr("tools.registry.default_tools", lambda: list(TOOLS))
    settings.GOVERNANCE_REFRESH_SECONDS = 0.2
    for entry in HISTORY.ledger:
        services.ledger_add(name=entry.name, first_seen=entry.first_seen)
    services.deprecation_create(
        name="demo-old", replaced_by=["demo-next", "demo-other"], reason="Merged.", retire_on=RETIRE_ON
    )
    services.alias_create(name="demo-search", target="demo-next", arguments={"q": "query"}, retire_on=RETIRE_ON)
    return governance_clock


def mcp_client(dispatcher: Dispatcher, config, name: str = "old-agent") -> Client:
    server = build_server(dispatcher, stdio_context_factory(config, api_key=None, backend=None))
    return Client(server, client_info=Implementation(name=name, version="1.0"))


async def test_the_lifecycle_through_an_mcp_client(lifecycle_release, config):
    import asyncio

    from governance.models import GovernanceEvent, RetiredTool

    dispatcher = build_dispatcher()
    async with mcp_client(dispatcher, config) as client:
        listing = {tool.name: tool for tool in (await client.list_tools()).tools}
        answer = await client.call_tool("demo-old", {"query": "Dam"})
        through_alias = await client.call_tool("demo-search", {"q": "Dam"})
        lifecycle_release.set(datetime(2027, 1, 15, 0, 0, 1, tzinfo=UTC), system=True)  # the retire-on date comes
        await asyncio.sleep(0.25)  # GOVERNANCE_REFRESH_SECONDS
        retired = await client.call_tool("demo-old", {"query": "Dam"})
        after = [tool.name for tool in (await client.list_tools(cache_mode="refresh")).tools]
    assert list(listing) == ["demo-old", "demo-next", "demo-other"]
    assert listing["demo-old"].description.startswith("Deprecated, retired on 2027-01-15: use demo-next or demo-other")
    assert json.loads(answer.content[0].text) == {"notice": NOTICE, "echo": {"query": "Dam"}}
    assert json.loads(through_alias.content[0].text)["echo"] == {"query": "Dam"}
    assert json.loads(retired.content[0].text)["error"]["code"] == "retired"
    assert after == ["demo-next", "demo-other"]
    stored = await asyncio.to_thread(
        lambda: list(
            RetiredTool.objects.filter(tool_id__in=["demo-old", "demo-search"]).values_list("tool_id", "since")
        )
    )
    assert sorted(stored) == [("demo-old", RETIRE_ON), ("demo-search", RETIRE_ON)]
    vias = await asyncio.to_thread(
        lambda: list(GovernanceEvent.objects.filter(subject="retirement").values_list("tool", "via"))
    )
    assert ("demo-old", "schedule") in vias and ("demo-search", "schedule") in vias
