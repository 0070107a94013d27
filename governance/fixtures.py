"""The committed history: `governance/fixtures/tool_surface.json`, read, applied and written back.

Two directions, one format (`surface.dumps`):

- `manage.py export_tool_surface` writes the tables to the file, so an admin edit becomes a
  reviewable diff (edit in the admin -> export -> review -> commit).
- `manage.py apply_tool_surface` (`apply_surface`) brings a database to the file, so a change
  made in a pull request reaches an existing database (merge -> deploy -> apply). It adds and
  updates rows by their key (ledger name; the deprecated, aliased or retired name; tool and
  input), never deletes or renames a ledger row (`LedgerConflict`), and ends a lifecycle state
  or deletes a contract change the file does not have only when asked (`prune`): an admin edit
  not yet exported is kept and reported.
  Every row it writes goes through the services (`governance.services.committed`) and is
  recorded in the governance history (via `apply_tool_surface`).

A new database is seeded from the file after `migrate` (`seed_if_empty`, run by the
`post_migrate` receiver, so it always meets the current schema), through the same services,
recording nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from django.db import transaction

from governance.surface import Alias, Deprecation, InputChange, LedgerEntry, Retirement, Surface, dumps, loads

if TYPE_CHECKING:
    from governance.services import Committed

FIXTURE_PATH = Path(__file__).resolve().parent / "fixtures" / "tool_surface.json"


def read_fixture(path: Path | None = None) -> Surface:
    """The committed history (raises `OSError`, `ValueError`, `KeyError` or `TypeError` when
    the file is missing or malformed)."""
    return loads((path or FIXTURE_PATH).read_text(encoding="utf-8"))


def write_fixture(surface: Surface, path: Path | None = None) -> None:
    (path or FIXTURE_PATH).write_text(dumps(surface), encoding="utf-8")


class LedgerConflict(Exception):
    """The file would delete or rename ledger rows: it lacks names the database has."""

    def __init__(self, missing: list[str]) -> None:
        self.missing = missing
        super().__init__(
            "tool name ledger: the fixture lacks "
            + ", ".join(missing)
            + ", which the database has. The ledger only grows: a name is never deleted or renamed "
            "(a rename is a new name plus a retirement of the old one). Put the rows back in the fixture, "
            "or export the database first (manage.py export_tool_surface) and merge."
        )


@dataclass
class ApplyReport:
    """What `apply_surface` changed (or, with `dry_run`, would change), by section."""

    added: dict[str, list[str]] = field(default_factory=dict)
    updated: dict[str, list[str]] = field(default_factory=dict)
    deleted: dict[str, list[str]] = field(default_factory=dict)
    kept: dict[str, list[str]] = field(default_factory=dict)
    """Rows only in the database, left alone (no `prune`)."""

    @property
    def changed(self) -> bool:
        return any(self.added.values()) or any(self.updated.values()) or any(self.deleted.values())

    def note(self, bucket: dict[str, list[str]], section: str, key: str) -> None:
        bucket.setdefault(section, []).append(key)


def _change_key(change: InputChange) -> str:
    return f"{change.tool}.{change.input}"


VIA_APPLY = "apply_tool_surface"
"""Where apply's writes are recorded from (the command, or a caller of `apply_surface`)."""


@dataclass(frozen=True)
class _Section:
    """One lifecycle table as apply writes it: its label and noun, and the headlines of what
    apply does to it."""

    label: str
    noun: str
    created: str
    updated: str
    pruned: str


_SECTIONS = {
    section.label: section
    for section in (
        _Section(
            "deprecated", "deprecation", "Deprecated", "Changed the deprecation", "Withdrew the deprecation (pruned)"
        ),
        _Section("aliases", "alias", "Made an alias", "Changed the alias", "Ended the alias (pruned)"),
        _Section("retired", "retirement", "Retired", "Changed the retirement", "Un-retired (pruned)"),
    )
}


def _states(surface: Surface) -> dict[str, tuple[str, Deprecation | Alias | Retirement]]:
    """Each name's lifecycle state in `surface`: the section it is in, and its record."""
    states: dict[str, tuple[str, Deprecation | Alias | Retirement]] = {}
    for label, rows in (("deprecated", surface.deprecated), ("aliases", surface.aliases), ("retired", surface.retired)):
        for row in rows:
            states[row.name] = (label, row)
    return states


