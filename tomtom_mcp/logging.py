"""The logging of gunicorn and uvicorn themselves, as JSON lines like every other line.

`server-logging.json` beside this module is gunicorn's `logconfig_dict` (gunicorn.conf.py) and
uvicorn's `--log-config` (`make run`); it formats with `core.logging.JsonLinesFormatter`.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable
from pathlib import Path
from typing import Any, ClassVar

SERVER_LOGGING = Path(__file__).with_name("server-logging.json")
"""The logging configuration of gunicorn and uvicorn themselves."""


def server_log_config(level: str = "INFO") -> dict[str, Any]:
    """`server-logging.json` with the server loggers at `level` (uvicorn's access log stays off
    below WARNING: a line per request is the proxy's job)."""
    config = json.loads(SERVER_LOGGING.read_text())
    for name in ("gunicorn.error", "uvicorn", "uvicorn.error"):
        config["loggers"][name]["level"] = level
    config["root"]["level"] = level
    config["filters"] = {"listening": {"()": "tomtom_mcp.logging.ListeningAddress"}}
    config["loggers"]["gunicorn.error"]["filters"] = ["listening"]
    return config


LISTENING = "Listening at: %s (%s)"
"""gunicorn's start line (its arbiter's message, with the listeners and its pid)."""


class ListeningAddress(logging.Filter):
    """gunicorn's start line with the address it listens at. With `reuse_port` (gunicorn.conf.py)
    the arbiter opens no socket of its own (each worker binds one), so it logs `Listening at:  (pid)`;
    this fills in the address gunicorn was told to bind (`addresses`, set by the config's
    `on_starting` hook from gunicorn's own configuration), as gunicorn writes it (`http://host:port`)."""

    addresses: ClassVar[str] = ""

    @classmethod
    def configure(cls, binds: Iterable[object]) -> None:
        """Take gunicorn's `cfg.address`: (host, port) pairs, unix socket paths, file descriptors."""
        shown = []
        for bind in binds:
            if isinstance(bind, tuple):
                host, port = bind[0], bind[1]
                shown.append(f"http://[{host}]:{port}" if ":" in str(host) else f"http://{host}:{port}")
            elif isinstance(bind, str | bytes):
                shown.append(f"unix:{bind.decode() if isinstance(bind, bytes) else bind}")
            else:
                shown.append(f"fd://{bind}")
        cls.addresses = ",".join(shown)

    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args
        if record.msg == LISTENING and isinstance(args, tuple) and args and not args[0] and self.addresses:
            record.args = (self.addresses, *args[1:])
        return True
