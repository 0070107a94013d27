# The widget funnel (docs/analytics.md, "Widget funnel"): deliveries and the widget reports joined to them,
# per UTC day, host, tool, answer-size bucket and simplified or not; added to at ingestion.

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('analytics', '0015_app_status_delivery_request_id'),
    ]

    operations = [
        migrations.CreateModel(
            name='WidgetFunnelDaily',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('day', models.DateTimeField()),
                ('client', models.TextField()),
                ('tool', models.TextField()),
                ('size', models.TextField()),
                ('simplified', models.TextField()),
                ('delivered', models.IntegerField(default=0)),
                ('reported', models.IntegerField(default=0)),
                ('drawn', models.IntegerField(default=0)),
                ('failed_init', models.IntegerField(default=0)),
                ('failed_result', models.IntegerField(default=0)),
                ('failed_decode', models.IntegerField(default=0)),
                ('failed_fetch', models.IntegerField(default=0)),
                ('failed_render', models.IntegerField(default=0)),
                ('failed_other', models.IntegerField(default=0)),
                ('cancelled', models.IntegerField(default=0)),
            ],
            options={
                'constraints': [models.UniqueConstraint(fields=('day', 'client', 'tool', 'size', 'simplified'), name='analytics_funnel_daily_unique')],
            },
        ),
    ]
