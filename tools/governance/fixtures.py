"""The committed history: `tools/fixtures/tool_surface.json`, read, loaded and written back.

The data migration loads it into a new database; `manage.py export_tool_surface` writes the
tables back to it, so an admin edit becomes a reviewable diff. Loading never deletes: it adds
or updates rows by their key (ledger name, retired name, tool and input).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tools.governance.surface import Surface, dumps, loads

FIXTURE_PATH = Path(__file__).resolve().parent.parent / "fixtures" / "tool_surface.json"


def read_fixture(path: Path = FIXTURE_PATH) -> Surface:
    return loads(path.read_text(encoding="utf-8"))


def write_fixture(surface: Surface, path: Path = FIXTURE_PATH) -> None:
    path.write_text(dumps(surface), encoding="utf-8")


def load_surface(surface: Surface, *, ledger: Any, retired: Any, changes: Any) -> None:
    """Upsert `surface` into the three model classes (the real ones, or a migration's)."""
    for entry in surface.ledger:
        ledger.objects.update_or_create(
            name=entry.name,
            defaults={"first_seen": entry.first_seen, "first_release": entry.first_release, "note": entry.note},
        )
    for retirement in surface.retired:
        retired.objects.update_or_create(
            tool_id=retirement.name,
            defaults={
                "replaced_by": list(retirement.replaced_by),
                "since": retirement.since,
                "release": retirement.release,
                "message": retirement.message,
            },
        )
    for change in surface.changes:
        changes.objects.update_or_create(
            tool_id=change.tool,
            input=change.input,
            defaults={"kind": change.kind.value, "since": change.since, "instead": change.instead},
        )
