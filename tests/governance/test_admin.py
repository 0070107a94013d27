"""The admin as product staff use it: every write through the services, explained before it is
saved, and recorded in each tool's governance history with who made it."""

from __future__ import annotations

from datetime import date

import pytest
from django.contrib.admin.models import ADDITION, CHANGE, DELETION, LogEntry
from django.contrib.auth.models import Permission, User
from django.urls import reverse

from governance import services
from governance.models import ContractChange, GovernanceEvent, RetiredTool, ToolName
from governance.surface import ChangeKind
from tests.governance.conftest import fake_tool

pytestmark = pytest.mark.django_db

TAGS = list[str]


@pytest.fixture
def release(use_registry):
    use_registry(fake_tool("demo-live", query=str, tags=TAGS), fake_tool("demo-next"))
    for name in ("demo-live", "demo-next", "demo-old"):
        services.ledger_add(name=name, first_seen=date(2026, 1, 1))


def history(obj) -> list[tuple[int, str]]:
    entries = LogEntry.objects.filter(object_id=str(obj.pk), content_type__model=obj._meta.model_name)
    return [(entry.action_flag, entry.object_repr) for entry in entries.order_by("action_time", "pk")]


def retire_form(**overrides: object) -> dict[str, object]:
    return {
        "tool": "demo-old",
        "replaced_by": ["demo-next"],
        "since": "2026-05-01",
        "release": "",
        "message": "",
        **overrides,
    }


def test_retire_a_dropped_name(admin_client, release):
    response = admin_client.post(
        reverse("admin:tools_retiredtool_add"),
        retire_form(replaced_by=["demo-next", "demo-live"], release="2.0", message="Use next."),
        follow=True,
    )
    assert response.status_code == 200
    retired = RetiredTool.objects.get(tool_id="demo-old")
    assert (retired.replaced_by, retired.since, retired.release, retired.message) == (
        ["demo-next", "demo-live"],
        date(2026, 5, 1),
        "2.0",
        "Use next.",
    )
    assert history(retired) == [(ADDITION, "demo-old (retired)")]
    assert "Kill switch" not in response.content.decode()


def test_retiring_a_live_tool_asks_for_confirmation_first(admin_client, release):
    services.contract_change_record(tool="demo-live", input_name="old", kind=ChangeKind.REMOVED, instead="x")
    form = retire_form(tool="demo-live", replaced_by=["demo-next"])
    unconfirmed = admin_client.post(reverse("admin:tools_retiredtool_add"), form)
    assert unconfirmed.status_code == 200  # the form again
    assert "demo-live is live in this release. Retiring a live tool is the kill switch" in unconfirmed.content.decode()
    assert not RetiredTool.objects.filter(tool_id="demo-live").exists()

    response = admin_client.post(
        reverse("admin:tools_retiredtool_add"), {**form, "confirm_kill_switch": "on"}, follow=True
    )
    page = response.content.decode()
    assert "Kill switch: demo-live is live in this release" in page
    assert "within 5 seconds plus one request" in page
    assert RetiredTool.objects.filter(tool_id="demo-live").exists()
    assert not ContractChange.objects.filter(tool_id="demo-live").exists()


def test_a_dropped_name_needs_no_confirmation(admin_client, release):
    response = admin_client.post(reverse("admin:tools_retiredtool_add"), retire_form())
    assert response.status_code == 302
    assert RetiredTool.objects.filter(tool_id="demo-old").exists()


@pytest.mark.parametrize("seconds, shown", [(5, "5 s"), (12, "12 s"), (0.5, "0.5 s")])
def test_the_retire_pages_state_the_kill_switch_and_its_bound(admin_client, release, settings, seconds, shown):
    settings.GOVERNANCE_REFRESH_SECONDS = seconds
    bound = f"every replica stops listing it and answers calls to it as retired within {shown} plus one request"
    add = admin_client.get(reverse("admin:tools_retiredtool_add"))
    assert add.status_code == 200 and bound in add.content.decode()
    assert "Withdraw it from every replica now" in add.content.decode()
    retired = services.retired_tool_create(name="demo-old", replaced_by=["demo-live"])
    change = admin_client.get(reverse("admin:tools_retiredtool_change", args=[retired.pk]))
    assert change.status_code == 200 and bound in change.content.decode()


