"""The committed history: seeded by the data migration, written back by export_tool_surface."""

from __future__ import annotations

import io
from dataclasses import replace
from datetime import date

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from core.version import version
from governance import fixtures, selectors, services
from governance.fixtures import LedgerConflict
from governance.models import GovernanceEvent, RetiredTool, ToolName
from governance.receivers import ADDED_BY_MIGRATE
from governance.surface import Retirement, Surface, dumps, loads
from tests.governance.conftest import fake_tool


@pytest.mark.django_db
def test_migrations_seed_the_committed_history():
    committed = fixtures.read_fixture()
    seeded = selectors.tool_surface()
    assert set(committed.ledger) <= set(seeded.ledger)
    assert (seeded.retired, seeded.changes) == (committed.retired, committed.changes)
    assert seeded.retired_by_name["tomtom-static-map"].replaced_by == ("tomtom-dynamic-map", "tomtom-map-image")


def test_the_committed_file_is_in_its_one_format():
    text = fixtures.FIXTURE_PATH.read_text(encoding="utf-8")
    assert dumps(loads(text)) == text


@pytest.mark.django_db(transaction=True)
def test_apply_then_export_is_byte_identical(tmp_path):
    call_command("flush", interactive=False, inhibit_post_migrate=True, verbosity=0)
    assert not ToolName.objects.exists()
    out = io.StringIO()
    call_command("apply_tool_surface", stdout=out)
    assert "Added (ledger): tomtom-area-search" in out.getvalue()
    exported = tmp_path / "exported.json"
    call_command("export_tool_surface", output=exported, stdout=io.StringIO())
    assert exported.read_bytes() == fixtures.FIXTURE_PATH.read_bytes()


@pytest.mark.django_db(transaction=True)
def test_export_then_apply_is_byte_identical(tmp_path):
    services.ledger_add(name="demo-next", first_seen=date(2026, 11, 1), note='ünïcode, "quoted"')
    first, second = tmp_path / "first.json", tmp_path / "second.json"
    call_command("export_tool_surface", output=first, stdout=io.StringIO())
    call_command("flush", interactive=False, inhibit_post_migrate=True, verbosity=0)
    fixtures.apply_surface(fixtures.read_fixture(first))
    call_command("export_tool_surface", output=second, stdout=io.StringIO())
    assert second.read_bytes() == first.read_bytes()
    assert '"note": "ünïcode, \\"quoted\\""' in first.read_text(encoding="utf-8")


@pytest.mark.django_db
def test_apply_is_idempotent_and_brings_a_pull_request_to_an_existing_database(tmp_path):
    committed = fixtures.read_fixture()
    static_map = committed.retired_by_name["tomtom-static-map"]
    edited = Surface(
        ledger=committed.ledger,
        retired=tuple(replace(r, message="Use the dynamic map.") if r is static_map else r for r in committed.retired),
        changes=committed.changes,
        aliases=committed.aliases,
    )
    path = tmp_path / "pull-request.json"
    fixtures.write_fixture(edited, path)
    out = io.StringIO()
    call_command("apply_tool_surface", input=path, stdout=out)
    assert out.getvalue() == "Updated (retired): tomtom-static-map\n"
    assert RetiredTool.objects.get(tool_id="tomtom-static-map").message == "Use the dynamic map."
    event = GovernanceEvent.objects.filter(tool="tomtom-static-map").last()
    assert (event.subject, event.action, event.actor, event.via) == ("retirement", "updated", "", "apply_tool_surface")
    assert event.changes == {"message": [static_map.message, "Use the dynamic map."]}
    assert event.message.startswith("Changed the retirement from the committed fixture. message:")
    again = io.StringIO()
    call_command("apply_tool_surface", input=path, stdout=again)
    assert again.getvalue() == "The tables already tell the fixture's history: nothing to apply.\n"
    assert GovernanceEvent.objects.filter(tool="tomtom-static-map").count() == 1  # nothing more recorded


