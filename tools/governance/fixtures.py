"""The committed history: `tools/fixtures/tool_surface.json`, read, applied and written back.

Two directions, one format (`surface.dumps`):

- `manage.py export_tool_surface` writes the tables to the file, so an admin edit becomes a
  reviewable diff (edit in the admin -> export -> review -> commit).
- `manage.py apply_tool_surface` (`apply_surface`) brings a database to the file, so a change
  made in a pull request reaches an existing database (merge -> deploy -> apply). It adds and
  updates rows by their key (ledger name, retired name, tool and input), never deletes or renames
  a ledger row (`LedgerConflict`), and deletes a retirement or contract change the file does
  not have only when asked (`prune`): an admin edit not yet exported is kept and reported.
  Every row it writes is recorded in the governance history (via `apply_tool_surface`).

A new database is seeded from the file after `migrate` (`seed_if_empty`, run by the
`post_migrate` receiver, so it always meets the current schema).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from django.db import transaction

from tools.governance.surface import InputChange, LedgerEntry, Retirement, Surface, dumps, loads

FIXTURE_PATH = Path(__file__).resolve().parent.parent / "fixtures" / "tool_surface.json"


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


def apply_surface(surface: Surface, *, prune: bool = False, dry_run: bool = False) -> ApplyReport:
    """Make the tables tell `surface`'s history, in one transaction. Raises `LedgerConflict`
    (and changes nothing) when the file lacks ledger names the database has."""
    from tools.governance import selectors, services
    from tools.models import ContractChange, GovernanceEvent, RetiredTool, ToolName

    Subject, Action = GovernanceEvent.Subject, GovernanceEvent.Action

    def record(tool: str, subject: str, fields: tuple[str, ...], stored: object, wanted: object, what: str) -> None:
        """The governance event for one row apply wrote (`stored`/`wanted` None: absent)."""
        action = Action.CREATED if stored is None else Action.DELETED if wanted is None else Action.UPDATED
        services.governance_event_record(
            tool=tool,
            subject=subject,
            action=action,
            before=None if stored is None else services.snapshot(stored, fields),  # type: ignore[arg-type]
            after=None if wanted is None else services.snapshot(wanted, fields),  # type: ignore[arg-type]
            headline=f"{what} from the committed fixture",
            via="apply_tool_surface",
        )

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
                _save_ledger(ToolName, entry)
                verb = "Added to the ledger" if stored_entry is None else "Corrected the ledger row"
                record(entry.name, Subject.LEDGER, services.LEDGER_FIELDS, stored_entry, entry, verb)

        wanted_retired = {r.name: r for r in surface.retired}
        for retirement in current.retired:
            if retirement.name not in wanted_retired:
                if prune:
                    report.note(report.deleted, "retired", retirement.name)
                    if not dry_run:
                        RetiredTool.objects.filter(tool__name=retirement.name).delete()
                        record(
                            retirement.name, Subject.RETIREMENT, services.RETIREMENT_FIELDS, retirement, None,
                            "Un-retired (pruned)",
                        )  # fmt: skip
                else:
                    report.note(report.kept, "retired", retirement.name)
        wanted_changes = {_change_key(c): c for c in surface.changes}
        for change in current.changes:
            key = _change_key(change)
            if key not in wanted_changes:
                # Retiring a tool deletes its contract changes (as the services do): the
                # retired-tool answer covers every call to it.
                if prune or change.tool in wanted_retired:
                    report.note(report.deleted, "contract changes", key)
                    if not dry_run:
                        ContractChange.objects.filter(tool__name=change.tool, input=change.input).delete()
                        record(
                            change.tool, Subject.CONTRACT_CHANGE, services.CONTRACT_CHANGE_FIELDS, change, None,
                            f"Deleted the contract change of {change.input}",
                        )  # fmt: skip
                else:
                    report.note(report.kept, "contract changes", key)

        stored_retired = current.retired_by_name
        for retirement in surface.retired:
            stored_retirement = stored_retired.get(retirement.name)
            if stored_retirement == retirement:
                continue
            report.note(report.added if stored_retirement is None else report.updated, "retired", retirement.name)
            if not dry_run:
                _save_retirement(RetiredTool, retirement)
                verb = "Retired" if stored_retirement is None else "Changed the retirement"
                record(
                    retirement.name, Subject.RETIREMENT, services.RETIREMENT_FIELDS, stored_retirement, retirement, verb
                )
        stored_changes = {_change_key(c): c for c in current.changes}
        kept_retired = set(report.kept.get("retired", ()))
        for change in surface.changes:
            stored_change = stored_changes.get(_change_key(change))
            if stored_change == change:
                continue
            if change.tool in kept_retired:  # retired in the database: that answer covers every call
                report.note(report.kept, "contract changes of tools retired in the database", _change_key(change))
                continue
            report.note(
                report.added if stored_change is None else report.updated, "contract changes", _change_key(change)
            )
            if not dry_run:
                _save_change(ContractChange, change)
                record(
                    change.tool, Subject.CONTRACT_CHANGE, services.CONTRACT_CHANGE_FIELDS, stored_change, change,
                    f"{'Recorded' if stored_change is None else 'Changed'} the contract change of {change.input}",
                )  # fmt: skip
        return report


def seed_if_empty(*, ledger: type, retired: type, changes: type, path: Path | None = None) -> bool:
    """Load the committed history into an empty ledger (a new database); True when it did."""
    if ledger.objects.exists():  # type: ignore[attr-defined]  # a model class, maybe a migration's
        return False
    surface = read_fixture(path)
    with transaction.atomic():
        for entry in surface.ledger:
            _save_ledger(ledger, entry)
        for retirement in surface.retired:
            _save_retirement(retired, retirement)
        for change in surface.changes:
            _save_change(changes, change)
    return True


def _save_ledger(model: type, entry: LedgerEntry) -> None:
    model.objects.update_or_create(  # type: ignore[attr-defined]  # a model class, maybe a migration's
        name=entry.name,
        defaults={"first_seen": entry.first_seen, "first_release": entry.first_release, "note": entry.note},
    )


def _save_retirement(model: type, retirement: Retirement) -> None:
    model.objects.update_or_create(  # type: ignore[attr-defined]  # a model class, maybe a migration's
        tool_id=retirement.name,
        defaults={
            "replaced_by": list(retirement.replaced_by),
            "since": retirement.since,
            "release": retirement.release,
            "message": retirement.message,
        },
    )


def _save_change(model: type, change: InputChange) -> None:
    model.objects.update_or_create(  # type: ignore[attr-defined]  # a model class, maybe a migration's
        tool_id=change.tool,
        input=change.input,
        defaults={
            "kind": change.kind.value,
            "since": change.since,
            "instead": change.instead,
            "new_input": change.new_input,
            "was": change.was,
            "now": change.now,
        },
    )
