# A widget's report names the call that delivered its data (`delivery_request_id`, core/app_status.py),
# and a widget may report `cancelled`: the kind's choices list it. Adding a column with a constant default
# rewrites no row.

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('analytics', '0014_governance_calls_by_tenant'),
    ]

    operations = [
        migrations.AddField(
            model_name='appstatusevent',
            name='delivery_request_id',
            field=models.TextField(blank=True, default=''),
        ),
        migrations.AlterField(
            model_name='appstatusdailycount',
            name='kind',
            field=models.CharField(choices=[('app_data', 'App data'), ('too_large', "App data too large for the result: the app can't draw"), ('fetched', 'App data fetched'), ('host_dropped', 'App data fetched: host dropped it'), ('decode_failed', 'App data fetched: app failed to decode it'), ('fetch_failed', 'App data fetch failed'), ('drawn', 'App drawn'), ('failed', 'App failed'), ('cancelled', 'App cancelled'), ('retired_tool', 'Retired tool called'), ('outdated_call', "Outdated call: the tool's inputs changed"), ('deprecated_tool', 'Deprecated tool called'), ('alias_call', 'Alias called'), ('unknown', 'Unknown app-status message')], max_length=16),
        ),
        migrations.AlterField(
            model_name='appstatusevent',
            name='kind',
            field=models.CharField(choices=[('app_data', 'App data'), ('too_large', "App data too large for the result: the app can't draw"), ('fetched', 'App data fetched'), ('host_dropped', 'App data fetched: host dropped it'), ('decode_failed', 'App data fetched: app failed to decode it'), ('fetch_failed', 'App data fetch failed'), ('drawn', 'App drawn'), ('failed', 'App failed'), ('cancelled', 'App cancelled'), ('retired_tool', 'Retired tool called'), ('outdated_call', "Outdated call: the tool's inputs changed"), ('deprecated_tool', 'Deprecated tool called'), ('alias_call', 'Alias called'), ('unknown', 'Unknown app-status message')], max_length=16),
        ),
        migrations.AlterField(
            model_name='appstatushourlycount',
            name='kind',
            field=models.CharField(choices=[('app_data', 'App data'), ('too_large', "App data too large for the result: the app can't draw"), ('fetched', 'App data fetched'), ('host_dropped', 'App data fetched: host dropped it'), ('decode_failed', 'App data fetched: app failed to decode it'), ('fetch_failed', 'App data fetch failed'), ('drawn', 'App drawn'), ('failed', 'App failed'), ('cancelled', 'App cancelled'), ('retired_tool', 'Retired tool called'), ('outdated_call', "Outdated call: the tool's inputs changed"), ('deprecated_tool', 'Deprecated tool called'), ('alias_call', 'Alias called'), ('unknown', 'Unknown app-status message')], max_length=16),
        ),
        migrations.AlterField(
            model_name='oldcallerdaily',
            name='kind',
            field=models.CharField(choices=[('app_data', 'App data'), ('too_large', "App data too large for the result: the app can't draw"), ('fetched', 'App data fetched'), ('host_dropped', 'App data fetched: host dropped it'), ('decode_failed', 'App data fetched: app failed to decode it'), ('fetch_failed', 'App data fetch failed'), ('drawn', 'App drawn'), ('failed', 'App failed'), ('cancelled', 'App cancelled'), ('retired_tool', 'Retired tool called'), ('outdated_call', "Outdated call: the tool's inputs changed"), ('deprecated_tool', 'Deprecated tool called'), ('alias_call', 'Alias called'), ('unknown', 'Unknown app-status message')], max_length=16),
        ),
    ]