@pytest.mark.django_db
def test_apply_refuses_to_delete_or_rename_a_ledger_row(tmp_path):
    committed = fixtures.read_fixture()
    renamed = Surface(
        ledger=tuple(
            replace(e, name="tomtom-ev-route") if e.name == "tomtom-ev-routing" else e for e in committed.ledger
        ),
        retired=committed.retired,
        changes=(),
        aliases=committed.aliases,
    )
    path = tmp_path / "renamed.json"
    fixtures.write_fixture(renamed, path)
    before = selectors.tool_surface()
    with pytest.raises(LedgerConflict, match="the fixture lacks tomtom-ev-routing, which the database has"):
        fixtures.apply_surface(renamed)
    with pytest.raises(CommandError, match=r"tools\.E00"):  # and the command checks the fixture first
        call_command("apply_tool_surface", input=path, stdout=io.StringIO())
    assert selectors.tool_surface() == before


@pytest.mark.django_db
def test_apply_keeps_an_unexported_admin_edit_unless_pruned(use_registry):
    committed = fixtures.read_fixture()
    live = committed.ledger_names - set(committed.retired_by_name) - set(committed.aliases_by_name)
    use_registry(*(fake_tool(n) for n in live))
    services.retired_tool_create(name="tomtom-traffic", replaced_by=["tomtom-geocode"])  # the kill switch
    kept = fixtures.apply_surface(committed)
    assert kept.kept["retired"] == ["tomtom-traffic"] and not kept.changed
    assert RetiredTool.objects.filter(tool_id="tomtom-traffic").exists()
    pruned = fixtures.apply_surface(committed, prune=True)
    assert pruned.deleted == {"retired": ["tomtom-traffic"]}
    assert [(e.action, e.via) for e in GovernanceEvent.objects.filter(tool="tomtom-traffic", subject="retirement")] == [
        ("created", "code"),
        ("deleted", "apply_tool_surface"),
    ]
    assert selectors.tool_surface().retired == committed.retired


@pytest.mark.django_db
def test_export_writes_the_fixture_the_check_compares(tmp_path, monkeypatch, capsys):
    path = tmp_path / "tool_surface.json"
    monkeypatch.setattr(fixtures, "FIXTURE_PATH", path)
    call_command("export_tool_surface")
    surface = fixtures.read_fixture(path)
    assert surface == selectors.tool_surface()
    written = capsys.readouterr().out
    assert f"ledger names, 0 deprecated tools, 1 aliases, {len(surface.retired)} retired tools" in written


@pytest.mark.django_db(transaction=True)
def test_migrate_ledgers_newly_registered_tools(use_registry):
    use_registry(fake_tool("tomtom-geocode"), fake_tool("tomtom-brand-new"))
    first_seen = ToolName.objects.get(name="tomtom-geocode").first_seen
    call_command("migrate", verbosity=0)
    added = ToolName.objects.get(name="tomtom-brand-new")
    assert (added.first_release, added.note) == (version(), ADDED_BY_MIGRATE)
    recorded = GovernanceEvent.objects.get(tool="tomtom-brand-new")
    assert (recorded.subject, recorded.action, recorded.via) == ("ledger", "created", "migrate")
    assert ToolName.objects.get(name="tomtom-geocode").first_seen == first_seen  # names are only added


def every_state(committed: Surface) -> Surface:
    """The committed history plus a name in each lifecycle state: a deprecation with a date, one
    without a date or replacement, an alias with renamed and dropped arguments."""
    from governance.surface import Alias, Deprecation, LedgerEntry

    return Surface(
        ledger=(*committed.ledger, LedgerEntry("tomtom-search", date(2025, 6, 30), "1.0.0", "Renamed.")),
        retired=committed.retired,
        changes=tuple(c for c in committed.changes if c.tool != "tomtom-traffic"),
        deprecated=(
            Deprecation(
                "tomtom-traffic",
                ("tomtom-routing", "tomtom-geocode"),
                date(2026, 12, 1),
                date(2099, 1, 15),
                "Incidents move into routing.",
            ),
            Deprecation("tomtom-ev-search", (), date(2026, 12, 1)),
        ),
        aliases=(
            *committed.aliases,
            Alias(
                "tomtom-search",
                "tomtom-fuzzy-search",
                date(2026, 12, 1),
                (("q", "query"), ("ui", None)),
                date(2099, 3, 1),
                "Renamed in 0.2.0.",
            ),
        ),
    )


