# Issue #44: the upstream contract canary's latest finding per backend and tool (CanaryResult).

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('analytics', '0018_evidence_tables'),
    ]

    operations = [
        migrations.CreateModel(
            name='CanaryResult',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('backend', models.CharField(max_length=32)),
                ('tool', models.CharField(max_length=100)),
                ('status', models.CharField(max_length=16)),
                ('drifted', models.BooleanField(null=True)),
                ('detail', models.TextField(blank=True, default='')),
                ('requests', models.JSONField(default=list)),
                ('version', models.CharField(blank=True, default='', max_length=64)),
                ('latency_ms', models.FloatField(null=True)),
                ('checked_at', models.DateTimeField()),
                ('answered_at', models.DateTimeField(null=True)),
            ],
            options={
                'constraints': [
                    models.UniqueConstraint(fields=('backend', 'tool'), name='canary_result_per_backend_tool'),
                ],
            },
        ),
    ]
