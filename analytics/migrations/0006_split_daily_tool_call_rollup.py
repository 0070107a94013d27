"""One daily tool-call row per day and combination: every outcome together, with the calls by
outcome as columns, and `integer` counters.

A 30-day report read one wide row per day, combination *and outcome*, each summed over 37
`bigint` columns, which PostgreSQL sums as `numeric`; now it reads a quarter of the rows, summed
as `bigint` (ADR 15). The table is filled again from `ToolCallHourly`, which holds everything it
holds; going back rebuilds the old daily table from it the same way.
"""

from django.db import migrations, models

DIMENSIONS = "client, tool, backend, tenant"
OUTCOMES = ("ok", "invalid_arguments", "unknown_tool", "retired", "unauthorized", "unsupported", "unavailable",
            "retry_later", "malformed", "internal")
"""The outcomes known when this migration was written (tools/errors.py), each counted in a column."""
BOUNDS = (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000, 60000)
FIGURES = (
    "calls", "upstream_calls", "bytes", "total_timed", "total_ms_sum", "upstream_timed", "upstream_ms_sum",
    *(f"{metric}_le_{bound}" for metric in ("total", "upstream") for bound in BOUNDS),
)


def _day(schema_editor) -> str:
    if schema_editor.connection.vendor == "postgresql":
        return "date_trunc('day', hour, 'UTC')"
    return "strftime('%Y-%m-%d 00:00:00', hour)"


def _fill(schema_editor, table: str, dimensions: str, figures: dict[str, str]) -> None:
    """Insert into `table` the sums per UTC day and `dimensions` of the hourly rollup's rows:
    `figures` maps each column to the expression summed."""
    sums = ", ".join(f"sum({expression})" for expression in figures.values())
    with schema_editor.connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {table} (day, {dimensions}, {', '.join(figures)}) "
            f"SELECT {_day(schema_editor)}, {dimensions}, {sums} FROM analytics_toolcallhourly GROUP BY 1, {dimensions}"
        )


def fill_split(apps, schema_editor):
    """The new daily table from the hourly rollup."""
    known = ", ".join(f"'{outcome}'" for outcome in OUTCOMES)
    by_outcome = {
        **{f"outcome_{outcome}": f"CASE WHEN outcome = '{outcome}' THEN calls ELSE 0 END" for outcome in OUTCOMES},
        "outcome_other": f"CASE WHEN outcome NOT IN ({known}) THEN calls ELSE 0 END",
    }
    _fill(schema_editor, "analytics_toolcalldaily", DIMENSIONS, {**{name: name for name in FIGURES}, **by_outcome})


def fill_by_outcome(apps, schema_editor):
    """The old daily table (a row per outcome) from the hourly rollup."""
    _fill(schema_editor, "analytics_toolcalldaily", f"{DIMENSIONS}, outcome", {name: name for name in FIGURES})


class Migration(migrations.Migration):
    dependencies = [
        ("analytics", "0005_app_status_daily_counts"),
    ]

    operations = [
        migrations.RunPython(migrations.RunPython.noop, fill_by_outcome),  # backwards: runs last
        migrations.DeleteModel(name="ToolCallDaily"),
        migrations.CreateModel(
            name="ToolCallDaily",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("day", models.DateTimeField()),
                ("client", models.TextField()),
                ("tool", models.TextField()),
                ("backend", models.TextField()),
                ("tenant", models.TextField()),
                ("calls", models.IntegerField()),
                ("upstream_calls", models.IntegerField()),
                ("bytes", models.BigIntegerField()),
                ("total_timed", models.IntegerField()),
                ("total_ms_sum", models.FloatField()),
                ("upstream_timed", models.IntegerField()),
                ("upstream_ms_sum", models.FloatField()),
                ("total_le_1", models.IntegerField(default=0)),
                ("total_le_2", models.IntegerField(default=0)),
                ("total_le_5", models.IntegerField(default=0)),
                ("total_le_10", models.IntegerField(default=0)),
                ("total_le_20", models.IntegerField(default=0)),
                ("total_le_50", models.IntegerField(default=0)),
                ("total_le_100", models.IntegerField(default=0)),
                ("total_le_200", models.IntegerField(default=0)),
                ("total_le_500", models.IntegerField(default=0)),
                ("total_le_1000", models.IntegerField(default=0)),
                ("total_le_2000", models.IntegerField(default=0)),
                ("total_le_5000", models.IntegerField(default=0)),
                ("total_le_10000", models.IntegerField(default=0)),
                ("total_le_20000", models.IntegerField(default=0)),
                ("total_le_60000", models.IntegerField(default=0)),
                ("upstream_le_1", models.IntegerField(default=0)),
                ("upstream_le_2", models.IntegerField(default=0)),
                ("upstream_le_5", models.IntegerField(default=0)),
                ("upstream_le_10", models.IntegerField(default=0)),
                ("upstream_le_20", models.IntegerField(default=0)),
                ("upstream_le_50", models.IntegerField(default=0)),
                ("upstream_le_100", models.IntegerField(default=0)),
                ("upstream_le_200", models.IntegerField(default=0)),
                ("upstream_le_500", models.IntegerField(default=0)),
                ("upstream_le_1000", models.IntegerField(default=0)),
                ("upstream_le_2000", models.IntegerField(default=0)),
                ("upstream_le_5000", models.IntegerField(default=0)),
                ("upstream_le_10000", models.IntegerField(default=0)),
                ("upstream_le_20000", models.IntegerField(default=0)),
                ("upstream_le_60000", models.IntegerField(default=0)),
                *((f"outcome_{outcome}", models.IntegerField(default=0)) for outcome in OUTCOMES),
                ("outcome_other", models.IntegerField(default=0)),
            ],
            options={
                "constraints": [
                    models.UniqueConstraint(
                        fields=("day", "client", "tool", "backend", "tenant"), name="analytics_toolcall_daily_unique"
                    )
                ],
            },
        ),
        migrations.RunPython(fill_split, migrations.RunPython.noop),
    ]
