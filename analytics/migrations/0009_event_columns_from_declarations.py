# The raw events' columns are made from the events' declarations (core/): the tool-call columns lose their
# help texts, which the declarations and docs/analytics.md carry. No change to the tables.

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('analytics', '0008_old_caller_daily_rollup'),
    ]

    operations = [
        migrations.AlterField(
            model_name='toolcallevent',
            name='bytes',
            field=models.BigIntegerField(null=True),
        ),
        migrations.AlterField(
            model_name='toolcallevent',
            name='outcome',
            field=models.TextField(),
        ),
    ]
