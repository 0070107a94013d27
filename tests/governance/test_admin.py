"""The admin as product staff use it: every write through the services, history as the audit trail."""

from __future__ import annotations

from datetime import date

import pytest
from django.contrib.admin.models import ADDITION, CHANGE, DELETION, LogEntry
from django.contrib.auth.models import Permission, User
from django.urls import reverse

from tests.governance.conftest import fake_tool
from tools.governance import services
from tools.governance.surface import ChangeKind
from tools.models import ContractChange, RetiredTool, ToolName

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


def retire_form(**overrides: str) -> dict[str, str]:
    return {
        "tool": "demo-old",
        "replaced_by": "demo-next",
        "since": "2026-05-01",
        "release": "",
        "message": "",
        **overrides,
    }


def test_retire_a_dropped_name(admin_client, release):
    response = admin_client.post(
        reverse("admin:tools_retiredtool_add"),
        retire_form(replaced_by="demo-next, demo-live", release="2.0", message="Use next."),
        follow=True,
    )
    assert response.status_code == 200
    retired = RetiredTool.objects.get(tool_id="demo-old")
    assert (retired.replaced_by, retired.since, retired.release, retired.message) == (
        ["demo-next", "demo-live"], date(2026, 5, 1), "2.0", "Use next.",
    )  # fmt: skip
    assert history(retired) == [(ADDITION, "demo-old (retired)")]
    assert "Kill switch" not in response.content.decode()


def test_retiring_a_live_tool_is_the_kill_switch(admin_client, release):
    services.contract_change_record(tool="demo-live", input_name="old", kind=ChangeKind.REMOVED, instead="x")
    response = admin_client.post(
        reverse("admin:tools_retiredtool_add"), retire_form(tool="demo-live", replaced_by="demo-next"), follow=True
    )
    page = response.content.decode()
    assert "Kill switch: demo-live is live in this release" in page
    assert "within 5 seconds" in page
    assert RetiredTool.objects.filter(tool_id="demo-live").exists()
    assert not ContractChange.objects.filter(tool_id="demo-live").exists()


def test_a_broken_rule_shows_on_the_form(admin_client, release):
    response = admin_client.post(reverse("admin:tools_retiredtool_add"), retire_form(replaced_by="demo-gone"))
    assert response.status_code == 200  # the form again, not a redirect
    assert "demo-gone is not a live tool." in response.content.decode()
    assert not RetiredTool.objects.filter(tool_id="demo-old").exists()


def test_edit_and_unretire(admin_client, release):
    retired = services.retired_tool_create(name="demo-old", replaced_by=["demo-live"])
    change_url = reverse("admin:tools_retiredtool_change", args=[retired.pk])
    response = admin_client.post(change_url, retire_form(replaced_by="demo-next", message="Moved."))
    assert response.status_code == 302
    retired.refresh_from_db()
    assert (retired.name, retired.replaced_by, retired.message) == ("demo-old", ["demo-next"], "Moved.")
    response = admin_client.post(reverse("admin:tools_retiredtool_delete", args=[retired.pk]), {"post": "yes"})
    assert response.status_code == 302
    assert not RetiredTool.objects.filter(tool_id="demo-old").exists()
    assert ToolName.objects.filter(name="demo-old").exists()
    assert [flag for flag, _ in history(retired)] == [CHANGE, DELETION]


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


def test_the_ledger_is_read_only(admin_client, release):
    entry = ToolName.objects.get(name="demo-old")
    listing = admin_client.get(reverse("admin:tools_toolname_changelist")).content.decode()
    assert "demo-old" in listing and "not registered" in listing
    assert admin_client.get(reverse("admin:tools_toolname_add")).status_code == 403
    assert admin_client.get(reverse("admin:tools_toolname_delete", args=[entry.pk])).status_code == 403
    view = admin_client.get(reverse("admin:tools_toolname_change", args=[entry.pk]))
    assert view.status_code == 200 and 'name="_save"' not in view.content.decode()
    rename = admin_client.post(reverse("admin:tools_toolname_change", args=[entry.pk]), {"name": "demo-renamed"})
    assert rename.status_code == 403
    assert ToolName.objects.filter(name="demo-old").exists()


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
