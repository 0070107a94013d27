"""`manage.py analytics_retention [--days N]`: drop raw events older than N days; rollups stay.

N defaults to ANALYTICS_RETENTION_DAYS (0: keep everything, and the command does nothing). The
cutoff is midnight UTC N days before today, so no hour is cut in two. Every raw event table goes
(`EVENT_MODELS`: app-status, tool-call and exchange events). On PostgreSQL whole monthly
partitions are dropped and the rest deleted (analytics/partitions.py). The session caps' counts
of the days before the cutoff go too (`WidgetReportSession`): reports that old are not ingested
any more, so nothing reads them. Schedule it daily.
"""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from analytics.ingest.store import EVENT_MODELS, HEARTBEAT_FAMILIES
from analytics.models import WidgetReportSession
from analytics.partitions import drop_before, mark_kept_from, retention_cutoff


class Command(BaseCommand):
    help = (
        "Drop raw app-status, tool-call and exchange events older than the retention "
        "(ANALYTICS_RETENTION_DAYS); rollups stay."
    )

    def add_arguments(self, parser):
        parser.add_argument("--days", type=int, default=None, help="Keep this many days (default: the setting).")

    def handle(self, *args, **options):
        if options["days"] is not None and options["days"] < 1:
            raise CommandError("--days must be at least 1")
        cutoff = retention_cutoff(options["days"])
        if cutoff is None:
            self.stdout.write("retention is off (ANALYTICS_RETENTION_DAYS is 0): nothing dropped")
            return
        for family, model in EVENT_MODELS.items():
            removed = drop_before(model, cutoff)
            if family in HEARTBEAT_FAMILIES:  # the exchange events go with the tool calls' cutoff
                mark_kept_from(family, cutoff)
            self.stdout.write(f"{model._meta.verbose_name_plural}: {removed:,} events before {cutoff:%Y-%m-%d} dropped")
        sessions, _ = WidgetReportSession.objects.filter(day__lt=cutoff).delete()
        self.stdout.write(f"report sessions: {sessions:,} days of sessions before {cutoff:%Y-%m-%d} dropped")
