"""Governance that one bad row or clock cannot take down (issue #47): a row written around the
services is left out, logged and reported, never fatal; the alias services refuse mappings that
are not one to one; a failing GOVERNANCE_CLOCK is reported by `check` and fails no call; and a
rehearsal clock set ahead retires a tool in its own process only, writing nothing."""

from __future__ import annotations

import asyncio
import json
import logging
import threading
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pytest
from django.core.checks import Error
from django.core.exceptions import ValidationError
from django.core.management import call_command
from django.core.management.base import SystemCheckError
from django.db import connection
from mcp_types import Implementation

from governance import checks, clock, fixtures, selectors, services
from governance.models import GovernanceEvent, RetiredTool, ToolAlias
from governance.runtime import Governance, fire_due, read_tables
from governance.surface import MAX_ALIAS_ARGUMENTS, Deprecation, LedgerEntry, Surface, loads
from tests.conftest import http_client, server_process
from tests.governance.conftest import fake_tool
from tests.governance.test_kill_switch import run_django, shared_database
from tests.support import clock as test_clock
from tests.support import logs
from tools.context import CallContext
from tools.dispatch import Dispatcher
from tools.registry import Registry

TOOLS = [fake_tool("demo-live", query=str), fake_tool("demo-next", query=str, limit=int)]
LISTED = date(2026, 1, 1)
RAISING = "tests.governance.test_robustness.raising_clock"
STRING = "tests.governance.test_robustness.string_clock"


def raising_clock() -> datetime:
    raise RuntimeError("NTP unreachable")


def string_clock() -> str:
    return "2027-01-15"


@pytest.fixture(autouse=True)
def fresh_clock_state(monkeypatch):
    """Each test starts with a clock that has not failed yet (the failure is logged once a process)."""
    monkeypatch.setattr(clock, "_failure", None)


@pytest.fixture
def release(use_registry):
    """demo-live and demo-next are registered and ledgered; demo-old is an old name."""
    use_registry(*TOOLS)
    for name in ("demo-live", "demo-next", "demo-old"):
        services.ledger_add(name=name, first_seen=LISTED)


def governance_of(registry: Registry, refresh_seconds: float = 0, **kwargs) -> tuple[Dispatcher, Governance]:
    governance = Governance(refresh_seconds=refresh_seconds, tools={tool.name: tool for tool in registry}, **kwargs)
    governance.prime()
    dispatcher = Dispatcher(
        registry,
        interceptors=(governance.resolve_alias, governance.intercept, governance.annotate),
        listing_filters=(governance.filter_listing,),
        refreshers=(governance.refresh_if_due,),
    )
    return dispatcher, governance


def by_sql(statement: str, *params: object) -> None:
    """A write around the services, as an operator's SQL console would make it."""
    with connection.cursor() as cursor:
        cursor.execute(statement, params)


# --- The alias services: one to one, named, bounded ---------------------------------------------


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("arguments", "refusal"),
    [
        (
            {"q": "query", "text": "query"},
            "q and text are both mapped to query: map one of them to query and the other to null (or to another "
            "input).",
        ),
        (
            {"": "query"},
            "an old argument name (mapped to query) is empty: name the argument callers send, or leave the entry out.",
        ),
        (
            {f"old{n}": None for n in range(10_000)},
            f"10000 arguments renamed, more than {MAX_ALIAS_ARGUMENTS}: map only the ones callers still send.",
        ),
    ],
    ids=["two-onto-one", "empty-name", "ten-thousand"],
)
def test_the_alias_services_refuse_a_mapping_that_is_not_one_to_one(release, arguments, refusal):
    with pytest.raises(ValidationError) as refused:
        services.alias_create(name="demo-old", target="demo-next", arguments=arguments)

    assert refused.value.message_dict == {"arguments": [refusal]}
    assert not ToolAlias.objects.filter(tool_id="demo-old").exists()


