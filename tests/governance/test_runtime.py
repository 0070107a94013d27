"""Runtime answers: retired names and outdated inputs, through the dispatcher and a real MCP client."""

from __future__ import annotations

import asyncio
import json
import logging
from datetime import date

import pytest
from django.db import connections
from mcp import Client
from mcp_types import Implementation

from core.operations import SurfaceReadableAgain, SurfaceUnreadableFromFixture
from governance import fixtures, services
from governance.runtime import Governance
from governance.surface import ChangeKind, InputChange, LedgerEntry, Retirement, Surface
from protocol.server import build_server
from protocol.service import build_dispatcher
from protocol.stdio import stdio_context_factory
from tests.governance.conftest import fake_tool
from tests.support import logs
from tools.context import CallContext
from tools.dispatch import Dispatcher, log_calls
from tools.registry import Registry

DAY = date(2026, 10, 5)
TAGS = {"type": "array", "items": {"type": "string"}}
FOUR = {"type": "array", "items": {"type": "number"}, "minItems": 4, "maxItems": 4}
PAIR = {"type": "array", "items": {"type": "number"}, "minItems": 2, "maxItems": 2}
PAIRS = {"type": "array", "items": PAIR, "minItems": 2, "maxItems": 2}
TOOLS = [
    fake_tool("demo-live", query={"type": "string", "minLength": 3}, tags=TAGS, box=FOUR, charge={"type": "number"}),
    fake_tool("demo-next"),
    fake_tool("demo-killed"),
]
HISTORY = Surface(
    ledger=(*(LedgerEntry(t.name, DAY) for t in TOOLS), LedgerEntry("demo-old", DAY)),
    retired=(
        Retirement("demo-old", ("demo-next",), DAY, "1.6.11", "Pass every stop in `locations`."),
        Retirement("demo-killed", (), DAY),
    ),
    changes=(
        InputChange("demo-live", "fields", ChangeKind.REMOVED, DAY, "Leave it out."),
        InputChange(
            "demo-live", "tags", ChangeKind.TYPE_CHANGED, DAY, 'Send ["a", "b"].', was={"type": "string"}, now=TAGS
        ),
        InputChange("demo-live", "box", ChangeKind.TYPE_CHANGED, DAY, "Four numbers.", was=PAIRS, now=FOUR),
        InputChange("demo-live", "queryText", ChangeKind.RENAMED, DAY, "Same values.", new_input="query"),
        InputChange(
            "demo-live",
            "chargePercent",
            ChangeKind.UNIT_CHANGED,
            DAY,
            "Send percent * capacity / 100.",
            new_input="charge",
            was="percent",
            now="kWh",
        ),
    ),
)


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def governed(load, *, refresh_seconds: float = 5, clock=None) -> tuple[Dispatcher, Governance]:
    governance = Governance(refresh_seconds=refresh_seconds, load=load, clock=clock or Clock())
    governance.prime()
    dispatcher = Dispatcher(
        Registry(TOOLS),
        interceptors=(log_calls, governance.intercept),
        listing_filters=(governance.filter_listing,),
        refreshers=(governance.refresh_if_due,),
    )
    return dispatcher, governance


@pytest.fixture
def call_context(config) -> CallContext:
    return CallContext(config=config, transport="stdio", client_name="old-agent", user_agent="old-agent/1.0")


def listed(dispatcher: Dispatcher, context: CallContext) -> list[str]:
    return [tool.name for tool in dispatcher.list_tools(context)]


def app_status(caplog, kind: str) -> list[dict]:
    lines = [logs.fields(r) for r in caplog.records if r.name == "tools.app_status"]
    return [line for line in lines if line["kind"] == kind]


