# When ingestion last stored each family of events, how far they reach, and the retention's cutoff (IngestionMark).

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('analytics', '0012_tool_call_error_and_rate_limited'),
    ]

    operations = [
        migrations.CreateModel(
            name='IngestionMark',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('family', models.CharField(max_length=32, unique=True)),
                ('data_up_to', models.DateTimeField(null=True)),
                ('last_ingest', models.DateTimeField(null=True)),
                ('kept_from', models.DateTimeField(null=True)),
            ],
        ),
    ]
