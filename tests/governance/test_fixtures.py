"""The committed history: seeded by the data migration, written back by export_tool_surface."""

from __future__ import annotations

import io
from datetime import date

import pytest
from django.core.management import call_command

from tests.governance.conftest import fake_tool
from tomtom_mcp import version
from tools.governance import fixtures, selectors, services
from tools.governance.receivers import ADDED_BY_MIGRATE
from tools.governance.surface import dumps, loads
from tools.models import ContractChange, RetiredTool, ToolName


@pytest.mark.django_db
def test_migrations_seed_the_committed_history():
    committed = fixtures.read_fixture()
    seeded = selectors.tool_surface()
    assert set(committed.ledger) <= set(seeded.ledger)
    assert (seeded.retired, seeded.changes) == (committed.retired, committed.changes)
    assert seeded.retired_by_name["tomtom-static-map"].replaced_by == ("tomtom-dynamic-map",)


def test_the_committed_file_is_in_its_one_format():
    text = fixtures.FIXTURE_PATH.read_text(encoding="utf-8")
    assert dumps(loads(text)) == text


@pytest.mark.django_db(transaction=True)
def test_export_reload_export_is_identical(tmp_path):
    models = {"ledger": ToolName, "retired": RetiredTool, "changes": ContractChange}
    fixtures.load_surface(fixtures.read_fixture(), **models)
    services.ledger_add(name="demo-next", first_seen=date(2026, 11, 1), note='ünïcode, "quoted"')
    first, second = tmp_path / "first.json", tmp_path / "second.json"
    call_command("export_tool_surface", output=first, stdout=io.StringIO())
    call_command("flush", interactive=False, inhibit_post_migrate=True, verbosity=0)
    assert not ToolName.objects.exists()
    fixtures.load_surface(fixtures.read_fixture(first), **models)
    call_command("export_tool_surface", output=second, stdout=io.StringIO())
    assert second.read_bytes() == first.read_bytes()
    assert '"note": "ünïcode, \\"quoted\\""' in first.read_text(encoding="utf-8")


@pytest.mark.django_db
def test_export_writes_the_fixture_the_check_compares(tmp_path, monkeypatch, capsys):
    path = tmp_path / "tool_surface.json"
    monkeypatch.setattr(fixtures, "FIXTURE_PATH", path)
    call_command("export_tool_surface")
    surface = fixtures.read_fixture(path)
    assert surface == selectors.tool_surface()
    assert f"ledger names, {len(surface.retired)} retired tools" in capsys.readouterr().out


@pytest.mark.django_db(transaction=True)
def test_migrate_ledgers_newly_registered_tools(use_registry):
    use_registry(fake_tool("tomtom-geocode"), fake_tool("tomtom-brand-new"))
    first_seen = ToolName.objects.get(name="tomtom-geocode").first_seen
    call_command("migrate", verbosity=0)
    added = ToolName.objects.get(name="tomtom-brand-new")
    assert (added.first_release, added.note) == (version(), ADDED_BY_MIGRATE)
    assert ToolName.objects.get(name="tomtom-geocode").first_seen == first_seen  # names are only added
