"""The lifecycle forms as a product manager uses them: each tool's page opens on its summary (state,
replacements, retire-on date, who still calls it with a total and per host family, a CSV), every
broken rule is named after one save, confirmations are asked with the form, only live tools a
model can call are offered as replacements (the services refuse the others too), an alias's
mapping is checked with the same verdicts as the page's script, the evidence pages' links
pre-fill the forms, the fixture page speaks plain words, and the admin is branded as this server."""

from __future__ import annotations

import csv
import dataclasses
import io
import re
from datetime import UTC, date, datetime, timedelta

import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse

from core.app_status import DeprecatedToolCalled
from governance import checks, fixtures, selectors, services
from governance.models import DeprecatedTool, GovernanceEvent, RetiredTool, ToolAlias, ToolName
from governance.surface import Deprecation, LedgerEntry, Surface
from tests.analytics.conftest import ingest, line
from tests.governance.conftest import fake_tool

pytestmark = pytest.mark.django_db

APP_ONLY_MESSAGE = (
    "demo-widget is app-only (only widgets call it; a model is never listed it), so it cannot replace demo-live: "
    "pick a live tool a model is listed, or leave it out."
)


def app_only(name: str):
    return dataclasses.replace(fake_tool(name), app_only=True)


@pytest.fixture
def release(use_registry, governance_clock):
    use_registry(
        fake_tool("demo-live", query=str, old=str),
        fake_tool("demo-next", query=str, limit=int),
        fake_tool("demo-other"),
        app_only("demo-widget"),
        app_only("demo-widget-data"),
    )
    for name in ("demo-live", "demo-next", "demo-other", "demo-old", "demo-widget", "demo-widget-data"):
        services.ledger_add(name=name, first_seen=date(2026, 1, 1))


def messages(error: pytest.ExceptionInfo[ValidationError]) -> dict[str, list[str]]:
    return error.value.message_dict


def errors_on(page: str) -> list[str]:
    """Every error the form shows, in page order."""
    return [
        re.sub(r"<[^>]+>", "", text).strip() for text in re.findall(r'<ul class="errorlist[^"]*"[^>]*>(.*?)</ul>', page)
    ]


def offered(page: str) -> list[str]:
    """The tools the ordered replacements offer."""
    return re.findall(r'name="replaced_by__([^"]+)"', page)


# --- Replacements: live tools a model can call -------------------------------------------------


def test_the_services_refuse_an_app_only_replacement_or_target(release):
    with pytest.raises(ValidationError) as deprecated:
        services.deprecation_create(name="demo-live", replaced_by=["demo-next", "demo-widget"])
    assert messages(deprecated) == {"replaced_by": [APP_ONLY_MESSAGE]}
    with pytest.raises(ValidationError) as retired:
        services.retired_tool_create(name="demo-live", replaced_by=["demo-widget"])
    assert messages(retired) == {"replaced_by": [APP_ONLY_MESSAGE]}
    with pytest.raises(ValidationError) as aliased:
        services.alias_create(name="demo-old", target="demo-widget")
    assert messages(aliased)["target"] == [
        "demo-widget is app-only (only widgets call it; a model is never listed it), so it cannot be the target of "
        "demo-old: pick a live tool a model is listed, or leave it out."
    ]
    assert not DeprecatedTool.objects.filter(tool_id="demo-live").exists()
    assert not ToolAlias.objects.filter(tool_id="demo-old").exists()
    assert not RetiredTool.objects.filter(tool_id="demo-live").exists()
    # An app-only tool may replace an app-only tool: widgets call both.
    services.retired_tool_create(name="demo-widget", replaced_by=["demo-widget-data"], message="Moved.")
    assert RetiredTool.objects.get(tool_id="demo-widget").replaced_by == ["demo-widget-data"]


def test_the_forms_offer_no_app_only_or_retired_tool_and_refuse_one_posted(admin_client, release):
    services.retired_tool_create(name="demo-other", replaced_by=["demo-next"])
    page = admin_client.get(reverse("admin:tools_deprecatedtool_add") + "?tool=demo-live").content.decode()
    assert offered(page) == ["demo-next"]  # not demo-widget (app-only), demo-other (retired), demo-live (itself)
    form = {"tool": "demo-live", "replaced_by": ["demo-widget", "demo-other"], "since": "2027-01-10", "reason": "x"}
    refused = admin_client.post(reverse("admin:tools_deprecatedtool_add"), form).content.decode()
    assert errors_on(refused) == [
        "demo-other is not a live tool: it is retired; pick demo-next instead." + APP_ONLY_MESSAGE
    ]  # both, in one list on the field
    assert not DeprecatedTool.objects.filter(tool_id="demo-live").exists()
    alias_page = admin_client.get(reverse("admin:tools_toolalias_add")).content.decode()
    targets = re.findall(r'<option value="([^"]+)"', alias_page.split('name="target"', 1)[1].split("</select>", 1)[0])
    assert targets == ["demo-live", "demo-next"]


