"""Formerly seeded the tables from governance/fixtures/tool_surface.json with this migration's
historical models, which cannot hold fields added later. A new database is now seeded after
`migrate` by the post_migrate receiver (governance.receivers), with the current schema;
an existing one is brought to the fixture by `manage.py apply_tool_surface`.
"""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("tools", "0001_tool_surface")]

    operations = []
