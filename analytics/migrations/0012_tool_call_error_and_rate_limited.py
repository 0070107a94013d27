# The tool-call line's error message and TomTom 429 count (core/calls.py), and an index of the calls that did
# not end `ok` for the drill-down (on PostgreSQL made on every monthly partition). Adding a column with a
# constant default rewrites no row.

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('analytics', '0009_event_columns_from_declarations'),
    ]

    operations = [
        migrations.AddField(
            model_name='toolcallevent',
            name='error',
            field=models.TextField(blank=True, default=''),
        ),
        migrations.AddField(
            model_name='toolcallevent',
            name='upstream_rate_limited',
            field=models.BigIntegerField(null=True),
        ),
        migrations.AddIndex(
            model_name='toolcallevent',
            index=models.Index(condition=models.Q(('outcome', 'ok'), _negated=True), fields=['time'], name='analytics_call_failing'),
        ),
    ]