def test_the_real_release_never_offers_its_app_only_tools(admin_client):
    page = admin_client.get(reverse("admin:tools_deprecatedtool_add") + "?tool=tomtom-traffic").content.decode()
    names = offered(page)
    assert "tomtom-routing" in names
    assert not {"tomtom-get-app-data", "tomtom-get-map-key", "tomtom-report-app-status"} & set(names)
    refused = admin_client.post(
        reverse("admin:tools_deprecatedtool_add"),
        {"tool": "tomtom-traffic", "replaced_by": ["tomtom-get-map-key"], "since": "2027-01-10", "reason": "x"},
    ).content.decode()
    assert "tomtom-get-map-key is app-only (only widgets call it; a model is never listed it)" in refused
    assert not DeprecatedTool.objects.filter(tool_id="tomtom-traffic").exists()


def test_the_checks_report_an_app_only_replacement_so_a_fixture_with_one_is_refused(release):
    surface = Surface(
        ledger=tuple(LedgerEntry(name, date(2026, 1, 1)) for name in ("demo-live", "demo-next", "demo-widget")),
        deprecated=(Deprecation("demo-live", ("demo-widget",), date(2027, 1, 1), date(2027, 6, 1), "Moved."),),
    )
    issues = checks.surface_issues(surface, selectors.registered_tools())
    [e018] = [issue for issue in issues if issue.id == "tools.E018"]
    assert (e018.obj, e018.msg) == (
        "demo-live",
        "Deprecated (committed fixture) in favour of demo-widget, which is app-only: only widgets call it, and the "
        "callers of this tool are never listed it.",
    )
    assert [i.id for i in checks.surface_issues(surface, selectors.registered_tools(), in_tables=True)].count(
        "tools.E118"
    ) == 1


# --- Every error at once, confirmations up front ----------------------------------------------


def test_every_broken_rule_is_named_after_one_save(admin_client, release):
    form = {
        "tool": "demo-live",
        "replaced_by__demo-next": "1",
        "replaced_by": ["demo-live", "demo-widget"],
        "retire_on": "2027-01-10",
        "reason": "Merged.",
        "since": "not a date",
    }
    page = admin_client.post(reverse("admin:tools_deprecatedtool_add"), form).content.decode()
    shown = " | ".join(errors_on(page))
    for expected in (
        "demo-live cannot replace itself.",
        APP_ONLY_MESSAGE,
        "2027-01-10 is not after today (2027-01-10, UTC): retire the tool now instead.",
        "Enter a valid date.",
    ):
        assert expected in shown
    alias = {
        "tool": "demo-live",
        "target": "demo-next",
        "arguments": "q = qeury\nq = query\nold = old",
        "retire_on": "2026-12-01",
        "since": "2027-01-10",
    }
    page = admin_client.post(reverse("admin:tools_toolalias_add"), alias).content.decode()
    shown = " | ".join(errors_on(page))
    assert "q is mapped twice." in shown  # the mapping's own verdict
    assert "2026-12-01 is not after today" in shown  # and the services' date rule
    assert "demo-live is live in this release: its calls will reach demo-next instead of its own code." in shown
    fixed = {**alias, "arguments": "q = qeury\nold = old", "retire_on": ""}
    page = admin_client.post(reverse("admin:tools_toolalias_add"), fixed).content.decode()
    shown = " | ".join(errors_on(page))
    assert "qeury (for q) is not an input of demo-next." in shown and "old is mapped to itself." in shown
    assert "Tick the box to confirm." in shown  # the confirmation, in the same answer
    assert not ToolAlias.objects.filter(tool_id="demo-live").exists()