@pytest.mark.django_db
def test_a_too_long_new_name_is_refused_with_its_bound(release):
    with pytest.raises(ValidationError) as refused:
        services.alias_create(name="demo-old", target="demo-next", arguments={"q": "x" * 129})

    assert refused.value.message_dict == {
        "arguments": [
            "the new name of q " + "x" * 40 + "... is 129 characters, more than 128: map it to an input of the "
            "target, or to null to leave it out."
        ]
    }


def test_a_fixture_mapping_two_old_names_onto_one_input_cannot_be_read():
    history = json.loads(fixtures.FIXTURE_PATH.read_text(encoding="utf-8"))
    history["aliases"].append(
        {
            "name": "tomtom-search",
            "target": "tomtom-fuzzy-search",
            "arguments": {"q": "query", "text": "query"},
            "since": "2026-01-01",
            "retire_on": None,
            "reason": "",
        }
    )

    with pytest.raises(TypeError) as unreadable:
        loads(json.dumps(history))

    assert str(unreadable.value) == (
        "an alias's arguments: q and text are both mapped to query: map one of them to query and the other to "
        "null (or to another input)"
    )


# --- A bad row written by SQL ------------------------------------------------------------------


def bad_alias_row() -> None:
    """demo-old made an alias through the services, then its mapping rewritten as a JSON list by SQL;
    demo-live deprecated, a good row beside it."""
    services.alias_create(name="demo-old", target="demo-next", arguments={"q": "query"})
    services.deprecation_create(name="demo-live", replaced_by=["demo-next"], reason="Merged.")
    by_sql(f"UPDATE {ToolAlias._meta.db_table} SET arguments = %s WHERE name = %s", '["q", "query"]', "demo-old")


E120_MESSAGE = (
    "A row of the alias table (database) does not validate and is left out of the rules: the arguments are a "
    'JSON array, not an object of argument names, {"old_name": "new_name"} (null for new_name leaves it out).'
)


@pytest.mark.django_db
def test_check_database_names_the_bad_row_instead_of_crashing(release):
    bad_alias_row()

    issues = checks.check_tables(databases=["default"])

    assert [issue for issue in issues if issue.id == "tools.E120"] == [
        Error(E120_MESSAGE, hint=checks.E120_HINT, obj="demo-old", id="tools.E120")
    ]
    with pytest.raises(SystemCheckError, match=r"tools\.E120"):
        call_command("check", "--database", "default")


@pytest.mark.django_db(transaction=True)
def test_two_refreshes_skip_the_bad_row_and_keep_the_rest(release, caplog, config):
    bad_alias_row()
    registry = Registry(TOOLS)
    context = CallContext(config=config, transport="stdio", client_name="old-agent")
    answered: dict[str, object] = {}

    def replica(name: str) -> None:
        dispatcher, governance = governance_of(registry, 60, load=read_tables)  # one refresh: the first read
        listing = asyncio.run(dispatcher.listing(context))
        outcome = asyncio.run(dispatcher.call("demo-live", {"query": "Dam"}, context))
        answered[name] = (
            [tool.name for tool in listing],
            outcome.data.get("notice"),
            asyncio.run(governance.readiness()),
        )

    with caplog.at_level(logging.WARNING, logger="tools.governance"):
        threads = [threading.Thread(target=replica, args=(name,)) for name in ("one", "two")]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(30)

    notice = "demo-live is deprecated: use demo-next instead."
    for name in ("one", "two"):
        listed, said, (ready, detail) = answered[name]  # type: ignore[misc]
        assert listed == ["demo-live", "demo-next"] and said == notice
        assert ready is True
        assert detail.endswith("; warning: 1 row left out, not valid (demo-old; check tools.E120)")
    skipped = [r for r in caplog.records if r.getMessage() == "Tool-surface rows skipped: they do not validate"]
    assert len(skipped) == 2  # one line per refresh, one refresh per replica
    assert logs.fields(skipped[0]) == {
        "rows": 1,
        "tools": ["demo-old"],
        "error": "alias demo-old: the arguments are a JSON array, not an object of argument names, "
        '{"old_name": "new_name"} (null for new_name leaves it out)',
    }


