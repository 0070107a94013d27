# Issue #43, the product evidence: the exchange events (`ExchangeEvent`, partitioned by month on
# PostgreSQL like the other raw tables: migration 0004), the evidence rollups, the tool-call fields
# they count, an index per raw table to read one client session's events, and who still calls
# counted in calls (`OldCallerDaily.tool_calls`: a call with two outdated inputs is one call).

from django.db import migrations, models

EXCHANGE = "analytics_exchangeevent"


def partition_exchange(apps, schema_editor):
    """The new, empty table rebuilt as a partitioned one, its key and index made again."""
    if schema_editor.connection.vendor != "postgresql":
        return
    with schema_editor.connection.cursor() as cursor:
        old = f"{EXCHANGE}_unpartitioned"
        cursor.execute(f"ALTER TABLE {EXCHANGE} RENAME TO {old}")
        cursor.execute(f"CREATE TABLE {EXCHANGE} (LIKE {old} INCLUDING DEFAULTS) PARTITION BY RANGE (time)")
        cursor.execute(f"DROP TABLE {old}")
        cursor.execute(f"ALTER TABLE {EXCHANGE} ADD PRIMARY KEY (time, event_id)")
        cursor.execute(
            f"CREATE INDEX analytics_exchange_session ON {EXCHANGE} (session, time) WHERE NOT (session = '')"
        )


def count_calls_once(apps, schema_editor):
    """`tool_calls` of the rows already counted: their calls, but for outdated inputs on the days
    whose raw events are still stored, recounted so that a call counts on the row of its first
    outdated input only (analytics/ingest/old_calls.py); on days the retention dropped, as before."""
    OldCallerDaily = apps.get_model("analytics", "OldCallerDaily")
    AppStatusEvent = apps.get_model("analytics", "AppStatusEvent")
    OldCallerDaily.objects.update(tool_calls=models.F("calls"))
    first: dict[tuple, tuple] = {}
    fields = ("time", "event_id", "client", "tenant", "tool", "replaced_by", "input", "change", "request_id")
    for row in AppStatusEvent.objects.filter(kind="outdated_call").values_list(*fields).iterator():
        moment, event_id, client, tenant, tool, replaced_by, input_, change, request_id = row
        call = (request_id, client, tool) if request_id else (bytes(event_id),)
        line = (input_, change, bytes(event_id), moment, client, tenant, tool, replaced_by)
        if call not in first or line < first[call]:
            first[call] = line
    counts: dict[tuple, int] = {}
    days = set()
    for input_, change, _event_id, moment, client, tenant, tool, replaced_by in first.values():
        day = moment.replace(hour=0, minute=0, second=0, microsecond=0)
        days.add(day)
        key = (day, client, tenant, tool, replaced_by, input_, change)
        counts[key] = counts.get(key, 0) + 1
    for row in OldCallerDaily.objects.filter(kind="outdated_call", day__in=days):
        row.tool_calls = counts.get(
            (row.day, row.client, row.tenant, row.tool, row.replaced_by, row.input, row.change), 0
        )
        row.save(update_fields=["tool_calls"])