def picker_options(page: str, field: str) -> list[str]:
    """The labels a field's <select> options or ordered boxes show, in order."""
    import re

    if f'<select name="{field}"' in page:
        select = page.split(f'<select name="{field}"', 1)[1].split("</select>", 1)[0]
        return [label for label in re.findall(r"<option value=\"[^\"]+\"[^>]*>([^<]+)</option>", select)]
    return re.findall(rf'<td><label for="id_{field}_\d+">([^<]+)</label></td>', page)


def test_the_pickers_offer_live_tools_and_show_each_names_status(admin_client, release, use_registry):
    use_registry(fake_tool("demo-live"), fake_tool("demo-next"), fake_tool("demo-killed"))
    services.ledger_add(name="demo-killed", first_seen=date(2026, 1, 1))
    services.ledger_add(name="demo-gone", first_seen=date(2026, 1, 1))
    services.retired_tool_create(name="demo-gone", replaced_by=["demo-live"])  # dropped, then retired
    services.retired_tool_create(name="demo-killed", replaced_by=["demo-next"])  # live, then retired
    page = admin_client.get(reverse("admin:tools_retiredtool_add")).content.decode()
    assert picker_options(page, "replaced_by") == ["demo-live (live)", "demo-next (live)"]
    ours = [label for label in picker_options(page, "tool") if label.startswith("demo-")]  # the seeded ones: dropped
    assert ours == ["demo-live (live)", "demo-next (live)", "demo-old (dropped)"]
    listing = admin_client.get(reverse("admin:tools_toolname_changelist")).content.decode()
    for name, status in [
        ("demo-gone", "retired"),
        ("demo-killed", "retired"),
        ("demo-live", "live"),
        ("demo-old", "dropped"),
    ]:
        assert f'>{name}</a></th><td class="field-status">{status}</td>' in listing


def test_a_stored_replacement_no_longer_live_is_shown_with_its_status(admin_client, release):
    retired = services.retired_tool_create(name="demo-old", replaced_by=["demo-next"])
    services.retired_tool_create(name="demo-next", replaced_by=["demo-live"])
    page = admin_client.get(reverse("admin:tools_retiredtool_change", args=[retired.pk])).content.decode()
    assert picker_options(page, "replaced_by") == ["demo-next (retired)", "demo-live (live)"]  # stored first
    resave = admin_client.post(
        reverse("admin:tools_retiredtool_change", args=[retired.pk]), retire_form(replaced_by=["demo-next"])
    )
    # the services' reason, on the form, with what to pick instead
    assert "demo-next is not a live tool: it is retired; pick demo-live instead." in resave.content.decode()


def test_a_broken_rule_shows_on_the_form(admin_client, release):
    response = admin_client.post(reverse("admin:tools_retiredtool_add"), retire_form(replaced_by=["demo-gone"]))
    assert response.status_code == 200  # the form again, not a redirect
    assert (
        "demo-gone is not a live tool: this release offers no tool of that name; pick one of the live tools offered."
        in response.content.decode()
    )
    assert not RetiredTool.objects.filter(tool_id="demo-old").exists()


def test_edit_and_unretire(admin_client, release):
    retired = services.retired_tool_create(name="demo-old", replaced_by=["demo-live"])
    change_url = reverse("admin:tools_retiredtool_change", args=[retired.pk])
    response = admin_client.post(change_url, retire_form(replaced_by=["demo-next"], message="Moved."))
    assert response.status_code == 302
    retired.refresh_from_db()
    assert (retired.name, retired.replaced_by, retired.message) == ("demo-old", ["demo-next"], "Moved.")
    assert admin_client.get(reverse("admin:tools_retiredtool_delete", args=[retired.pk])).status_code == 403
    undo_url = reverse("admin:tools_retiredtool_undo", args=[retired.pk])
    page = admin_client.get(change_url).content.decode()
    assert f'href="{undo_url}"' in page and "Un-retire…" in page
    asks = admin_client.get(undo_url).content.decode()
    assert "demo-old is not registered in this release: no tool answers it once un-retired" in asks
    assert admin_client.post(undo_url, {"reason": " "}).status_code == 200  # a reason is required
    response = admin_client.post(undo_url, {"reason": "Retired by mistake."})
    assert response.status_code == 302
    assert not RetiredTool.objects.filter(tool_id="demo-old").exists()
    assert ToolName.objects.filter(name="demo-old").exists()
    assert [flag for flag, _ in history(retired)] == [CHANGE, DELETION]
    event = GovernanceEvent.objects.filter(tool="demo-old").last()
    assert event.message.startswith("Un-retired demo-old: Retired by mistake. replaced_by: demo-next;")


