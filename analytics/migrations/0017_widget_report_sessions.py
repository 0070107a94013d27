# Issue #42: the client session on every tool-call and app-status line (`session`, core/events.py), the
# funnel's `mismatched` and `dropped` reports, the `dropped` kind of a report over a session cap, and the
# per-session counts the caps hold (analytics/ingest/caps.py). Columns with a constant default rewrite no row.

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('analytics', '0016_widget_funnel_daily'),
    ]

    operations = [
        migrations.AddField(
            model_name='appstatusevent',
            name='session',
            field=models.TextField(blank=True, default=''),
        ),
        migrations.AddField(
            model_name='toolcallevent',
            name='session',
            field=models.TextField(blank=True, default=''),
        ),
        migrations.AddField(
            model_name='widgetfunneldaily',
            name='dropped',
            field=models.IntegerField(default=0),
        ),
        migrations.AddField(
            model_name='widgetfunneldaily',
            name='mismatched',
            field=models.IntegerField(default=0),
        ),
        migrations.AlterField(
            model_name='appstatusdailycount',
            name='kind',
            field=models.CharField(choices=[('app_data', 'App data'), ('too_large', "App data too large for the result: the app can't draw"), ('fetched', 'App data fetched'), ('host_dropped', 'App data fetched: host dropped it'), ('decode_failed', 'App data fetched: app failed to decode it'), ('fetch_failed', 'App data fetch failed'), ('drawn', 'App drawn'), ('failed', 'App failed'), ('cancelled', 'App cancelled'), ('retired_tool', 'Retired tool called'), ('outdated_call', "Outdated call: the tool's inputs changed"), ('deprecated_tool', 'Deprecated tool called'), ('alias_call', 'Alias called'), ('unknown', 'Unknown app-status message'), ('dropped', 'Widget report over a session cap (not counted)')], max_length=16),
        ),
        migrations.AlterField(
            model_name='appstatusevent',
            name='kind',
            field=models.CharField(choices=[('app_data', 'App data'), ('too_large', "App data too large for the result: the app can't draw"), ('fetched', 'App data fetched'), ('host_dropped', 'App data fetched: host dropped it'), ('decode_failed', 'App data fetched: app failed to decode it'), ('fetch_failed', 'App data fetch failed'), ('drawn', 'App drawn'), ('failed', 'App failed'), ('cancelled', 'App cancelled'), ('retired_tool', 'Retired tool called'), ('outdated_call', "Outdated call: the tool's inputs changed"), ('deprecated_tool', 'Deprecated tool called'), ('alias_call', 'Alias called'), ('unknown', 'Unknown app-status message'), ('dropped', 'Widget report over a session cap (not counted)')], max_length=16),
        ),
        migrations.AlterField(
            model_name='appstatushourlycount',
            name='kind',
            field=models.CharField(choices=[('app_data', 'App data'), ('too_large', "App data too large for the result: the app can't draw"), ('fetched', 'App data fetched'), ('host_dropped', 'App data fetched: host dropped it'), ('decode_failed', 'App data fetched: app failed to decode it'), ('fetch_failed', 'App data fetch failed'), ('drawn', 'App drawn'), ('failed', 'App failed'), ('cancelled', 'App cancelled'), ('retired_tool', 'Retired tool called'), ('outdated_call', "Outdated call: the tool's inputs changed"), ('deprecated_tool', 'Deprecated tool called'), ('alias_call', 'Alias called'), ('unknown', 'Unknown app-status message'), ('dropped', 'Widget report over a session cap (not counted)')], max_length=16),
        ),
        migrations.AlterField(
            model_name='oldcallerdaily',
            name='kind',
            field=models.CharField(choices=[('app_data', 'App data'), ('too_large', "App data too large for the result: the app can't draw"), ('fetched', 'App data fetched'), ('host_dropped', 'App data fetched: host dropped it'), ('decode_failed', 'App data fetched: app failed to decode it'), ('fetch_failed', 'App data fetch failed'), ('drawn', 'App drawn'), ('failed', 'App failed'), ('cancelled', 'App cancelled'), ('retired_tool', 'Retired tool called'), ('outdated_call', "Outdated call: the tool's inputs changed"), ('deprecated_tool', 'Deprecated tool called'), ('alias_call', 'Alias called'), ('unknown', 'Unknown app-status message'), ('dropped', 'Widget report over a session cap (not counted)')], max_length=16),
        ),
        migrations.CreateModel(
            name='WidgetReportSession',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('day', models.DateTimeField()),
                ('session', models.TextField()),
                ('client', models.TextField()),
                ('reports', models.IntegerField(default=0)),
                ('tools', models.TextField(default='[]')),
                ('dropped', models.IntegerField(default=0)),
            ],
            options={
                'constraints': [models.UniqueConstraint(fields=('day', 'session', 'client'), name='analytics_report_session_unique')],
            },
        ),
    ]