async def test_a_retired_tool_is_never_listed_and_answers_with_its_replacements(call_context, caplog):
    dispatcher, _ = governed(lambda: HISTORY)
    assert listed(dispatcher, call_context) == ["demo-live", "demo-next"]
    outcome = await dispatcher.call("demo-old", {"anything": 1}, call_context)
    assert outcome.data == {
        "error": {
            "code": "retired",
            "message": "demo-old was retired on 2026-10-05 (1.6.11); use demo-next instead. "
            "Pass every stop in `locations`.",
            "replaced_by": ["demo-next"],
        }
    }
    killed = await dispatcher.call("demo-killed", {}, call_context)
    assert killed.data["error"]["message"] == "demo-killed was retired on 2026-10-05 and has no replacement."
    [line, _] = app_status(caplog, "retired_tool")
    assert line == {
        "event": "app_status",
        "kind": "retired_tool",
        "tool": "demo-old",
        "client": "old-agent",
        "user_agent": "old-agent/1.0",
        "request_id": call_context.request_id,
        "replaced_by": ["demo-next"],
    }


@pytest.mark.parametrize(
    ("arguments", "error"),
    [
        (
            {"query": "x", "fields": "{incidents}"},  # `query` is also too short: both in one answer
            {
                "code": "invalid_arguments",
                "message": "fields: removed from demo-live on 2026-10-05. Leave it out. "
                "Also 1 other problem: query: should have at least 3 characters.",
                "argument": "fields",
                "change": "removed",
                "instead": "Leave it out.",
                "arguments": ["fields", "query"],
                "problems": [{"argument": "query", "message": "query: should have at least 3 characters"}],
                "total": 1,
                "returned": 1,
                "truncated": False,
            },
        ),
        (
            {"query": "Amsterdam", "tags": "a, b"},
            {
                "code": "invalid_arguments",
                "message": 'tags: a list of strings since 2026-10-05 in demo-live, not a string. Send ["a", "b"]. '
                'Send tags: ["a", "b"].',
                "argument": "tags",
                "change": "type_changed",
                "instead": 'Send ["a", "b"].',
                "was": "a string",
                "now": "a list of strings",
                "send": {"tags": ["a", "b"]},
            },
        ),
        (
            {"box": [[4.8, 52.4], [4.9, 52.3]]},
            {
                "code": "invalid_arguments",
                "message": "box: a list of 4 numbers since 2026-10-05 in demo-live, "
                "not a list of 2 lists of 2 numbers. Four numbers. Send box: [4.8, 52.3, 4.9, 52.4].",
                "argument": "box",
                "change": "type_changed",
                "instead": "Four numbers.",
                "was": "a list of 2 lists of 2 numbers",
                "now": "a list of 4 numbers",
                "send": {"box": [4.8, 52.3, 4.9, 52.4]},
            },
        ),
        (
            {"queryText": "Amsterdam"},
            {
                "code": "invalid_arguments",
                "message": "queryText: renamed to query in demo-live on 2026-10-05; send the same value as query. "
                'Same values. Send query: "Amsterdam".',
                "argument": "queryText",
                "change": "renamed",
                "instead": "Same values.",
                "new_argument": "query",
                "send": {"query": "Amsterdam"},
            },
        ),
        (
            {"chargePercent": 80},
            {
                "code": "invalid_arguments",
                "message": "chargePercent: replaced by charge in demo-live on 2026-10-05: the value is now in kWh, "
                "not percent. Send percent * capacity / 100.",
                "argument": "chargePercent",
                "change": "unit_changed",
                "instead": "Send percent * capacity / 100.",
                "was": "percent",
                "now": "kWh",
                "new_argument": "charge",
            },
        ),
    ],
    ids=["removed, and another problem", "string now list", "corner pairs now four numbers", "renamed", "unit changed"],
)
async def test_an_outdated_call_hears_what_changed_and_what_else_is_wrong(call_context, caplog, arguments, error):
    dispatcher, _ = governed(lambda: HISTORY)
    outcome = await dispatcher.call("demo-live", arguments, call_context)
    assert outcome.data == {"error": error}
    [line] = app_status(caplog, "outdated_call")
    assert (line["tool"], line["client"], line["input"], line["change"]) == (
        "demo-live",
        "old-agent",
        error["argument"],
        error["change"],
    )


