"""One hourly tool-call row per hour and combination: every outcome together, with the calls by
outcome as columns, as the daily rollup has had since 0006.

An hour's calls of one combination were split over a row per outcome, and each row is an upsert
for every batch that adds to it: a third of the ingestion's hourly rows, and of their cost, went
to the rarer outcomes (ADR 18). The rows of each hour and combination are folded into one: the
figures summed, each outcome's calls in its column (`outcome_other` for the codes not in
tools/errors.py when this was written).

The figures of one outcome (its latencies, bytes) are not kept apart any more; no report read
them apart. Going back, the rows per outcome are counted again from the raw events, as ingestion
counts them: hours whose raw events the retention dropped lose their hourly rows.
"""

from django.db import migrations, models

DIMENSIONS = "hour, client, tool, backend, tenant"
OUTCOMES = ("ok", "invalid_arguments", "unknown_tool", "retired", "unauthorized", "unsupported", "unavailable",
            "retry_later", "malformed", "internal")
"""The outcomes known when this migration was written (tools/errors.py), each counted in a column."""
BOUNDS = (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000, 60000)
FIGURES = (
    "calls", "upstream_calls", "bytes", "total_timed", "total_ms_sum", "upstream_timed", "upstream_ms_sum",
    *(f"{metric}_le_{bound}" for metric in ("total", "upstream") for bound in BOUNDS),
)
OUTCOME_COLUMNS = (*(f"outcome_{outcome}" for outcome in OUTCOMES), "outcome_other")


def fold(apps, schema_editor):
    """Replace each hour and combination's rows, one per outcome, by their sum."""
    known = ", ".join(f"'{outcome}'" for outcome in OUTCOMES)
    by_outcome = [
        *(f"sum(CASE WHEN outcome = '{outcome}' THEN calls ELSE 0 END)" for outcome in OUTCOMES),
        f"sum(CASE WHEN outcome NOT IN ({known}) THEN calls ELSE 0 END)",
    ]
    columns = (*FIGURES, *OUTCOME_COLUMNS)
    sums = ", ".join(
        f"{total} AS {name}" for total, name in zip([*(f"sum({n})" for n in FIGURES), *by_outcome], columns, strict=True)
    )
    with schema_editor.connection.cursor() as cursor:
        cursor.execute(
            f"CREATE TEMPORARY TABLE analytics_toolcallhourly_folded AS SELECT {DIMENSIONS}, {sums} "
            f"FROM analytics_toolcallhourly GROUP BY {DIMENSIONS}"
        )
        cursor.execute("DELETE FROM analytics_toolcallhourly")
        cursor.execute(  # `outcome` is still a column: left out, it would be NULL, so it is '' until dropped
            f"INSERT INTO analytics_toolcallhourly ({DIMENSIONS}, outcome, {', '.join(columns)}) "
            f"SELECT {DIMENSIONS}, '', {', '.join(columns)} FROM analytics_toolcallhourly_folded"
        )
        cursor.execute("DROP TABLE analytics_toolcallhourly_folded")


def _hour(schema_editor) -> str:
    if schema_editor.connection.vendor == "postgresql":
        return "date_trunc('hour', time, 'UTC')"
    return "strftime('%Y-%m-%d %H:00:00', time)"


def unfold(apps, schema_editor):
    """The rows per outcome, counted from the raw events (the table is empty: see `empty`)."""
    timed = "upstream_calls > 0 AND upstream_ms IS NOT NULL"
    figures = [
        "count(*)", "coalesce(sum(upstream_calls), 0)", "coalesce(sum(bytes), 0)", "count(total_ms)",
        "coalesce(sum(total_ms), 0)", f"count(*) FILTER (WHERE {timed})",
        f"coalesce(sum(upstream_ms) FILTER (WHERE {timed}), 0)",
        *(f"count(*) FILTER (WHERE total_ms <= {bound})" for bound in BOUNDS),
        *(f"count(*) FILTER (WHERE {timed} AND upstream_ms <= {bound})" for bound in BOUNDS),
        *("0" for _ in OUTCOME_COLUMNS),  # still columns, without a database default
    ]
    with schema_editor.connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO analytics_toolcallhourly ({DIMENSIONS}, outcome, {', '.join((*FIGURES, *OUTCOME_COLUMNS))}) "
            f"SELECT {_hour(schema_editor)}, client, tool, backend, tenant, outcome, {', '.join(figures)} "
            f"FROM analytics_toolcallevent GROUP BY 1, client, tool, backend, tenant, outcome"
        )


def empty(apps, schema_editor):
    """Going back: no folded row survives, so `outcome` comes back to an empty table."""
    with schema_editor.connection.cursor() as cursor:
        cursor.execute("DELETE FROM analytics_toolcallhourly")


class Migration(migrations.Migration):
    dependencies = [
        ("analytics", "0006_split_daily_tool_call_rollup"),
    ]

    operations = [
        migrations.RemoveConstraint(model_name="toolcallhourly", name="analytics_toolcall_hourly_unique"),
        *(
            migrations.AddField(model_name="toolcallhourly", name=name, field=models.BigIntegerField(default=0))
            for name in OUTCOME_COLUMNS
        ),
        migrations.RunPython(fold, unfold),
        migrations.RemoveField(model_name="toolcallhourly", name="outcome"),
        migrations.AddConstraint(
            model_name="toolcallhourly",
            constraint=models.UniqueConstraint(
                fields=("hour", "client", "tool", "backend", "tenant"), name="analytics_toolcall_hourly_unique"
            ),
        ),
        migrations.RunPython(migrations.RunPython.noop, empty),  # backwards: runs first
    ]