def test_confirmations_are_asked_with_the_form(admin_client, release):
    retire = admin_client.get(reverse("admin:tools_retiredtool_add") + "?tool=demo-live").content.decode()
    fieldset = retire.split("<fieldset", 2)[1]
    assert 'name="confirm_kill_switch"' in fieldset and 'data-confirm-for="live deprecated"' in fieldset
    assert fieldset.index('name="confirm_kill_switch"') < fieldset.index("replaced_by")  # beside the name
    assert "Retiring a live tool is the kill switch" in fieldset
    alias = admin_client.get(reverse("admin:tools_toolalias_add") + "?tool=demo-live").content.decode()
    assert 'name="confirm_redirect"' in alias.split("<fieldset", 2)[1]
    assert "&quot;demo-live&quot;:&quot;live&quot;" in alias  # the picker's statuses, for the script that shows it
    ticked = {
        "tool": "demo-live",
        "confirm_kill_switch": "on",
        "replaced_by": ["demo-next"],
        "since": "2027-01-10",
        "message": "Gone.",
    }
    assert admin_client.post(reverse("admin:tools_retiredtool_add"), ticked).status_code == 302  # one save


# --- Pre-filled from the evidence pages -------------------------------------------------------


def test_an_unknown_name_becomes_an_alias_in_one_save_from_its_link(admin_client, admin_user, release):
    url = reverse("admin:tools_toolalias_add") + "?name=demo-lookup&target=demo-next"
    page = admin_client.get(url).content.decode()
    assert 'name="name" value="demo-lookup"' in page
    assert '<option value="demo-next" selected>' in page
    since = re.search(r'name="since" value="([^"]+)"', page)[1]
    form = {"tool": "", "name": "demo-lookup", "target": "demo-next", "arguments": "", "retire_on": "", "reason": ""}
    saved = admin_client.post(url, {**form, "since": since})
    assert saved.status_code == 302
    alias = ToolAlias.objects.get(tool_id="demo-lookup")
    assert (alias.target_id, alias.arguments) == ("demo-next", {})
    assert ToolName.objects.get(name="demo-lookup").note.startswith("Never listed: a name agents called")
    assert list(GovernanceEvent.objects.filter(tool="demo-lookup").values_list("subject", "action", "actor")) == [
        ("ledger", "created", admin_user.username),
        ("alias", "created", admin_user.username),
    ]
    assert selectors.ledger_statuses()["demo-lookup"] == "alias"


def test_a_ledger_name_in_the_link_is_picked_and_the_deprecate_form_takes_replacements(admin_client, release):
    page = admin_client.get(reverse("admin:tools_toolalias_add") + "?name=demo-old&target=demo-next").content.decode()
    assert '<option value="demo-old" selected>' in page and 'name="name" value=' not in page
    deprecate = reverse("admin:tools_deprecatedtool_add") + "?tool=demo-live&replaced_by=demo-other,demo-next"
    page = admin_client.get(deprecate).content.decode()
    assert '<option value="demo-live" selected>' in page
    assert offered(page)[:2] == ["demo-other", "demo-next"]
    assert 'value="1"' in page.split('name="replaced_by__demo-other"', 1)[1][:40]
    assert 'value="2"' in page.split('name="replaced_by__demo-next"', 1)[1][:40]
    assert 'id="tool-summary"' in page  # the pre-filled name's summary comes first


# --- The summary header and the CSV -----------------------------------------------------------


@pytest.fixture
def callers(release):
    row = services.deprecation_create(name="demo-live", replaced_by=["demo-next"], retire_on=date(2027, 2, 1))
    at = (datetime.now(UTC) - timedelta(days=1)).replace(microsecond=0).isoformat().replace("+00:00", "")
    calls = [("claude-ai", "acme", 3), ("claude-ai", "", 2), ("Visual Studio Code", "", 4), ("=cmd()", "", 1)]
    each = [(client, tenant) for client, tenant, count in calls for _ in range(count)]
    ingest(
        *(
            line(
                DeprecatedToolCalled,
                at,
                tool="demo-live",
                client=client,
                tenant=tenant,
                replaced_by=["demo-next"],
                request_id=f"req-{number}",
            )
            for number, (client, tenant) in enumerate(each)
        )
    )
    return row


