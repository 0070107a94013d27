"""The logging of gunicorn and uvicorn themselves, as JSON lines like every other line.

`server-logging.json` beside this module is gunicorn's `logconfig_dict` (gunicorn.conf.py) and
uvicorn's `--log-config` (`make run`); it formats with `core.logging.JsonLinesFormatter`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

SERVER_LOGGING = Path(__file__).with_name("server-logging.json")
"""The logging configuration of gunicorn and uvicorn themselves."""


def server_log_config(level: str = "INFO") -> dict[str, Any]:
    """`server-logging.json` with the server loggers at `level` (uvicorn's access log stays off
    below WARNING: a line per request is the proxy's job)."""
    config = json.loads(SERVER_LOGGING.read_text())
    for name in ("gunicorn.error", "uvicorn", "uvicorn.error"):
        config["loggers"][name]["level"] = level
    config["root"]["level"] = level
    return config