class Migration(migrations.Migration):
    dependencies = [
        ("analytics", "0017_widget_report_sessions"),
    ]

    operations = [
        migrations.CreateModel(
            name="ArgumentFailureDaily",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("day", models.DateTimeField()),
                ("client", models.TextField()),
                ("tool", models.TextField()),
                ("path", models.TextField()),
                ("calls", models.BigIntegerField()),
            ],
        ),
        migrations.CreateModel(
            name="CorrectionDaily",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("day", models.DateTimeField()),
                ("client", models.TextField()),
                ("tool", models.TextField()),
                ("outcome", models.TextField()),
                ("failures", models.BigIntegerField()),
                ("corrected", models.BigIntegerField()),
            ],
        ),
        migrations.CreateModel(
            name="ExchangeEvent",
            fields=[
                (
                    "pk",
                    models.CompositePrimaryKey(
                        "time", "event_id", blank=True, editable=False, primary_key=True, serialize=False
                    ),
                ),
                ("time", models.DateTimeField()),
                ("event_id", models.BinaryField(max_length=16)),
                (
                    "kind",
                    models.CharField(
                        choices=[
                            ("session", "Session started"),
                            ("listed", "Tools listed"),
                            ("refused", "MCP request refused"),
                            ("unknown", "Unknown exchange message"),
                        ],
                        max_length=16,
                    ),
                ),
                ("raw", models.TextField()),
                ("client", models.TextField()),
                ("client_version", models.TextField(blank=True, default="")),
                ("protocol_version", models.TextField(blank=True, default="")),
                ("requested_version", models.TextField(blank=True, default="")),
                ("transport", models.TextField(blank=True, default="")),
                ("apps", models.TextField(blank=True, default="")),
                ("tenant", models.TextField(blank=True, default="")),
                ("user_agent", models.TextField(blank=True, default="")),
                ("request_id", models.TextField(blank=True, default="")),
                ("session", models.TextField(blank=True, default="")),
                ("backend", models.TextField(blank=True, default="")),
                ("method", models.TextField(blank=True, default="")),
                ("error", models.TextField(blank=True, default="")),
                ("replica", models.TextField(blank=True, default="")),
                ("bytes", models.BigIntegerField(null=True)),
                ("code", models.BigIntegerField(null=True)),
                ("pid", models.BigIntegerField(null=True)),
                ("tools", models.TextField(blank=True, default="")),
            ],
        ),
        migrations.CreateModel(
            name="ListedToolDaily",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("day", models.DateTimeField()),
                ("client", models.TextField()),
                ("tool", models.TextField()),
                ("backend", models.TextField()),
                ("listings", models.BigIntegerField()),
                ("bytes", models.BigIntegerField()),
            ],
        ),
        migrations.CreateModel(
            name="ProtocolMixDaily",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("day", models.DateTimeField()),
                ("client", models.TextField()),
                ("client_version", models.TextField()),
                ("protocol_version", models.TextField()),
                ("kind", models.CharField(max_length=16)),
                ("count", models.BigIntegerField()),
            ],
        ),
        migrations.CreateModel(
            name="RefusedRequestDaily",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("day", models.DateTimeField()),
                ("client", models.TextField()),
                ("method", models.TextField()),
                ("code", models.BigIntegerField()),
                ("count", models.BigIntegerField()),
                ("first_seen", models.DateTimeField()),
                ("last_seen", models.DateTimeField()),
            ],
        ),
        migrations.CreateModel(
            name="UnknownToolDaily",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("day", models.DateTimeField()),
                ("client", models.TextField()),
                ("tool", models.TextField()),
                ("calls", models.BigIntegerField()),
                ("first_seen", models.DateTimeField()),
                ("last_seen", models.DateTimeField()),
            ],
        ),
        migrations.AddField(
            model_name="oldcallerdaily",
            name="tool_calls",
            field=models.BigIntegerField(default=0),
        ),
        migrations.AddField(
            model_name="toolcallevent",
            name="argument_paths",
            field=models.TextField(blank=True, default=""),
        ),
        migrations.AddField(
            model_name="toolcallevent",
            name="protocol_version",
            field=models.TextField(blank=True, default=""),
        ),
        migrations.AddField(
            model_name="toolcallevent",
            name="suggested",
            field=models.TextField(blank=True, default=""),
        ),
        migrations.AddIndex(
            model_name="appstatusevent",
            index=models.Index(
                condition=models.Q(("session", ""), _negated=True),
                fields=["session", "time"],
                name="analytics_event_session",
            ),
        ),
        migrations.AddIndex(
            model_name="toolcallevent",
            index=models.Index(
                condition=models.Q(("session", ""), _negated=True),
                fields=["session", "time"],
                name="analytics_call_session",
            ),
        ),
        migrations.AddConstraint(
            model_name="argumentfailuredaily",
            constraint=models.UniqueConstraint(
                fields=("day", "client", "tool", "path"), name="analytics_argument_failure_daily_unique"
            ),
        ),
        migrations.AddConstraint(
            model_name="correctiondaily",
            constraint=models.UniqueConstraint(
                fields=("day", "client", "tool", "outcome"), name="analytics_correction_daily_unique"
            ),
        ),
        migrations.AddIndex(
            model_name="exchangeevent",
            index=models.Index(
                condition=models.Q(("session", ""), _negated=True),
                fields=["session", "time"],
                name="analytics_exchange_session",
            ),
        ),
        migrations.AddConstraint(
            model_name="listedtooldaily",
            constraint=models.UniqueConstraint(
                fields=("day", "client", "tool", "backend"), name="analytics_listed_daily_unique"
            ),
        ),
        migrations.AddConstraint(
            model_name="protocolmixdaily",
            constraint=models.UniqueConstraint(
                fields=("day", "client", "client_version", "protocol_version", "kind"),
                name="analytics_protocol_mix_daily_unique",
            ),
        ),
        migrations.AddConstraint(
            model_name="refusedrequestdaily",
            constraint=models.UniqueConstraint(
                fields=("day", "client", "method", "code"), name="analytics_refused_daily_unique"
            ),
        ),
        migrations.AddConstraint(
            model_name="unknowntooldaily",
            constraint=models.UniqueConstraint(
                fields=("day", "client", "tool"), name="analytics_unknown_tool_daily_unique"
            ),
        ),
        migrations.RunPython(partition_exchange, migrations.RunPython.noop),
        migrations.RunPython(count_calls_once, migrations.RunPython.noop),
    ]