def test_each_tools_page_opens_on_its_summary_with_the_callers_total(admin_client, callers):
    page = admin_client.get(reverse("admin:tools_deprecatedtool_change", args=[callers.pk])).content.decode()
    summary = page.split('id="tool-summary"', 1)[1].split("</section>", 1)[0]
    assert page.index('id="tool-summary"') < page.index('name="replaced_by__')  # before the form
    assert re.search(r'id="summary-state"[^>]*>scheduled to retire<', summary)
    assert "demo-live is deprecated, scheduled to retire on 2027-02-01 (00:00 UTC)." in summary
    assert re.search(r'id="summary-replacements">demo-next<', summary)
    assert "2027-02-01 (in 22 days)" in summary
    assert re.search(r'id="summary-callers-total">10 calls<', summary)
    families = re.findall(r"<tr><td>([^<]+)</td><td class=\"number\">(\d+)</td></tr>", summary)
    assert families == [("Claude (desktop, web)", "5"), ("VS Code", "4"), ("=cmd()", "1")]
    ledger = ToolName.objects.get(name="demo-live")
    row_page = admin_client.get(reverse("admin:tools_toolname_change", args=[ledger.pk])).content.decode()
    assert re.search(r'id="summary-callers-total">10 calls<', row_page)
    assert row_page.index('id="tool-summary"') < row_page.index('name="first_seen"')


def test_who_still_calls_downloads_as_csv(admin_client, callers):
    response = admin_client.get(reverse("admin:tools_toolname_callers_csv", args=["demo-live"]))
    assert response["Content-Type"] == "text/csv; charset=utf-8"
    assert response["Content-Disposition"] == 'attachment; filename="still-calling-demo-live.csv"'
    rows = list(csv.reader(io.StringIO(response.content.decode())))
    assert rows[0] == ["tool", "host family", "client name", "tenant", "how", "calls", "first seen", "last seen"]
    assert sorted((row[2], row[3], row[5]) for row in rows[1:]) == [
        ("'=cmd()", "(API key)", "1"),  # a client's own words never run as a spreadsheet formula
        ("Visual Studio Code", "(API key)", "4"),
        ("claude-ai", "(API key)", "2"),
        ("claude-ai", "acme", "3"),
    ]
    assert sum(int(row[5]) for row in rows[1:]) == 10
    assert admin_client.get(reverse("admin:tools_toolname_callers_csv", args=["demo-nothing"])).status_code == 404


# --- The fixture page in plain words, and the branding -----------------------------------------


def test_the_fixture_page_says_what_changed_and_what_the_deploy_check_says(
    admin_client, governance_clock, tmp_path, monkeypatch
):
    committed = tmp_path / "tool_surface.json"
    fixtures.write_fixture(selectors.tool_surface(), committed)
    monkeypatch.setattr(fixtures, "FIXTURE_PATH", committed)
    services.deprecation_create(name="tomtom-traffic", replaced_by=["tomtom-routing"], retire_on=date(2027, 1, 15))
    page = admin_client.get(reverse("admin:tools_toolname_fixture")).content.decode()
    assert "<li>tomtom-traffic was deprecated, replaced by tomtom-routing, to retire on 2027-01-15.</li>" in page
    assert "It stops a deploy now: that is expected until the downloaded file is committed" in page
    assert "expected until the downloaded file is committed." in page.split('id="checks-now"', 1)[1]
    assert 'id="deploy-after">It will pass.' in page
    assert 'class="messagelist"' not in page and 'class="error"' not in page  # no red boxes


def test_the_admin_is_branded_as_this_server(admin_client, client):
    for url in ("/admin/", reverse("admin:tools_toolname_changelist"), reverse("admin:tools_toolname_fixture")):
        page = admin_client.get(url).content.decode()
        assert "TomTom Maps MCP" in page
        assert "Django administration" not in page and "Django site admin" not in page
    assert "<title>Log in | TomTom Maps MCP admin</title>" in client.get("/admin/login/").content.decode()


def test_a_fixture_naming_an_app_only_replacement_is_refused_by_apply(governance_clock, tmp_path):
    from django.core.management import CommandError, call_command

    surface = selectors.tool_surface()
    edited = dataclasses.replace(
        surface,
        deprecated=(Deprecation("tomtom-traffic", ("tomtom-get-map-key",), date(2027, 1, 1), date(2027, 6, 1), "x"),),
    )
    path = tmp_path / "tool_surface.json"
    fixtures.write_fixture(edited, path)
    with pytest.raises(CommandError) as refused:
        call_command("apply_tool_surface", input=path)
    assert (
        "tomtom-traffic: (tools.E018) Deprecated (committed fixture) in favour of tomtom-get-map-key, which is "
        "app-only" in str(refused.value)
    )
    assert not DeprecatedTool.objects.filter(tool_id="tomtom-traffic").exists()
