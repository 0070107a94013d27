"""Options shared by the stdio and exec commands."""

from __future__ import annotations

from argparse import ArgumentParser

from django.core.management.base import CommandError

from tools.tomtom.backends import Backend


def add_transport_options(parser: ArgumentParser) -> None:
    parser.add_argument("--apikey", help="TomTom API key (wins over TOMTOM_API_KEY).")
    parser.add_argument("--backend", help="tomtom-orbis-maps or tomtom-maps (default: TOMTOM_MAPS_BACKEND).")


def parse_backend(value: str | None) -> Backend | None:
    if value is None:
        return None
    try:
        return Backend.parse(value, source="--backend")
    except ValueError as exc:
        raise CommandError(str(exc)) from None
