"""The old-callers report from a daily rollup (ADR 21), filled from the raw events still stored.

The report read the raw events of the kinds `retired_tool` and `outdated_call`, so it emptied
for the days whose raw events the retention had dropped, while every other report answered
from its rollups. Existing events are counted into the new rollup here, as ingestion counts them:
per UTC day, kind, client, tool and what changed, with the first and last time seen. Days
whose raw events are gone stay empty, as the report showed them. Going back drops the rollup.
"""

from django.db import migrations, models
from django.db.models import Count, Max, Min
from django.db.models.functions import TruncDay

OLD_CALLER_KINDS = ("retired_tool", "outdated_call")
"""The app-status kinds of old callers when this migration was written."""
DIMENSIONS = ("kind", "client", "tool", "replaced_by", "input", "change")


def count_stored_events(apps, schema_editor):
    events = apps.get_model("analytics", "AppStatusEvent")
    rollup = apps.get_model("analytics", "OldCallerDaily")
    grouped = (
        events.objects.using(schema_editor.connection.alias)
        .filter(kind__in=OLD_CALLER_KINDS)
        .annotate(day=TruncDay("time"))
        .values("day", *DIMENSIONS)
        .annotate(calls=Count("*"), first_seen=Min("time"), last_seen=Max("time"))
        .order_by()
    )
    rollup.objects.using(schema_editor.connection.alias).bulk_create(
        [rollup(**row) for row in grouped.iterator()], batch_size=1000
    )


class Migration(migrations.Migration):
    dependencies = [
        ("analytics", "0007_fold_outcomes_into_hourly_tool_call_rollup"),
    ]

    operations = [
        migrations.CreateModel(
            name="OldCallerDaily",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("day", models.DateTimeField()),
                (
                    "kind",
                    models.CharField(
                        choices=[
                            ("app_data", "App data"),
                            ("too_large", "App data too large for the result: the app can't draw"),
                            ("fetched", "App data fetched"),
                            ("host_dropped", "App data fetched: host dropped it"),
                            ("decode_failed", "App data fetched: app failed to decode it"),
                            ("fetch_failed", "App data fetch failed"),
                            ("drawn", "App drawn"),
                            ("failed", "App failed"),
                            ("retired_tool", "Retired tool called"),
                            ("outdated_call", "Outdated call: the tool's inputs changed"),
                            ("unknown", "Unknown app-status message"),
                        ],
                        max_length=16,
                    ),
                ),
                ("client", models.TextField()),
                ("tool", models.TextField()),
                ("replaced_by", models.TextField()),
                ("input", models.TextField()),
                ("change", models.TextField()),
                ("calls", models.BigIntegerField()),
                ("first_seen", models.DateTimeField()),
                ("last_seen", models.DateTimeField()),
            ],
            options={
                "constraints": [
                    models.UniqueConstraint(
                        fields=("day", "kind", "client", "tool", "replaced_by", "input", "change"),
                        name="analytics_oldcaller_daily_unique",
                    )
                ],
            },
        ),
        migrations.RunPython(count_stored_events, migrations.RunPython.noop, elidable=True),
    ]
