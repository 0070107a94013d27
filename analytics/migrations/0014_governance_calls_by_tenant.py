"""Governance lines carry the tenant, and two new kinds are old callers (issue #31): calls to a
deprecated tool (`deprecated_tool`) and through an alias (`alias_call`). The raw app-status
events get a `tenant` column, the old callers' rollup counts per tenant too ("" for the rows
counted before, whose lines had none), and the partial index of the notable kinds is made
again with the new ones. Numbered 0011 beside the widget funnel's 0010; both follow 0009."""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('analytics', '0013_ingestion_marks'),
    ]

    operations = [
        migrations.RemoveConstraint(
            model_name='oldcallerdaily',
            name='analytics_oldcaller_daily_unique',
        ),
        migrations.RemoveIndex(
            model_name='appstatusevent',
            name='analytics_event_notable',
        ),
        migrations.AddField(
            model_name='appstatusevent',
            name='tenant',
            field=models.TextField(blank=True, default=''),
        ),
        migrations.AddField(
            model_name='oldcallerdaily',
            name='tenant',
            field=models.TextField(default=''),
        ),
        migrations.AlterField(
            model_name='appstatusdailycount',
            name='kind',
            field=models.CharField(choices=[('app_data', 'App data'), ('too_large', "App data too large for the result: the app can't draw"), ('fetched', 'App data fetched'), ('host_dropped', 'App data fetched: host dropped it'), ('decode_failed', 'App data fetched: app failed to decode it'), ('fetch_failed', 'App data fetch failed'), ('drawn', 'App drawn'), ('failed', 'App failed'), ('retired_tool', 'Retired tool called'), ('outdated_call', "Outdated call: the tool's inputs changed"), ('deprecated_tool', 'Deprecated tool called'), ('alias_call', 'Alias called'), ('unknown', 'Unknown app-status message')], max_length=16),
        ),
        migrations.AlterField(
            model_name='appstatusevent',
            name='kind',
            field=models.CharField(choices=[('app_data', 'App data'), ('too_large', "App data too large for the result: the app can't draw"), ('fetched', 'App data fetched'), ('host_dropped', 'App data fetched: host dropped it'), ('decode_failed', 'App data fetched: app failed to decode it'), ('fetch_failed', 'App data fetch failed'), ('drawn', 'App drawn'), ('failed', 'App failed'), ('retired_tool', 'Retired tool called'), ('outdated_call', "Outdated call: the tool's inputs changed"), ('deprecated_tool', 'Deprecated tool called'), ('alias_call', 'Alias called'), ('unknown', 'Unknown app-status message')], max_length=16),
        ),
        migrations.AlterField(
            model_name='appstatushourlycount',
            name='kind',
            field=models.CharField(choices=[('app_data', 'App data'), ('too_large', "App data too large for the result: the app can't draw"), ('fetched', 'App data fetched'), ('host_dropped', 'App data fetched: host dropped it'), ('decode_failed', 'App data fetched: app failed to decode it'), ('fetch_failed', 'App data fetch failed'), ('drawn', 'App drawn'), ('failed', 'App failed'), ('retired_tool', 'Retired tool called'), ('outdated_call', "Outdated call: the tool's inputs changed"), ('deprecated_tool', 'Deprecated tool called'), ('alias_call', 'Alias called'), ('unknown', 'Unknown app-status message')], max_length=16),
        ),
        migrations.AlterField(
            model_name='oldcallerdaily',
            name='kind',
            field=models.CharField(choices=[('app_data', 'App data'), ('too_large', "App data too large for the result: the app can't draw"), ('fetched', 'App data fetched'), ('host_dropped', 'App data fetched: host dropped it'), ('decode_failed', 'App data fetched: app failed to decode it'), ('fetch_failed', 'App data fetch failed'), ('drawn', 'App drawn'), ('failed', 'App failed'), ('retired_tool', 'Retired tool called'), ('outdated_call', "Outdated call: the tool's inputs changed"), ('deprecated_tool', 'Deprecated tool called'), ('alias_call', 'Alias called'), ('unknown', 'Unknown app-status message')], max_length=16),
        ),
        migrations.AddIndex(
            model_name='appstatusevent',
            index=models.Index(condition=models.Q(('kind__in', ('failed', 'too_large', 'host_dropped', 'decode_failed', 'fetch_failed', 'retired_tool', 'outdated_call', 'deprecated_tool', 'alias_call'))), fields=['kind', 'time'], name='analytics_event_notable'),
        ),
        migrations.AddConstraint(
            model_name='oldcallerdaily',
            constraint=models.UniqueConstraint(fields=('day', 'kind', 'client', 'tenant', 'tool', 'replaced_by', 'input', 'change'), name='analytics_oldcaller_daily_unique'),
        ),
    ]