@pytest.mark.django_db
def test_export_leaves_the_bad_row_out_and_says_so(release, tmp_path):
    bad_alias_row()
    out, err = _export(tmp_path / "exported.json")
    assert "Left out a row of the alias table (demo-old): the arguments are a JSON array" in err
    exported = json.loads((tmp_path / "exported.json").read_text())
    assert "demo-old" not in [alias["name"] for alias in exported["aliases"]]
    assert "demo-live" in [deprecated["name"] for deprecated in exported["deprecated"]]
    assert out.startswith("Wrote ")


@pytest.mark.django_db
def test_the_alias_admin_lists_the_bad_row_instead_of_failing(release, admin_client):
    bad_alias_row()

    response = admin_client.get("/admin/tools/toolalias/")

    assert response.status_code == 200
    assert "not valid, left out of the rules (check tools.E120)" in response.content.decode()


@pytest.mark.django_db
def test_a_retire_on_date_still_fires_beside_a_bad_row(release):
    retire_on = datetime.now(UTC).date() + timedelta(days=30)
    services.alias_create(name="demo-old", target="demo-next", arguments={"q": "query"}, retire_on=retire_on)
    services.deprecation_create(name="demo-live", replaced_by=["demo-next"], retire_on=retire_on)
    by_sql(f"UPDATE {ToolAlias._meta.db_table} SET arguments = %s WHERE name = %s", '["q", "query"]', "demo-old")

    assert services.scheduled_retirements_fire(day=retire_on) == ["demo-live"]
    assert RetiredTool.objects.filter(tool_id="demo-live").exists()
    assert not RetiredTool.objects.filter(tool_id="demo-old").exists()  # left for the operator (tools.E120)


def _export(path: Path) -> tuple[str, str]:
    import io

    out, err = io.StringIO(), io.StringIO()
    call_command("export_tool_surface", output=path, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


# --- A failing GOVERNANCE_CLOCK -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "problem"),
    [
        (RAISING, f"GOVERNANCE_CLOCK {RAISING!r} raised RuntimeError: NTP unreachable"),
        (STRING, f"GOVERNANCE_CLOCK {STRING!r} returned str '2027-01-15', not a datetime"),
        ("tests.governance.nowhere.now", "GOVERNANCE_CLOCK 'tests.governance.nowhere.now' cannot be imported"),
        (
            "tests.governance.test_robustness.LISTED",
            "GOVERNANCE_CLOCK 'tests.governance.test_robustness.LISTED' is a date",
        ),
    ],
    ids=["raises", "string", "missing", "not-callable"],
)
def test_check_reports_a_clock_that_cannot_say_the_time(settings, path, problem):
    settings.GOVERNANCE_CLOCK = path

    [issue] = checks.check_clock()

    assert issue.id == "tools.E019" and issue.obj == "GOVERNANCE_CLOCK" and issue.hint == checks.E019_HINT
    assert issue.msg.startswith(f"The governance clock cannot say what time it is: {problem}")


def test_check_names_the_clock_and_its_message_never_a_traceback(settings):
    settings.GOVERNANCE_CLOCK = RAISING

    assert checks.check_clock() == [
        Error(
            f"The governance clock cannot say what time it is: GOVERNANCE_CLOCK {RAISING!r} raised RuntimeError: "
            "NTP unreachable.",
            hint=checks.E019_HINT,
            obj="GOVERNANCE_CLOCK",
            id="tools.E019",
        )
    ]
    with pytest.raises(SystemCheckError, match=r"tools\.E019"):
        call_command("check")


def test_a_clock_that_answers_is_not_reported(settings):
    settings.GOVERNANCE_CLOCK = test_clock.PATH
    assert checks.check_clock() == []