def test_the_file_format_round_trips_every_lifecycle_state():
    surface = every_state(fixtures.read_fixture())
    text = dumps(surface)
    assert loads(text) == surface and dumps(loads(text)) == text
    assert '"arguments": {\n        "q": "query",\n        "ui": null\n      }' in text
    assert '"retire_on": null' in text


@pytest.mark.django_db(transaction=True)
def test_apply_then_export_is_byte_identical_with_every_lifecycle_state(tmp_path):
    wanted = tmp_path / "wanted.json"
    fixtures.write_fixture(every_state(fixtures.read_fixture()), wanted)
    call_command("flush", interactive=False, inhibit_post_migrate=True, verbosity=0)
    call_command("apply_tool_surface", input=wanted, stdout=io.StringIO())
    exported = tmp_path / "exported.json"
    call_command("export_tool_surface", output=exported, stdout=io.StringIO())
    assert exported.read_bytes() == wanted.read_bytes()
    assert [(e.subject, e.action) for e in GovernanceEvent.objects.filter(tool="tomtom-search")] == [
        ("ledger", "created"),
        ("alias", "created"),
    ]


@pytest.mark.django_db(transaction=True)
def test_a_new_database_is_seeded_with_every_lifecycle_state(tmp_path):
    from governance.models import ContractChange, DeprecatedTool, ToolAlias

    path = tmp_path / "tool_surface.json"
    surface = every_state(fixtures.read_fixture())
    fixtures.write_fixture(surface, path)
    call_command("flush", interactive=False, inhibit_post_migrate=True, verbosity=0)  # a new database
    assert fixtures.seed_if_empty(
        ledger=ToolName,
        retired=RetiredTool,
        changes=ContractChange,
        deprecated=DeprecatedTool,
        aliases=ToolAlias,
        path=path,
    )
    assert selectors.tool_surface() == surface


@pytest.mark.django_db
def test_apply_gives_a_name_the_fixtures_state_and_keeps_an_unexported_one(tmp_path, use_registry, governance_clock):
    committed = fixtures.read_fixture()
    live = committed.ledger_names - set(committed.retired_by_name) - set(committed.aliases_by_name)
    use_registry(*(fake_tool(n) for n in live))
    services.deprecation_create(name="tomtom-traffic", replaced_by=["tomtom-routing"])  # an admin edit
    services.deprecation_create(name="tomtom-ev-search", replaced_by=["tomtom-poi-search"])  # another one
    retired_in_fixture = Surface(
        ledger=committed.ledger,
        retired=(*committed.retired, Retirement("tomtom-traffic", ("tomtom-routing",), date(2026, 12, 1))),
        changes=tuple(c for c in committed.changes if c.tool != "tomtom-traffic"),
        aliases=committed.aliases,
    )
    report = fixtures.apply_surface(retired_in_fixture)
    assert (report.added, report.kept) == ({"retired": ["tomtom-traffic"]}, {"deprecated": ["tomtom-ev-search"]})
    from governance.models import DeprecatedTool

    assert list(DeprecatedTool.objects.values_list("tool_id", flat=True)) == ["tomtom-ev-search"]
    events = list(GovernanceEvent.objects.filter(tool="tomtom-traffic"))
    assert events[1].message.startswith("Ended the deprecation (retired in the fixture) from the committed fixture.")
    assert [(e.subject, e.action, e.via) for e in events[:4]] == [
        ("deprecation", "created", "code"),
        ("deprecation", "deleted", "apply_tool_surface"),
        ("retirement", "created", "apply_tool_surface"),
        ("contract_change", "deleted", "apply_tool_surface"),
    ]
    pruned = fixtures.apply_surface(retired_in_fixture, prune=True)
    assert pruned.deleted == {"deprecated": ["tomtom-ev-search"]}
