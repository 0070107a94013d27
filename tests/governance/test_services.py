"""The one write path: the append-only ledger and the rules every write keeps."""

from __future__ import annotations

from datetime import date

import pytest
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models.deletion import Collector

from governance import services
from governance.models import AppendOnlyError, ContractChange, GovernanceEvent, RetiredTool, ToolName
from governance.surface import ChangeKind
from tests.governance.conftest import fake_tool

pytestmark = pytest.mark.django_db

TAGS = {"type": "array", "items": {"type": "string"}}
TO_LIST = {"was": {"type": "string"}, "now": TAGS}


@pytest.fixture
def release(use_registry):
    """demo-live and demo-next are registered; demo-old is a ledger name the release dropped."""
    use_registry(fake_tool("demo-live", query=str, tags=TAGS), fake_tool("demo-next"))
    for name in ("demo-live", "demo-next", "demo-old"):
        services.ledger_add(name=name, first_seen=date(2026, 1, 1))


def messages(error: pytest.ExceptionInfo[ValidationError]) -> dict[str, list[str]]:
    return error.value.message_dict


@pytest.mark.parametrize(
    "delete",
    [
        lambda: ToolName.objects.get(name="demo-old").delete(),
        lambda: ToolName.objects.filter(name="demo-old").delete(),
        lambda: ToolName._base_manager.filter(name="demo-old").delete(),
        lambda: ToolName.objects.all().delete(),
    ],
    ids=["row", "queryset", "base manager", "everything"],
)
def test_ledger_rows_cannot_be_deleted(release, delete):
    with pytest.raises(AppendOnlyError, match="The tool name ledger only grows"):
        delete()
    assert ToolName.objects.filter(name="demo-old").exists()


def test_the_pre_delete_guard_catches_what_bypasses_the_model():
    entry = ToolName.objects.create(name="demo-plain", first_seen=date(2026, 1, 1))
    collector = Collector(using="default")
    collector.collect([entry])  # what a cascade from another model's delete does
    with pytest.raises(AppendOnlyError), transaction.atomic():
        collector.delete()
    assert ToolName.objects.filter(name="demo-plain").exists()


def test_ledger_names_are_never_renamed(release):
    entry = ToolName.objects.get(name="demo-old")
    entry.name = "demo-renamed"
    with pytest.raises(AppendOnlyError):
        entry.save()
    entry.name, entry.note = "demo-old", "a note may change"
    entry.save()


def test_ledger_add_only_adds(release):
    before = ToolName.objects.get(name="demo-live")
    again = services.ledger_add(name="demo-live", first_seen=date(2030, 1, 1), note="ignored")
    assert (again.pk, again.first_seen, again.note) == (before.pk, date(2026, 1, 1), "")
    with pytest.raises(ValidationError) as bad:
        services.ledger_add(name="not a name!")
    assert list(messages(bad)) == ["name"]


def test_retiring_deletes_the_tools_contract_changes(release):
    services.contract_change_record(tool="demo-live", input_name="old", kind=ChangeKind.REMOVED, instead="Drop it.")
    retired = services.retired_tool_create(name="demo-live", replaced_by=["demo-next"], message="Use next.")
    assert (retired.name, retired.replaced_by, retired.message) == ("demo-live", ["demo-next"], "Use next.")
    assert not ContractChange.objects.filter(tool_id="demo-live").exists()


@pytest.mark.parametrize(
    ("name", "replaced_by", "field", "message"),
    [
        ("demo-nowhere", [], "tool", "demo-nowhere is not in the tool name ledger"),
        ("demo-old", ["demo-gone"], "replaced_by", "demo-gone is not a live tool."),
        ("demo-old", ["demo-old"], "replaced_by", "demo-old cannot replace itself."),
        ("demo-old", ["demo-next", "demo-next"], "replaced_by", "names a tool twice."),
    ],
)
def test_retirement_rules(release, name, replaced_by, field, message):
    with pytest.raises(ValidationError) as refused:
        services.retired_tool_create(name=name, replaced_by=replaced_by)
    [text] = messages(refused)[field]
    assert message in text
    assert not RetiredTool.objects.filter(tool_id=name).exists()


def test_a_replacement_must_not_itself_be_retired(release):
    services.retired_tool_create(name="demo-next", replaced_by=["demo-live"])
    with pytest.raises(ValidationError) as refused:
        services.retired_tool_create(name="demo-old", replaced_by=["demo-next"])
    assert messages(refused) == {"replaced_by": ["demo-next is not a live tool."]}


