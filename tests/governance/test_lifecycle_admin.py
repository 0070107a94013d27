"""The lifecycle in the admin as product staff use it: deprecate with ordered replacements and a
date, alias, retire now, withdraw or un-retire with a reason, see who still calls, and compare the
admin's state with the committed fixture."""

from __future__ import annotations

import json
from datetime import date

import pytest
from django.urls import reverse

from core.app_status import DeprecatedToolCalled
from governance import fixtures, selectors, services
from governance.models import DeprecatedTool, GovernanceEvent, RetiredTool, ToolAlias
from governance.surface import loads
from tests.analytics.conftest import ingest, line
from tests.governance.conftest import fake_tool

pytestmark = pytest.mark.django_db


@pytest.fixture
def release(use_registry, governance_clock):
    use_registry(fake_tool("demo-live", query=str, old=str), fake_tool("demo-next", query=str), fake_tool("demo-other"))
    for name in ("demo-live", "demo-next", "demo-other", "demo-old"):
        services.ledger_add(name=name, first_seen=date(2026, 1, 1))


def deprecate_form(**overrides: object) -> dict[str, object]:
    return {
        "tool": "demo-live",
        "replaced_by__demo-next": "2",
        "replaced_by__demo-other": "1",
        "retire_on": "2027-01-15",
        "reason": "Merged.",
        "since": "2027-01-10",
        **overrides,
    }


def test_deprecate_with_replacements_in_the_order_numbered(admin_client, admin_user, release):
    page = admin_client.get(reverse("admin:tools_deprecatedtool_add")).content.decode()
    assert 'name="replaced_by__demo-next"' in page and "within 5 s plus one request" in page
    assert admin_client.post(reverse("admin:tools_deprecatedtool_add"), deprecate_form()).status_code == 302
    row = DeprecatedTool.objects.get(tool_id="demo-live")
    assert (row.replaced_by, row.retire_on, row.reason) == (["demo-other", "demo-next"], date(2027, 1, 15), "Merged.")
    event = GovernanceEvent.objects.get(tool="demo-live", subject="deprecation")
    assert (event.actor, event.via) == (admin_user.username, "admin")
    change = admin_client.get(reverse("admin:tools_deprecatedtool_change", args=[row.pk])).content.decode()
    assert "Deprecated, retired on 2027-01-15: use demo-other or demo-next instead." in change  # the notice
    assert 'value="1"' in change.split('name="replaced_by__demo-other"', 1)[1][:40]


@pytest.mark.parametrize(
    ("overrides", "shown"),
    [
        ({"retire_on": "2027-01-10"}, "2027-01-10 is not after today (2027-01-10, UTC): retire the tool now instead."),
        (
            {"replaced_by__demo-next": "", "replaced_by__demo-other": "", "replaced_by__demo-live": "1"},
            "demo-live cannot replace itself.",
        ),
    ],
    ids=["date not in the future", "itself"],
)
def test_a_broken_rule_shows_on_the_deprecation_form(admin_client, release, overrides, shown):
    response = admin_client.post(reverse("admin:tools_deprecatedtool_add"), deprecate_form(**overrides))
    assert response.status_code == 200 and shown in response.content.decode()
    assert not DeprecatedTool.objects.exists()


def test_withdraw_a_deprecation_and_retire_one_now(admin_client, release):
    row = services.deprecation_create(name="demo-live", replaced_by=["demo-next"], reason="Merged.")
    change_url = reverse("admin:tools_deprecatedtool_change", args=[row.pk])
    page = admin_client.get(change_url).content.decode()
    retire_url = reverse("admin:tools_retiredtool_add") + "?tool=demo-live"
    assert f'href="{retire_url}"' in page and "Retire it now…" in page
    assert admin_client.get(reverse("admin:tools_deprecatedtool_delete", args=[row.pk])).status_code == 403
    prefilled = admin_client.get(retire_url).content.decode()
    assert 'value="1"' in prefilled.split('name="replaced_by__demo-next"', 1)[1][:40]
    assert "Merged.</textarea>" in prefilled
    undo = reverse("admin:tools_deprecatedtool_undo", args=[row.pk])
    assert "demo-live becomes a plain live tool again" in admin_client.get(undo).content.decode()
    assert admin_client.post(undo, {"reason": "Customers need it."}).status_code == 302
    assert not DeprecatedTool.objects.exists()
    assert (
        GovernanceEvent.objects.filter(tool="demo-live")
        .last()
        .message.startswith("Withdrew the deprecation of demo-live: Customers need it.")
    )