async def test_current_calls_go_through(call_context):
    dispatcher, _ = governed(lambda: HISTORY)
    current = {"query": "Amsterdam", "tags": ["a"], "box": [4.8, 52.3, 4.9, 52.4], "charge": 40}
    outcome = await dispatcher.call("demo-live", current, call_context)
    assert outcome.data == {"echo": current}
    schema = await dispatcher.call("demo-live", {"query": "Amsterdam", "colour": "red"}, call_context)
    assert schema.data["error"]["argument"] == "colour"  # not a contract change: the schema answers


async def test_a_change_reaches_the_replica_within_the_refresh_bound(call_context):
    clock, history = Clock(), [Surface()]
    dispatcher, governance = governed(lambda: history[-1], refresh_seconds=5, clock=clock)
    history.append(HISTORY)  # saved in the admin just after this replica read the tables
    clock.now += 4.9
    assert "demo-old" not in governance.snapshot.retired_by_name
    assert (await dispatcher.call("demo-killed", {}, call_context)).is_error is False
    clock.now += 0.1  # the bound: the next call rereads the tables and waits for them
    assert (await dispatcher.call("demo-killed", {}, call_context)).code == "retired"
    clock.now += 5  # a listing cannot wait: it starts the refresh, the next request sees it
    history.append(Surface(ledger=HISTORY.ledger))
    assert listed(dispatcher, call_context) == ["demo-live", "demo-next"]
    await asyncio.sleep(0.05)
    assert listed(dispatcher, call_context) == ["demo-live", "demo-next", "demo-killed"]


async def test_one_refresh_at_a_time(call_context):
    clock, reads = Clock(), []

    def slow_load() -> Surface:
        reads.append(1)
        return HISTORY

    dispatcher, _ = governed(slow_load, refresh_seconds=1, clock=clock)
    clock.now += 1
    await asyncio.gather(*(dispatcher.call("demo-live", {"query": "Amsterdam"}, call_context) for _ in range(20)))
    assert len(reads) == 2  # the prime, then one refresh for twenty concurrent calls


async def test_a_failed_refresh_keeps_the_last_snapshot(call_context, caplog):
    clock, fail = Clock(), [False]

    def load() -> Surface:
        if fail[0]:
            raise ConnectionError("database is down")
        return HISTORY

    dispatcher, _ = governed(load, refresh_seconds=1, clock=clock)
    fail[0] = True
    clock.now += 1
    with caplog.at_level(logging.WARNING, logger="tools.governance"):
        assert (await dispatcher.call("demo-old", {}, call_context)).code == "retired"
    [warning] = [r for r in caplog.records if r.name == "tools.governance"]
    assert warning.getMessage() == "Tool-surface tables unreadable: answering from the last snapshot"
    assert logs.fields(warning) == {"error": "ConnectionError: database is down", "retired": 2, "contract_changes": 5}
    clock.now += 1
    assert (await dispatcher.call("demo-old", {}, call_context)).code == "retired"
    assert len([r for r in caplog.records if r.name == "tools.governance"]) == 1  # one line, not one per refresh
    fail[0] = False
    clock.now += 1
    await dispatcher.call("demo-live", {"query": "Amsterdam"}, call_context)
    assert [r.getMessage() for r in caplog.records if r.name == "tools.governance"][-1] == SurfaceReadableAgain.MESSAGE


async def test_without_its_tables_a_replica_answers_from_the_committed_fixture(call_context, caplog):
    # No django_db mark: the database is out of reach, as in most tool tests.
    with caplog.at_level(logging.WARNING, logger="tools.governance"):
        dispatcher = build_dispatcher()
    [warning] = [r for r in caplog.records if r.name == "tools.governance"]
    assert warning.getMessage() == SurfaceUnreadableFromFixture.MESSAGE
    committed = fixtures.read_fixture()
    assert (logs.fields(warning)["retired"], logs.fields(warning)["contract_changes"]) == (
        len(committed.retired),
        len(committed.changes),
    )
    assert "tomtom-static-map" not in listed(dispatcher, call_context)
    retired = await dispatcher.call("tomtom-static-map", {"center": {"lat": 52, "lon": 4}}, call_context)
    assert retired.data["error"]["replaced_by"] == ["tomtom-dynamic-map", "tomtom-map-image"]
    renamed = await dispatcher.call(
        "tomtom-ev-search", {"position": [4.9, 52.4], "connectorTypes": ["Tesla"]}, call_context
    )
    assert renamed.data["error"]["send"] == {"connectorSet": ["Tesla"]}


