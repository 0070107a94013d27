"""Settings come from the environment, and from `.env` when present (the environment wins)."""

import json
import os
import subprocess
import sys

from tests.conftest import REPO

PRINT = (
    "import django, json; django.setup(); from django.conf import settings as s; "
    "print(json.dumps([s.TOMTOM_API_BASE_URL, s.TOMTOM_MAPS_BACKEND, s.MCP_HOSTED, s.DATABASES['default']['ENGINE']]))"
)


def settings_with(env: dict[str, str]) -> list:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("TOMTOM_", "MCP_", "DATABASE_URL"))}
    done = subprocess.run(
        [sys.executable, "-c", PRINT],
        cwd=REPO,
        env={**clean, "DJANGO_SETTINGS_MODULE": "tomtom_mcp.settings", **env},
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout)


def test_defaults_run_on_one_laptop():
    assert settings_with({"DOTENV_PATH": "/nonexistent"}) == [
        "https://api.tomtom.com",
        "tomtom-orbis-maps",
        False,
        "django.db.backends.sqlite3",
    ]


def test_dotenv_is_read_and_the_environment_wins(tmp_path):
    dotenv = tmp_path / ".env"
    dotenv.write_text("TOMTOM_API_BASE_URL=http://from-dotenv.test/\nTOMTOM_MAPS_BACKEND=tomtom-maps\nMCP_HOSTED=yes\n")
    values = settings_with({"DOTENV_PATH": str(dotenv), "TOMTOM_MAPS_BACKEND": "tomtom-orbis-maps"})
    assert values[:3] == ["http://from-dotenv.test", "tomtom-orbis-maps", True]


def test_postgres_from_database_url():
    values = settings_with({"DOTENV_PATH": "/nonexistent", "DATABASE_URL": "postgres://postgres@127.0.0.1:5432/test"})
    assert values[3] == "django.db.backends.postgresql"


def test_nothing_is_written_beside_the_code_by_default(tmp_path):
    """The embedded database and the static files live in the user's data directory (made when
    the embedded database is in use), never in the checkout or the installed package."""
    show = (
        "import django, json; django.setup(); from django.conf import settings as s; "
        "print(json.dumps([str(s.DATABASES['default']['NAME']), str(s.STATIC_ROOT)]))"
    )
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("TOMTOM_", "DATABASE_URL", "DJANGO_", "XDG_"))}
    env = {**clean, "HOME": str(tmp_path), "DOTENV_PATH": "/nonexistent"}
    env["DJANGO_SETTINGS_MODULE"] = "tomtom_mcp.settings"
    done = subprocess.run([sys.executable, "-c", show], cwd=REPO, env=env, capture_output=True, text=True, check=True)
    database, static = json.loads(done.stdout)
    data = tmp_path / ".local" / "share" / "tomtom-maps-mcp"
    assert (database, static) == (str(data / "db.sqlite3"), str(data / "static"))
    assert data.is_dir()
    moved = subprocess.run(
        [sys.executable, "-c", show],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
        env={**env, "TOMTOM_MCP_DATA_DIR": str(tmp_path / "moved")},
    ).stdout
    assert json.loads(moved) == [str(tmp_path / "moved" / "db.sqlite3"), str(tmp_path / "moved" / "static")]


def fallbacks(extra: dict[str, str]) -> str:
    """SECRET_KEY_FALLBACKS as a fresh process reads them (no .env; DJANGO_SECRET_KEY_FALLBACKS
    only as `extra` gives it)."""
    env = {k: v for k, v in os.environ.items() if k != "DJANGO_SECRET_KEY_FALLBACKS"}
    code = (
        "import django; django.setup(); from django.conf import settings as s; print(','.join(s.SECRET_KEY_FALLBACKS))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=REPO,
        env={**env, "DJANGO_SETTINGS_MODULE": "tomtom_mcp.settings", "DOTENV_PATH": "/nonexistent", **extra},
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip()


def test_secret_key_fallbacks_come_from_the_environment_newest_first():
    assert fallbacks({"DJANGO_SECRET_KEY_FALLBACKS": "older-secret, oldest-secret"}) == "older-secret,oldest-secret"
    assert fallbacks({}) == ""