def test_a_name_is_retired_once(release):
    services.retired_tool_create(name="demo-old", replaced_by=["demo-live"])
    with pytest.raises(ValidationError) as refused:
        services.retired_tool_create(name="demo-old", replaced_by=["demo-next"])
    assert list(messages(refused)) == ["tool"]


def test_update_and_unretire_a_retirement(release):
    retired = services.retired_tool_create(name="demo-old", replaced_by=["demo-live"])
    services.retired_tool_update(
        retired=retired, replaced_by=["demo-live", "demo-next"], since=date(2026, 2, 2), release="2.0", message="m"
    )
    stored = RetiredTool.objects.get(tool_id="demo-old")
    assert (stored.replaced_by, stored.since, stored.release) == (["demo-live", "demo-next"], date(2026, 2, 2), "2.0")
    with pytest.raises(ValidationError) as refused:
        services.retired_tool_unretire(retired=stored, reason=" ")
    assert messages(refused) == {"reason": ["Say why you un-retire it: the governance history keeps it."]}
    services.retired_tool_unretire(retired=stored, reason="Retired by mistake.")
    assert not RetiredTool.objects.filter(tool_id="demo-old").exists()
    assert ToolName.objects.filter(name="demo-old").exists()
    assert (
        GovernanceEvent.objects.filter(tool="demo-old")
        .last()
        .message.startswith("Un-retired demo-old: Retired by mistake. replaced_by: demo-live, demo-next;")
    )


@pytest.mark.parametrize(
    ("tool", "input_name", "kind", "shapes", "field", "message"),
    [
        ("demo-live", "query", ChangeKind.REMOVED, {}, "input", "query is still an input of demo-live."),
        (
            "demo-live",
            "query",
            ChangeKind.TYPE_CHANGED,
            TO_LIST,
            "input",
            "query in demo-live's input schema is not a list of strings.",
        ),
        ("demo-live", "gone", ChangeKind.TYPE_CHANGED, TO_LIST, "input", "gone is not an input of demo-live."),
        ("demo-live", "old", ChangeKind.RENAMED, {"new_input": "gone"}, "input", "gone is not an input of demo-live."),
        ("demo-old", "query", ChangeKind.REMOVED, {}, "tool", "demo-old is not a live tool."),
    ],
)
def test_contract_change_rules(release, tool, input_name, kind, shapes, field, message):
    with pytest.raises(ValidationError) as refused:
        services.contract_change_record(tool=tool, input_name=input_name, kind=kind, instead="x", **shapes)
    assert messages(refused) == {field: [message]}


def test_a_retired_tool_takes_no_contract_changes(release):
    services.retired_tool_create(name="demo-old", replaced_by=["demo-live"])
    with pytest.raises(ValidationError) as refused:
        services.contract_change_record(tool="demo-old", input_name="x", kind=ChangeKind.REMOVED, instead="x")
    assert list(messages(refused)) == ["tool"]


def test_record_update_and_delete_a_contract_change(release):
    change = services.contract_change_record(
        tool="demo-live", input_name="tags", kind=ChangeKind.TYPE_CHANGED, instead="Send a list.", **TO_LIST
    )
    with pytest.raises(ValidationError):  # one change per input
        services.contract_change_record(tool="demo-live", input_name="tags", kind=ChangeKind.REMOVED, instead="x")
    with pytest.raises(ValidationError):  # tags is still an input: it was not removed
        services.contract_change_update(change=change, kind=ChangeKind.REMOVED, since=date(2026, 3, 3), instead="x")
    services.contract_change_update(
        change=change, kind=ChangeKind.TYPE_CHANGED, since=date(2026, 3, 3), instead="A list of tags.", **TO_LIST
    )
    assert ContractChange.objects.get(tool_id="demo-live", input="tags").instead == "A list of tags."
    services.contract_change_delete(change=change)
    assert not ContractChange.objects.filter(tool_id="demo-live").exists()


@pytest.mark.parametrize(
    "rename",
    [
        lambda: ToolName.objects.filter(name="demo-old").update(name="demo-renamed"),
        lambda: ToolName.objects.bulk_update(
            [ToolName(pk=ToolName.objects.get(name="demo-old").pk, name="demo-renamed")], ["name"]
        ),
        lambda: ToolName.objects.bulk_create(
            [ToolName(name="demo-old", first_seen=date(2026, 1, 1))],
            update_conflicts=True,
            unique_fields=["name"],
            update_fields=["note"],
        ),
    ],
    ids=["update", "bulk_update", "upsert"],
)
def test_bulk_paths_cannot_rename_ledger_rows(release, rename):
    with pytest.raises(AppendOnlyError, match="The tool name ledger only grows"):
        rename()
    assert ToolName.objects.filter(name="demo-old").exists()
    ToolName.objects.filter(name="demo-old").update(note="notes may be corrected")
    assert ToolName.objects.get(name="demo-old").note == "notes may be corrected"


