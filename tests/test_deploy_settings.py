"""Production settings: the documented environment passes `check --deploy` with no issue at all,
and an insecure production start fails it with a named error."""

import os
import re
import secrets
import subprocess
import sys

import pytest

from tests.conftest import REPO

TEMPLATE = REPO / "deploy" / "tomtom-mcp.env"


def documented_production_env() -> dict[str, str]:
    """deploy/tomtom-mcp.env with each `<...>` filled in as docs/deploy.md says."""
    fills = {
        "DJANGO_SECRET_KEY": secrets.token_urlsafe(50),
        "MCP_SESSION_SECRETS": secrets.token_urlsafe(32),
        "MCP_ALLOWED_HOSTS": "mcp.example.com",
        "DJANGO_CSRF_TRUSTED_ORIGINS": "https://mcp.example.com",
    }
    env = {}
    for line in TEMPLATE.read_text().splitlines():
        if not line or line.startswith("#"):
            continue
        name, value = line.split("=", 1)
        env[name] = fills[name] if value.startswith("<") else value
    return env


def check_deploy(env: dict[str, str], tmp_path) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "MCP_", "TOMTOM_", "DATABASE_"))}
    # The template's PostgreSQL is not on this machine; the checks do not depend on the engine.
    env = {**env, "DATABASE_URL": f"sqlite:///{tmp_path}/db.sqlite3"}
    return subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--database", "default"],
        cwd=REPO,
        env={**clean, "DOTENV_PATH": "/nonexistent", **env},
        capture_output=True,
        text=True,
    )


def test_the_documented_production_environment_has_no_issue(tmp_path):
    done = check_deploy(documented_production_env(), tmp_path)
    assert done.returncode == 0, done.stderr
    assert "System check identified no issues" in done.stdout


@pytest.mark.parametrize(
    ("override", "error"),
    [
        ({"DJANGO_DEBUG": "true"}, "tomtom_mcp.E001"),
        ({"DJANGO_SECRET_KEY": ""}, "tomtom_mcp.E002"),
        ({"MCP_SESSION_SECRETS": "short"}, "tomtom_mcp.E003"),
    ],
)
def test_an_insecure_production_start_fails(tmp_path, override, error):
    env = {**documented_production_env(), **override}
    done = check_deploy(env, tmp_path)
    assert done.returncode != 0
    assert re.search(rf"\({re.escape(error)}\)", done.stderr), done.stderr


def test_unset_session_secrets_fall_back_to_a_strong_secret_key(tmp_path):
    env = {k: v for k, v in documented_production_env().items() if k != "MCP_SESSION_SECRETS"}
    assert check_deploy(env, tmp_path).returncode == 0


def test_unset_secrets_fail_both_checks(tmp_path):
    env = {
        k: v for k, v in documented_production_env().items() if k not in ("DJANGO_SECRET_KEY", "MCP_SESSION_SECRETS")
    }
    done = check_deploy(env, tmp_path)
    assert "(tomtom_mcp.E002)" in done.stderr and "(tomtom_mcp.E003)" in done.stderr