@pytest.mark.parametrize("path", [RAISING, STRING])
async def test_a_failing_clock_fails_no_call_and_is_logged_once(settings, caplog, path, config):
    settings.GOVERNANCE_CLOCK = path
    registry = Registry(TOOLS)
    today = datetime.now(UTC).date()
    history = Surface(
        ledger=tuple(LedgerEntry(tool.name, LISTED) for tool in TOOLS),
        deprecated=(Deprecation("demo-live", ("demo-next",), LISTED, today + timedelta(days=30), "Merged."),),
    )
    context = CallContext(config=config, transport="stdio", client_name="old-agent")

    with caplog.at_level(logging.WARNING, logger="tools.governance"):
        dispatcher, governance = governance_of(registry, load=lambda: history)
        first = await dispatcher.call("demo-live", {"query": "Dam"}, context)
        second = await dispatcher.call("demo-next", {"query": "Dam"}, context)
        listed = [tool.name for tool in await dispatcher.listing(context)]
        ready, detail = await governance.readiness()

    assert first.is_error is False and first.data["echo"] == {"query": "Dam"}
    assert first.data["notice"].startswith("demo-live is deprecated, retired on")  # judged by the system clock
    assert second.is_error is False and listed == ["demo-live", "demo-next"]
    assert ready is True and f"; warning: dates judged by the system clock, GOVERNANCE_CLOCK {path!r}" in detail
    failed = [
        r for r in caplog.records if r.getMessage() == "Governance clock failed: judging dates by the system clock"
    ]
    assert len(failed) == 1 and logs.fields(failed[0])["error"].startswith(f"GOVERNANCE_CLOCK {path!r}")


@pytest.mark.django_db
def test_readyz_warns_of_a_failing_clock_and_stays_ready(client, settings):
    settings.GOVERNANCE_CLOCK = RAISING

    response = client.get("/readyz")

    assert response.status_code == 200, response.content
    governance = response.json()["checks"]["governance"]
    assert governance["ok"] is True
    assert governance["detail"].endswith(
        f"; warning: dates judged by the system clock, GOVERNANCE_CLOCK {RAISING!r} raised RuntimeError: "
        "NTP unreachable"
    )


# --- A rehearsal clock writes nothing -----------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_a_rehearsal_retires_in_its_own_view_and_writes_nothing(release, config):
    system = datetime.now(UTC).date()
    retire_on = system + timedelta(days=30)
    services.deprecation_create(name="demo-live", replaced_by=["demo-next"], retire_on=retire_on, reason="Merged.")
    registry = Registry(TOOLS)
    context = CallContext(config=config, transport="stdio", client_name="old-agent")

    def answers(governance_today) -> tuple[list[str], object]:
        dispatcher, _ = governance_of(registry, load=read_tables, fire=fire_due, today=governance_today)
        listed = [tool.name for tool in asyncio.run(dispatcher.listing(context))]
        outcome = asyncio.run(dispatcher.call("demo-live", {"query": "Dam"}, context))
        return listed, outcome.data.get("error", {}).get("code")  # type: ignore[union-attr]

    rehearsing = answers(lambda: retire_on)
    normal = answers(lambda: system)

    assert rehearsing == (["demo-next"], "retired")
    assert normal == (["demo-live", "demo-next"], None)
    assert not RetiredTool.objects.filter(tool_id="demo-live").exists()
    assert not GovernanceEvent.objects.filter(tool="demo-live", subject="retirement").exists()
    assert selectors.ledger_statuses()["demo-live"] == "deprecated"


# --- Real server processes on one database ------------------------------------------------------


def readyz(base: str) -> tuple[int, dict]:
    import httpx

    response = httpx.get(base + "/readyz", timeout=10)
    return response.status_code, response.json()


async def listed_on(base: str) -> dict[str, str]:
    async with http_client(base + "/mcp", client_info=Implementation(name="agent", version="1")) as client:
        return {tool.name: tool.description for tool in (await client.list_tools(cache_mode="bypass")).tools}


