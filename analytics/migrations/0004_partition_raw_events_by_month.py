"""On PostgreSQL, partition the raw event tables by month of `time` (analytics/partitions.py).

Each table is rebuilt as a partitioned table with the same columns: the events are copied into
one partition per month they fall in, and the constraints and indexes are made again under the
same names. A partitioned table's primary key must hold the partition key: app-status events
keep their `id` (from a sequence, still unique) in a primary key `(id, time)`; tool-call events'
primary key is their identity `(time, event_id)` already. SQLite keeps plain tables.
Not reversible on PostgreSQL (the tables stay partitioned).
"""

from django.db import migrations

from analytics.models import FAILING_KINDS, OLD_CALLER_KINDS

NOTABLE = ", ".join(f"'{kind}'" for kind in FAILING_KINDS + OLD_CALLER_KINDS)
TABLES = {
    "analytics_appstatusevent": [
        "ALTER TABLE {t} ADD PRIMARY KEY (id, time)",
        "ALTER TABLE {t} ADD CONSTRAINT analytics_event_identity UNIQUE (time, event_id)",
        f"CREATE INDEX analytics_event_notable ON {{t}} (kind, time) WHERE kind IN ({NOTABLE})",
    ],
    "analytics_toolcallevent": ["ALTER TABLE {t} ADD PRIMARY KEY (time, event_id)"],
}
WITH_ID = {"analytics_appstatusevent"}


def partition(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    from analytics.partitions import ensure_partitions

    with schema_editor.connection.cursor() as cursor:
        for table, constraints in TABLES.items():
            old = f"{table}_unpartitioned"
            cursor.execute(f"ALTER TABLE {table} RENAME TO {old}")
            cursor.execute(f"CREATE TABLE {table} (LIKE {old} INCLUDING DEFAULTS) PARTITION BY RANGE (time)")
            if table in WITH_ID:
                sequence = f"{table}_id_seq_by_month"
                cursor.execute(f"CREATE SEQUENCE {sequence}")
                cursor.execute(f"SELECT setval('{sequence}', coalesce((SELECT max(id) FROM {old}), 0) + 1, false)")
                cursor.execute(f"ALTER TABLE {table} ALTER COLUMN id SET DEFAULT nextval('{sequence}')")
                cursor.execute(f"ALTER SEQUENCE {sequence} OWNED BY {table}.id")
            cursor.execute(f"SELECT DISTINCT date_trunc('month', time, 'UTC') FROM {old}")
            ensure_partitions(table, [month for (month,) in cursor.fetchall()])
            cursor.execute(f"INSERT INTO {table} SELECT * FROM {old}")
            cursor.execute(f"DROP TABLE {old}")
            for statement in constraints:
                cursor.execute(statement.format(t=table))


class Migration(migrations.Migration):
    atomic = True
    dependencies = [("analytics", "0003_seed_host_families")]

    operations = [migrations.RunPython(partition, migrations.RunPython.noop)]
