"""The contributor's make targets say what they need instead of quietly doing something else."""

import os
import subprocess

import pytest

from tests.conftest import REPO


@pytest.mark.parametrize("database_url", [None, "sqlite:///db.sqlite3", "mysql://root@127.0.0.1/test"])
def test_test_db_refuses_a_database_that_is_not_postgresql(database_url):
    env = {name: value for name, value in os.environ.items() if name != "DATABASE_URL"}
    if database_url:
        env["DATABASE_URL"] = database_url
    # -o: never (re)install the environment here; the refusal comes before it is used.
    done = subprocess.run(
        ["make", "-s", "-o", ".venv/.installed", "test-db"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode != 0
    scheme = database_url.split(":")[0] if database_url else "unset"
    assert f"DATABASE_URL must be a PostgreSQL URL (postgres://user@host:5432/name), not {scheme}" in done.stderr
    assert "passed" not in done.stdout  # the suite never ran