def test_an_alias_with_an_argument_mapping(admin_client, release):
    form = {
        "tool": "demo-old",
        "target": "demo-next",
        "arguments": "q = query\nui =",
        "retire_on": "2027-03-01",
        "reason": "Renamed.",
        "since": "2027-01-10",
    }
    wrong = admin_client.post(reverse("admin:tools_toolalias_add"), {**form, "arguments": "q = qeury"})
    assert "qeury (for q) is not an input of demo-next." in wrong.content.decode()
    assert admin_client.post(reverse("admin:tools_toolalias_add"), form).status_code == 302
    alias = ToolAlias.objects.get(tool_id="demo-old")
    assert (alias.target_id, alias.arguments) == ("demo-next", {"q": "query", "ui": None})
    live = admin_client.post(reverse("admin:tools_toolalias_add"), {**form, "tool": "demo-other", "arguments": ""})
    assert "demo-other is live in this release: its calls will reach demo-next instead of its own code" in (
        live.content.decode()
    )
    assert not ToolAlias.objects.filter(tool_id="demo-other").exists()
    undo = reverse("admin:tools_toolalias_undo", args=[alias.pk])
    assert "Calls to demo-old stop reaching demo-next" in admin_client.get(undo).content.decode()
    assert admin_client.post(undo, {"reason": "Nobody calls it."}).status_code == 302
    assert not ToolAlias.objects.filter(tool_id="demo-old").exists()


def test_each_tools_page_shows_who_still_calls_it(admin_client, release):
    from datetime import UTC, datetime, timedelta

    row = services.deprecation_create(name="demo-live", replaced_by=["demo-next"])
    yesterday = (datetime.now(UTC) - timedelta(days=1)).replace(microsecond=0).isoformat().replace("+00:00", "")
    ingest(
        line(
            DeprecatedToolCalled,
            yesterday,
            tool="demo-live",
            client="claude-ai",
            tenant="acme",
            replaced_by=["demo-next"],
        ),
        line(DeprecatedToolCalled, yesterday, tool="demo-live", client="fleet-agent", replaced_by=["demo-next"]),
    )
    page = admin_client.get(reverse("admin:tools_deprecatedtool_change", args=[row.pk])).content.decode()
    panel = page.split('id="still-calling"', 1)[1].split("</fieldset>", 1)[0]
    assert "Who still calls demo-live" in panel
    cells = [row.split("<td>")[1:4] for row in panel.split("<tr>")[2:]]
    assert [[cell.split("</td>")[0] for cell in cells_of] for cells_of in cells] == [
        ["Claude (desktop, web)", "claude-ai", "acme"],
        ["fleet-agent", "fleet-agent", "— (API key)"],
    ]
    assert "/api/analytics/still-calling?tool=demo-live" in panel


def test_the_fixture_page_shows_the_change_offers_the_file_and_says_what_check_deploy_reports(
    admin_client, governance_clock, tmp_path, monkeypatch
):
    committed = tmp_path / "tool_surface.json"
    fixtures.write_fixture(selectors.tool_surface(), committed)  # the release's own history, as committed
    monkeypatch.setattr(fixtures, "FIXTURE_PATH", committed)
    url = reverse("admin:tools_toolname_fixture")
    assert "nothing to export" in admin_client.get(url).content.decode()
    assert 'id="checks-now">No issues: it passes.' in admin_client.get(url).content.decode()
    services.deprecation_create(name="tomtom-traffic", replaced_by=["tomtom-routing"], retire_on=date(2027, 1, 15))
    page = admin_client.get(url).content.decode()
    assert "disagree in: <strong>deprecated tools</strong>" in page
    assert "<td>deprecated</td><td>tomtom-traffic</td><td>added</td>" in page
    assert '<span class="added">+      &quot;name&quot;: &quot;tomtom-traffic&quot;,</span>' in page
    now = page.split('id="checks-now"', 1)[1].split("</ul>", 1)[0]
    assert [line.split("</strong>")[0] for line in now.split("<strong>")[1:]] == [
        "governance/fixtures/tool_surface.json: (tools.E100)",
        "governance/fixtures/tool_surface.json: (tools.W001)",
    ]
    assert 'id="checks-after">No issues: it passes.' in page
    download = admin_client.get(url + "?download=1")
    assert download["Content-Disposition"] == 'attachment; filename="tool_surface.json"'
    assert loads(download.content.decode()) == selectors.tool_surface()
    assert json.loads(download.content)["deprecated"][0]["replaced_by"] == ["tomtom-routing"]
    services.retirement_cancel(name="tomtom-traffic")  # no date: what the deploy will warn about
    after = admin_client.get(url).content.decode().split('id="checks-after"', 1)[1].split("</ul>", 1)[0]
    warning = "<strong>tomtom-traffic: (tools.W003)</strong> Deprecated (committed fixture) with no retire-on date"
    assert warning in after


def test_the_status_column_and_history_name_every_state(admin_client, release):
    services.deprecation_create(name="demo-live", replaced_by=["demo-next"], retire_on=date(2027, 1, 15))
    services.alias_create(name="demo-old", target="demo-next")
    services.retired_tool_create(name="demo-other", replaced_by=["demo-next"])
    listing = admin_client.get(reverse("admin:tools_toolname_changelist")).content.decode()
    for name, status in [
        ("demo-live", "deprecated, retired on 2027-01-15"),
        ("demo-next", "live"),
        ("demo-old", "alias"),
        ("demo-other", "retired"),
    ]:
        assert f'>{name}</a></th><td class="field-status">{status}</td>' in listing
    history = admin_client.get(reverse("admin:tools_toolname_governance", args=["demo-live"])).content.decode()
    assert 'id="tool-status">deprecated<' in history and ">Deprecation</a>" in history
    assert RetiredTool.objects.filter(tool_id="demo-other").exists()
