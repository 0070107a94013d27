"""Read configuration from the environment, remembering every name that was read.

Every variable the settings read goes through these helpers, so `ENV_VARS` is the complete
list of what an operator can set; a test checks that each one is documented in README.md.
"""

from __future__ import annotations

import os
from pathlib import Path

ENV_VARS: dict[str, str | None] = {}
"""Name -> default (as text), for every variable the settings read."""


def load_dotenv_file(base_dir: Path) -> None:
    """Read `.env` beside manage.py when present; real environment variables win."""
    env_file = Path(os.environ.get("DOTENV_PATH", base_dir / ".env"))
    if env_file.is_file():
        from dotenv import load_dotenv

        load_dotenv(env_file, override=False)


def env_str(name: str, default: str | None = None) -> str | None:
    ENV_VARS[name] = default
    value = os.environ.get(name)
    return default if value is None or value == "" else value


def env_bool(name: str, default: bool) -> bool:
    raw = env_str(name, "true" if default else "false")
    if raw is None:
        return default
    lowered = raw.strip().lower()
    if lowered in {"1", "true", "yes", "on"}:
        return True
    if lowered in {"0", "false", "no", "off"}:
        return False
    raise ValueError(f"{name} must be true or false, not {raw!r}")


def env_int(name: str, default: int) -> int:
    raw = env_str(name, str(default))
    try:
        return int(raw) if raw is not None else default
    except ValueError:
        raise ValueError(f"{name} must be a whole number, not {raw!r}") from None


def env_float(name: str, default: float) -> float:
    raw = env_str(name, str(default))
    try:
        return float(raw) if raw is not None else default
    except ValueError:
        raise ValueError(f"{name} must be a number, not {raw!r}") from None


def env_list(name: str, default: list[str]) -> list[str]:
    raw = env_str(name, ",".join(default))
    if raw is None:
        return list(default)
    return [item.strip() for item in raw.split(",") if item.strip()]