def test_record_and_edit_a_contract_change(admin_client, release):
    form = {
        "tool": "demo-live",
        "input": "tags",
        "kind": "type_changed",
        "new_input": "",
        "was": '{"type": "string"}',
        "now": '{"type": "array", "items": {"type": "string"}}',
        "since": "2026-05-01",
        "instead": "A list.",
    }
    refused = admin_client.post(reverse("admin:tools_contractchange_add"), {**form, "input": "query"})
    assert "query in demo-live&#x27;s input schema is not a list of strings." in refused.content.decode()
    assert admin_client.post(reverse("admin:tools_contractchange_add"), form).status_code == 302
    change = ContractChange.objects.get(tool_id="demo-live", input="tags")
    assert history(change) == [(ADDITION, "demo-live.tags (type_changed)")]
    edit = admin_client.post(
        reverse("admin:tools_contractchange_change", args=[change.pk]), {**form, "instead": "Send tags as a list."}
    )
    assert edit.status_code == 302
    change.refresh_from_db()
    assert change.instead == "Send tags as a list."


def test_ledger_names_stay_but_notes_and_dates_are_corrected_with_a_record(admin_client, admin_user, release):
    entry = ToolName.objects.get(name="demo-old")
    listing = admin_client.get(reverse("admin:tools_toolname_changelist")).content.decode()
    assert "demo-old" in listing and "dropped" in listing
    assert admin_client.get(reverse("admin:tools_toolname_add")).status_code == 403
    assert admin_client.get(reverse("admin:tools_toolname_delete", args=[entry.pk])).status_code == 403
    view = admin_client.get(reverse("admin:tools_toolname_change", args=[entry.pk])).content.decode()
    assert 'name="_save"' in view and 'name="note"' in view and 'name="name"' not in view
    saved = admin_client.post(
        reverse("admin:tools_toolname_change", args=[entry.pk]),
        {"name": "demo-renamed", "first_seen": "2025-06-30", "first_release": "1.0.0", "note": "First public."},
    )
    assert saved.status_code == 302
    entry.refresh_from_db()
    assert (entry.name, entry.first_seen, entry.note) == ("demo-old", date(2025, 6, 30), "First public.")
    event = GovernanceEvent.objects.filter(tool="demo-old").last()
    assert (event.subject, event.action, event.actor, event.via) == ("ledger", "updated", admin_user.username, "admin")
    assert event.message == (
        "Corrected the ledger row of demo-old. first_seen: 2026-01-01 → 2025-06-30; first_release: — → 1.0.0; "
        "note: — → First public."
    )


@pytest.mark.parametrize("staff", [False, True], ids=["not staff", "staff without permissions"])
def test_only_permitted_staff_get_in(client, release, staff):
    user = User.objects.create_user("someone", is_staff=staff)
    client.force_login(user)
    add = client.post(reverse("admin:tools_retiredtool_add"), retire_form())
    if staff:
        assert add.status_code == 403
    else:
        assert add.status_code == 302 and "/admin/login/" in add["Location"]
    assert not RetiredTool.objects.filter(tool_id="demo-old").exists()


def test_staff_with_permissions_edit_through_the_same_services(client, release):
    user = User.objects.create_user("product", is_staff=True)
    user.user_permissions.set(
        Permission.objects.filter(content_type__app_label="tools", codename__in=["add_retiredtool", "view_toolname"])
    )
    client.force_login(user)
    assert client.post(reverse("admin:tools_retiredtool_add"), retire_form()).status_code == 302
    assert client.get(reverse("admin:tools_toolname_changelist")).status_code == 200
    assert RetiredTool.objects.get(tool_id="demo-old").replaced_by == ["demo-next"]


def test_admin_saves_write_governance_events_with_the_user(admin_client, admin_user, release):
    add = admin_client.post(reverse("admin:tools_retiredtool_add"), retire_form(message="Use next."))
    assert add.status_code == 302
    retired = RetiredTool.objects.get(tool_id="demo-old")
    change_url = reverse("admin:tools_retiredtool_change", args=[retired.pk])
    assert admin_client.post(change_url, retire_form(replaced_by=["demo-live"], message="Moved.")).status_code == 302
    undo = admin_client.post(reverse("admin:tools_retiredtool_undo", args=[retired.pk]), {"reason": "Mistake."})
    assert undo.status_code == 302
    events = GovernanceEvent.objects.filter(tool="demo-old", subject="retirement")
    assert [(e.action, e.actor, e.via) for e in events] == [
        ("created", admin_user.username, "admin"),
        ("updated", admin_user.username, "admin"),
        ("deleted", admin_user.username, "admin"),
    ]
    created, updated, _ = events
    assert created.message == (
        "Retired demo-old. replaced_by: demo-next; since: 2026-05-01; release: —; message: Use next."
    )
    assert updated.message == (
        "Changed the retirement of demo-old. replaced_by: demo-next → demo-live; message: Use next. → Moved."
    )
    assert updated.changes == {"replaced_by": [["demo-next"], ["demo-live"]], "message": ["Use next.", "Moved."]}