def apply_surface(surface: Surface, *, prune: bool = False, dry_run: bool = False) -> ApplyReport:
    """Make the tables tell `surface`'s history, in one transaction. Raises `LedgerConflict`
    (and changes nothing) when the file lacks ledger names the database has.

    A name's lifecycle state (deprecated, alias, retired) is the file's when the file gives it
    one: a state the database holds in another table is ended (recorded). A state only the
    database holds is kept and reported, or ended with `prune`. Every row is written through
    the services (`committed_record_put`, `committed_record_delete`), one event each."""
    from governance import selectors, services

    def put(stored: Committed | None, wanted: Committed, what: str) -> None:
        services.committed_record_put(
            record=wanted, stored=stored, headline=f"{what} from the committed fixture", via=VIA_APPLY
        )

    def end(stored: Committed, what: str) -> None:
        services.committed_record_delete(record=stored, headline=f"{what} from the committed fixture", via=VIA_APPLY)

    with transaction.atomic():
        current = selectors.tool_surface()
        missing = sorted(current.ledger_names - surface.ledger_names)
        if missing:
            raise LedgerConflict(missing)
        report = ApplyReport()
        ours_ledger = {entry.name: entry for entry in current.ledger}
        for entry in surface.ledger:
            stored_entry = ours_ledger.get(entry.name)
            if stored_entry == entry:
                continue
            report.note(report.added if stored_entry is None else report.updated, "ledger", entry.name)
            if not dry_run:
                put(stored_entry, entry, "Added to the ledger" if stored_entry is None else "Corrected the ledger row")

        wanted_states, stored_states = _states(surface), _states(current)
        for name, (label, only_stored) in stored_states.items():
            if name in wanted_states:
                continue
            if prune:
                report.note(report.deleted, label, name)
                if not dry_run:
                    end(only_stored, _SECTIONS[label].pruned)
            else:
                report.note(report.kept, label, name)
        for name, (label, wanted) in wanted_states.items():
            found = stored_states.get(name)
            if found == (label, wanted):
                continue
            stored_label: str | None = found[0] if found else None
            stored: Deprecation | Alias | Retirement | None = found[1] if found else None
            report.note(report.updated if stored_label == label else report.added, label, name)
            if dry_run:
                continue
            if found is not None and found[0] != label:
                end(found[1], f"Ended the {_SECTIONS[found[0]].noun} ({label} in the fixture)")
                stored = None
            section = _SECTIONS[label]
            put(stored, wanted, section.created if stored is None else section.updated)

        # Retiring a tool or making it an alias deletes its contract changes (as the services do):
        # the retired-tool answer, or the alias's target, covers every call to it.
        superseded = {name for name, (state, _row) in wanted_states.items() if state in ("retired", "aliases")}
        wanted_changes = {_change_key(c): c for c in surface.changes}
        for change in current.changes:
            key = _change_key(change)
            if key not in wanted_changes:
                if prune or change.tool in superseded:
                    report.note(report.deleted, "contract changes", key)
                    if not dry_run:
                        end(change, f"Deleted the contract change of {change.input}")
                else:
                    report.note(report.kept, "contract changes", key)

        stored_changes = {_change_key(c): c for c in current.changes}
        kept_gone = set(report.kept.get("retired", ())) | set(report.kept.get("aliases", ()))
        for change in surface.changes:
            stored_change = stored_changes.get(_change_key(change))
            if stored_change == change:
                continue
            if change.tool in kept_gone:  # retired or aliased in the database: that answer covers every call
                report.note(report.kept, "contract changes of tools retired in the database", _change_key(change))
                continue
            report.note(
                report.added if stored_change is None else report.updated, "contract changes", _change_key(change)
            )
            if not dry_run:
                put(
                    stored_change,
                    change,
                    f"{'Recorded' if stored_change is None else 'Changed'} the contract change of {change.input}",
                )
        return report


def seed_if_empty(
    *, ledger: type, retired: type, changes: type, deprecated: type, aliases: type, path: Path | None = None
) -> bool:
    """Load the committed history into an empty ledger (a new database), through the services
    and into the given models; True when it did."""
    from governance import services

    if ledger.objects.exists():  # type: ignore[attr-defined]  # a model class, maybe a migration's
        return False
    surface = read_fixture(path)
    services.committed_history_seed(
        surface=surface,
        tables={
            LedgerEntry: ledger,
            Deprecation: deprecated,
            Alias: aliases,
            Retirement: retired,
            InputChange: changes,
        },
    )
    return True
