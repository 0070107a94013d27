"""The embedded database: SQLite in the user's data directory, used while `DATABASE_URL` is unset.

The console script (tomtom_mcp/cli.py) brings it up to date before it serves: a first start
creates and migrates it, a start after an upgrade applies the new migrations, any other start
finds nothing to do. A configured database (PostgreSQL in production) is never migrated here:
its operator runs `migrate` once per release (docs/deploy.md), not every replica at start.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from pathlib import Path

from django.conf import settings
from django.core.management import call_command
from django.db import DEFAULT_DB_ALIAS, connections
from django.db.migrations.executor import MigrationExecutor

from core.events import clip, log
from core.operations import PATH_LENGTH, EmbeddedDatabaseMigrated, EmbeddedDatabaseNotMigrated


def is_embedded() -> bool:
    """Whether this process runs on the embedded database (no `DATABASE_URL`)."""
    return settings.DATABASE_URL is None


def migrate_embedded_database() -> int:
    """Apply the migrations the embedded database lacks; the number applied (0: none lacked, or
    the database is not the embedded one). A failure is logged, never raised: stdio still answers
    from the committed tool-surface fixture, and `/readyz` says what is missing."""
    if not is_embedded():
        return 0
    path = Path(settings.EMBEDDED_DATABASE)
    started = time.perf_counter()
    try:
        with _migration_lock(path.with_name("migrate.lock")):
            pending = _pending()
            if pending:
                call_command("migrate", interactive=False, verbosity=0)
    except Exception as error:  # an unwritable data directory must not stop a desktop client's server
        log(
            EmbeddedDatabaseNotMigrated(path=clip(str(path), PATH_LENGTH), error=clip(repr(error), 2_000)),
            exc_info=True,
        )
        return 0
    finally:
        connections[DEFAULT_DB_ALIAS].close()
    if pending:
        total_ms = (time.perf_counter() - started) * 1000
        log(EmbeddedDatabaseMigrated(path=clip(str(path), PATH_LENGTH), migrations=pending, total_ms=total_ms))
    return pending


def _pending() -> int:
    executor = MigrationExecutor(connections[DEFAULT_DB_ALIAS])
    return len(executor.migration_plan(executor.loader.graph.leaf_nodes()))


@contextlib.contextmanager
def _migration_lock(path: Path) -> Iterator[None]:
    """Held while migrating, so two servers a desktop client starts at once do not both migrate
    the same fresh file (the second finds nothing left to do). Where `fcntl` is missing
    (Windows) there is no lock."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows
        yield
        return
    with path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
