"""The tool lifecycle (issue #31, docs/adr/0030-tool-lifecycle.md): deprecated tools, with
their replacements and retire-on date, and aliases, old names whose calls reach another tool.
Both are recorded in the governance history (two new subjects)."""

import django.db.models.deletion
import django.utils.timezone
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('tools', '0006_client_surface'),
    ]

    operations = [
        migrations.AlterField(
            model_name='governanceevent',
            name='subject',
            field=models.CharField(choices=[('ledger', 'ledger name'), ('deprecation', 'deprecation'), ('alias', 'alias'), ('retirement', 'retirement'), ('contract_change', 'contract change')], max_length=20),
        ),
        migrations.AlterField(
            model_name='governanceevent',
            name='via',
            field=models.CharField(help_text='admin, a management command, migrate, schedule (a retire-on date) or code.', max_length=40),
        ),
        migrations.CreateModel(
            name='DeprecatedTool',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('replaced_by', models.JSONField(blank=True, default=list, help_text='The live tools a caller should use, in the order the notice names them.')),
                ('since', models.DateField(default=django.utils.timezone.localdate, help_text='When it was deprecated.')),
                ('retire_on', models.DateField(blank=True, help_text='The UTC day it is retired on every replica; empty: not scheduled.', null=True)),
                ('reason', models.TextField(blank=True, help_text="Why, and what to do instead; becomes the retired answer's message.")),
                ('tool', models.OneToOneField(db_column='name', on_delete=django.db.models.deletion.PROTECT, related_name='deprecation', to='tools.toolname', to_field='name')),
            ],
            options={
                'ordering': ['tool'],
            },
        ),
        migrations.CreateModel(
            name='ToolAlias',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('arguments', models.JSONField(blank=True, default=dict, help_text='Arguments the old name took under another name: old name -> new name.')),
                ('since', models.DateField(default=django.utils.timezone.localdate)),
                ('retire_on', models.DateField(blank=True, help_text='The UTC day the old name is retired on every replica; empty: not scheduled.', null=True)),
                ('reason', models.TextField(blank=True, help_text="Why; becomes the retired answer's message.")),
                ('target', models.ForeignKey(db_column='target', help_text='The live tool that answers calls to the old name.', on_delete=django.db.models.deletion.PROTECT, related_name='aliases', to='tools.toolname', to_field='name')),
                ('tool', models.OneToOneField(db_column='name', on_delete=django.db.models.deletion.PROTECT, related_name='alias', to='tools.toolname', to_field='name')),
            ],
            options={
                'verbose_name': 'alias',
                'verbose_name_plural': 'aliases',
                'ordering': ['tool'],
            },
        ),
    ]