@pytest.mark.live_server_process
async def test_a_bad_alias_row_takes_no_replica_out(tmp_path):
    with shared_database(tmp_path) as database:
        run_django(
            database,
            """
from datetime import date
from django.db import connection
from governance import services
from governance.models import ToolAlias
services.ledger_add(name="tomtom-search", first_seen=date(2025, 6, 30))
services.alias_create(name="tomtom-search", target="tomtom-fuzzy-search", arguments={"q": "query"})
services.deprecation_create(name="tomtom-traffic", replaced_by=["tomtom-routing"], reason="Merged.")
with connection.cursor() as cursor:
    cursor.execute(f"UPDATE {ToolAlias._meta.db_table} SET arguments = %s WHERE name = %s",
                   ['["q", "query"]', "tomtom-search"])
""",
        )
        env = {"DATABASE_URL": database, "GOVERNANCE_REFRESH_SECONDS": "1"}
        with server_process(env) as first, server_process(env) as second:
            for base in (first, second):
                status, body = readyz(base)
                assert status == 200, body
                assert body["checks"]["governance"]["detail"].endswith(
                    "; warning: 1 row left out, not valid (tomtom-search; check tools.E120)"
                )
                listed = await listed_on(base)
                assert "tomtom-search" not in listed
                assert listed["tomtom-traffic"].startswith("Deprecated")  # the rows beside it still govern
        log = server_process.last_log  # type: ignore[attr-defined]
    skipped = [json.loads(line) for line in log.splitlines() if "Tool-surface rows skipped" in line]
    assert skipped and skipped[0]["tools"] == ["tomtom-search"] and skipped[0]["level"] == "warning"


@pytest.mark.live_server_process
async def test_a_rehearsal_replica_beside_a_normal_one_writes_nothing(tmp_path):
    retire_on = datetime.now(UTC).date() + timedelta(days=30)
    clock_file = tmp_path / "now"
    test_clock.write(clock_file, datetime.combine(retire_on, datetime.min.time(), UTC) + timedelta(seconds=1))
    with shared_database(tmp_path) as database:
        run_django(
            database,
            f"""
from datetime import date
from governance import services
services.deprecation_create(name="tomtom-traffic", replaced_by=["tomtom-routing"],
                            retire_on=date.fromisoformat("{retire_on.isoformat()}"), reason="Merged.")
""",
        )
        env = {"DATABASE_URL": database, "GOVERNANCE_REFRESH_SECONDS": "1"}
        rehearsal = {**env, "GOVERNANCE_CLOCK": test_clock.PATH, test_clock.CLOCK_FILE: str(clock_file)}
        with server_process(rehearsal) as rehearsing, server_process(env) as normal:
            assert "tomtom-traffic" not in await listed_on(rehearsing)
            async with http_client(rehearsing + "/mcp", client_info=Implementation(name="a", version="1")) as c:
                answer = json.loads(
                    (await c.call_tool("tomtom-traffic", {"bbox": [4.8, 52.3, 4.9, 52.4]})).content[0].text
                )
            assert answer["error"]["code"] == "retired"
            await asyncio.sleep(1.5)  # a refresh on each side, had anything been written
            assert (await listed_on(normal))["tomtom-traffic"].startswith("Deprecated")
            assert readyz(normal)[0] == 200 and readyz(rehearsing)[0] == 200
        written = tmp_path / "written.json"
        run_django(
            database,
            f"""
import json
from governance.models import GovernanceEvent, RetiredTool
json.dump({{
    "retired": RetiredTool.objects.filter(tool_id="tomtom-traffic").count(),
    "events": GovernanceEvent.objects.filter(tool="tomtom-traffic", subject="retirement").count(),
}}, open({str(written)!r}, "w"))
""",
        )
    assert json.loads(written.read_text()) == {"retired": 0, "events": 0}
