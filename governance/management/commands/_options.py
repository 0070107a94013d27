"""Options shared by the stdio and exec commands.

The TomTom key comes from the environment (`TOMTOM_API_KEY`) or from a file (`--apikey-file`),
never from the command line that every local user can read in `ps`. `--apikey KEY` still works
for configurations written before 0.1.0, but help no longer offers it.
"""

from __future__ import annotations

import argparse
from argparse import ArgumentParser
from pathlib import Path
from typing import Any

from django.core.management.base import CommandError

from tools.tomtom.backends import Backend

KEY_FILE_MAX_BYTES = 4_096
"""The largest key file read: a TomTom key is a few dozen characters."""

DJANGO_OPTIONS = frozenset({"--verbosity", "--settings", "--pythonpath", "--traceback", "--no-color", "--force-color"})
"""Django's own options, which the stdio and exec commands accept but do not offer in their help
(`BaseCommand.suppressed_base_arguments`): a person running the server has no use for them."""


def add_transport_options(parser: ArgumentParser) -> None:
    parser.add_argument(
        "--apikey-file",
        metavar="PATH",
        help="a file holding the TomTom API key (wins over TOMTOM_API_KEY)",
    )
    parser.add_argument("--apikey", help=argparse.SUPPRESS)  # visible in `ps`: kept for old configurations only
    parser.add_argument(
        "--backend", metavar="NAME", help="tomtom-orbis-maps or tomtom-maps (default: TOMTOM_MAPS_BACKEND)"
    )


def cli_key(options: dict[str, Any]) -> str | None:
    """The key given to the command: the file's first line, or `--apikey`; None for neither
    (the environment's key then serves). A file that cannot be read ends the command (status 2)."""
    if options.get("apikey_file"):
        return read_key_file(Path(options["apikey_file"]))
    return options.get("apikey") or None


def read_key_file(path: Path) -> str:
    try:
        with path.open("rb") as file:
            content = file.read(KEY_FILE_MAX_BYTES + 1)
    except OSError as exc:
        raise CommandError(f"--apikey-file: {path} cannot be read ({exc.strerror})", returncode=2) from None
    if len(content) > KEY_FILE_MAX_BYTES:
        raise CommandError(
            f"--apikey-file: {path} is over {KEY_FILE_MAX_BYTES} bytes; it should hold the key only", returncode=2
        )
    lines = content.decode("utf-8", errors="replace").strip().splitlines()
    if not lines or not lines[0].strip():
        raise CommandError(f"--apikey-file: {path} is empty; put the TomTom API key on its first line", returncode=2)
    return lines[0].strip()


def parse_backend(value: str | None) -> Backend | None:
    if value is None:
        return None
    try:
        return Backend.parse(value, source="--backend")
    except ValueError as exc:
        raise CommandError(str(exc)) from None
