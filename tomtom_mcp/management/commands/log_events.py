"""`manage.py log_events`: every log event the server writes, as Markdown (docs/log-events.md)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand

from core.catalog import reference


class Command(BaseCommand):
    help = "Print every log event the server writes (message, logger, level, fields), as Markdown."

    def handle(self, *args: Any, **options: Any) -> None:
        self.stdout.write(reference(), ending="")