@pytest.mark.postgresql
@pytest.mark.django_db(transaction=True)
def test_postgresql_refuses_a_raw_sql_rename_or_delete(release):
    from django.db import DatabaseError, connection

    if connection.vendor != "postgresql":
        pytest.skip("the trigger is PostgreSQL's (DATABASE_URL=postgres://...)")
    for sql in (
        "UPDATE tools_toolname SET name = 'demo-renamed' WHERE name = 'demo-old'",
        "DELETE FROM tools_toolname WHERE name = 'demo-old'",
    ):
        refused = pytest.raises(DatabaseError, match="The tool name ledger only grows: demo-old")
        with refused, transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(sql)
    with connection.cursor() as cursor:
        cursor.execute("UPDATE tools_toolname SET note = 'corrected' WHERE name = 'demo-old'")
    assert ToolName.objects.get(name="demo-old").note == "corrected"


def history(name: str) -> list[tuple[str, str, str, str]]:
    return [(e.subject, e.action, e.actor, e.via) for e in GovernanceEvent.objects.filter(tool=name)]


def test_every_write_is_recorded_in_the_history_in_order(release):
    services.contract_change_record(tool="demo-live", input_name="old", kind=ChangeKind.REMOVED, instead="Drop it.")
    change = ContractChange.objects.get(tool_id="demo-live", input="old")
    services.contract_change_update(change=change, kind=ChangeKind.REMOVED, since=change.since, instead="Leave it.")
    retired = services.retired_tool_create(name="demo-live", replaced_by=["demo-next"])
    services.retired_tool_unretire(retired=retired, reason="Back.")
    assert history("demo-live") == [
        ("ledger", "created", "", "code"),
        ("contract_change", "created", "", "code"),
        ("contract_change", "updated", "", "code"),
        ("retirement", "created", "", "code"),
        ("contract_change", "deleted", "", "code"),  # retiring deletes the tool's contract changes
        ("retirement", "deleted", "", "code"),
    ]
    events = list(GovernanceEvent.objects.filter(tool="demo-live"))
    assert events[2].changes == {"instead": ["Drop it.", "Leave it."]}
    assert events[3].message.startswith("Retired demo-live while live (kill switch). replaced_by: demo-next;")
    assert events[4].message.startswith("Deleted the contract change of old (demo-live was retired). kind: removed;")
    assert events[5].message.startswith("Un-retired demo-live: Back. replaced_by: demo-next;")


def test_the_actor_is_the_user_passed_in(release, django_user_model):
    user = django_user_model.objects.create_user("pm")
    services.retired_tool_create(name="demo-old", replaced_by=["demo-next"], by=user, via="admin")
    assert history("demo-old")[-1] == ("retirement", "created", "pm", "admin")


def test_an_update_that_changes_nothing_records_nothing(release):
    retired = services.retired_tool_create(name="demo-old", replaced_by=["demo-next"], message="Same.")
    fields = {"replaced_by": ["demo-next"], "since": retired.since, "release": "", "message": "Same."}
    services.retired_tool_update(retired=retired, **fields)
    assert [action for _, action, _, _ in history("demo-old")] == ["created", "created"]  # ledger, retirement


def test_a_refused_write_records_nothing(release):
    with pytest.raises(ValidationError):
        services.retired_tool_create(name="demo-old", replaced_by=["demo-gone"])
    assert history("demo-old") == [("ledger", "created", "", "code")]


@pytest.mark.parametrize(
    "rewrite",
    [
        lambda event: event.delete(),
        lambda event: GovernanceEvent.objects.filter(pk=event.pk).delete(),
        lambda event: GovernanceEvent.objects.filter(pk=event.pk).update(message="rewritten"),
        lambda event: GovernanceEvent.objects.bulk_update([event], ["message"]),
        lambda event: (setattr(event, "message", "rewritten"), event.save()),
    ],
    ids=["row delete", "queryset delete", "update", "bulk_update", "save"],
)
def test_the_history_only_grows(release, rewrite):
    event = GovernanceEvent.objects.get(tool="demo-old")
    with pytest.raises(AppendOnlyError, match="The governance history only grows"):
        rewrite(event)
    assert GovernanceEvent.objects.get(pk=event.pk).message == "Added demo-old to the tool name ledger. " + (
        "first_seen: 2026-01-01; first_release: —; note: —."
    )