def test_contract_change_saves_are_recorded_with_the_user(admin_client, admin_user, release):
    form = {
        "tool": "demo-live",
        "input": "gone",
        "kind": "removed",
        "new_input": "",
        "was": "",
        "now": "",
        "since": "2026-05-01",
        "instead": "Leave it out.",
    }
    assert admin_client.post(reverse("admin:tools_contractchange_add"), form).status_code == 302
    change = ContractChange.objects.get(tool_id="demo-live", input="gone")
    assert admin_client.post(reverse("admin:tools_contractchange_delete", args=[change.pk]), {"post": "yes"})
    events = GovernanceEvent.objects.filter(tool="demo-live", subject="contract_change")
    assert [(e.action, e.actor) for e in events] == [("created", admin_user.username), ("deleted", admin_user.username)]
    assert events[0].message.startswith("Recorded a contract change: gone removed. kind: removed;")


def test_the_history_page_lists_every_change_in_order(admin_client, admin_user, release):
    services.retired_tool_create(
        name="demo-old", replaced_by=["demo-live"], message="First.", by=admin_user, via="admin"
    )
    retired = RetiredTool.objects.get(tool_id="demo-old")
    services.retired_tool_update(
        retired=retired, replaced_by=["demo-next"], since=retired.since, release="2.0", message="Second."
    )
    page = admin_client.get(reverse("admin:tools_toolname_governance", args=["demo-old"])).content.decode()
    rows = page.split('<table id="governance-history">', 1)[1].split("</table>", 1)[0].split("<tr>")[2:]
    assert len(rows) == 3
    assert "Added demo-old to the tool name ledger" in rows[0] and "<td>code</td>" in rows[0]
    assert f"<td>{admin_user.username} (admin)</td>" in rows[1] and "message: First." in rows[1]
    assert "retirement created" in rows[1]
    assert "<td>code</td>" in rows[2] and "message: First. → Second." in rows[2] and "retirement updated" in rows[2]
    assert 'id="tool-status">retired<' in page
    assert "/analytics/widgets/?tool=demo-old#old-callers" in page


def test_the_history_and_old_callers_are_linked_from_the_ledger_and_the_retirement(admin_client, release):
    retired = services.retired_tool_create(name="demo-old", replaced_by=["demo-live"])
    history_url = reverse("admin:tools_toolname_governance", args=["demo-old"])
    listing = admin_client.get(reverse("admin:tools_toolname_changelist")).content.decode()
    assert f'href="{history_url}"' in listing
    retirement_page = admin_client.get(reverse("admin:tools_retiredtool_change", args=[retired.pk])).content.decode()
    assert f'href="{history_url}"' in retirement_page
    assert 'href="/analytics/widgets/?tool=demo-old#old-callers"' in retirement_page
    old_callers = admin_client.get("/analytics/widgets/?tool=demo-old")
    assert old_callers.status_code == 200 and 'id="old-callers"' in old_callers.content.decode()


def test_the_history_page_needs_its_permission_and_a_known_name(client, admin_client, release):
    assert admin_client.get(reverse("admin:tools_toolname_governance", args=["demo-unknown"])).status_code == 404
    user = User.objects.create_user("viewer", is_staff=True)
    user.user_permissions.set(Permission.objects.filter(content_type__app_label="tools", codename="view_toolname"))
    client.force_login(user)
    assert client.get(reverse("admin:tools_toolname_governance", args=["demo-old"])).status_code == 403
    user.user_permissions.add(Permission.objects.get(codename="view_governanceevent"))
    assert client.get(reverse("admin:tools_toolname_governance", args=["demo-old"])).status_code == 200


def test_the_history_is_read_only_in_the_admin(admin_client, release):
    event = GovernanceEvent.objects.get(tool="demo-old")
    assert admin_client.get(reverse("admin:tools_governanceevent_changelist")).status_code == 200
    assert admin_client.get(reverse("admin:tools_governanceevent_add")).status_code == 403
    assert admin_client.get(reverse("admin:tools_governanceevent_delete", args=[event.pk])).status_code == 403