async def test_a_listing_waits_for_a_due_refresh_like_a_call(call_context):
    clock, history = Clock(), [Surface(ledger=HISTORY.ledger)]
    dispatcher, _ = governed(lambda: history[-1], refresh_seconds=5, clock=clock)
    assert "demo-killed" in listed(dispatcher, call_context)
    history.append(HISTORY)  # retired in the admin
    clock.now += 5
    assert [tool.name for tool in await dispatcher.listing(call_context)] == ["demo-live", "demo-next"]


# --- Through a real MCP client, with the tables in the database -----------------------------------


@pytest.fixture
def governed_release(use_registry, monkeypatch, settings, transactional_db):
    """The release registers TOOLS; the database holds HISTORY, written through the services."""
    use_registry(*TOOLS)
    monkeypatch.setattr("tools.registry.default_tools", lambda: list(TOOLS))
    settings.GOVERNANCE_REFRESH_SECONDS = 0.2
    for entry in HISTORY.ledger:
        services.ledger_add(name=entry.name, first_seen=entry.first_seen)
    services.retired_tool_create(name="demo-old", replaced_by=["demo-next"], since=DAY, message="Use next.")
    for change in HISTORY.changes:
        services.contract_change_record(
            tool=change.tool,
            input_name=change.input,
            kind=change.kind,
            since=DAY,
            instead=change.instead,
            new_input=change.new_input,
            was=change.was,
            now=change.now,
        )


def retire_in_another_thread(**fields) -> None:
    """The admin's write, on a thread (and database connection) of its own."""
    try:
        services.retired_tool_create(**fields)
    finally:
        connections.close_all()


def mcp_client(dispatcher: Dispatcher, config, name: str = "old-agent") -> Client:
    server = build_server(dispatcher, stdio_context_factory(config, api_key=None, backend=None))
    return Client(server, client_info=Implementation(name=name, version="1.0"))


async def test_runtime_answers_through_an_mcp_client(governed_release, config, caplog):
    async with mcp_client(build_dispatcher(), config) as client:
        names = [tool.name for tool in (await client.list_tools()).tools]
        retired = await client.call_tool("demo-old", {})
        outdated = await client.call_tool("demo-live", {"query": "Amsterdam", "tags": "a"})
    assert names == ["demo-live", "demo-next", "demo-killed"]
    assert retired.is_error is True
    assert json.loads(retired.content[0].text)["error"] == {
        "code": "retired",
        "message": "demo-old was retired on 2026-10-05; use demo-next instead. Use next.",
        "replaced_by": ["demo-next"],
    }
    assert outdated.is_error is True
    assert json.loads(outdated.content[0].text)["error"]["change"] == "type_changed"
    clients = {
        (line["kind"], line["client"])
        for line in app_status(caplog, "retired_tool") + app_status(caplog, "outdated_call")
    }
    assert clients == {("retired_tool", "old-agent"), ("outdated_call", "old-agent")}


async def test_the_kill_switch_in_process(governed_release, config):
    dispatcher = build_dispatcher()
    async with mcp_client(dispatcher, config) as client:
        assert "demo-killed" in [tool.name for tool in (await client.list_tools()).tools]
        await asyncio.to_thread(retire_in_another_thread, name="demo-killed", replaced_by=["demo-live"])
        await asyncio.sleep(0.25)  # GOVERNANCE_REFRESH_SECONDS
        answer = await client.call_tool("demo-killed", {})
        names = [tool.name for tool in (await client.list_tools(cache_mode="refresh")).tools]
    assert json.loads(answer.content[0].text)["error"]["code"] == "retired"
    assert "demo-killed" not in names
