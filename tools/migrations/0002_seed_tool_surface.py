"""Seed the tool-surface tables with the canonical history in tools/fixtures/tool_surface.json.

Loading adds or updates rows and never deletes, so it is safe to run again; unapplying it
leaves the rows (0001's reversal drops the tables).
"""

from django.db import migrations


def seed(apps, schema_editor):
    from tools.governance.fixtures import load_surface, read_fixture

    load_surface(
        read_fixture(),
        ledger=apps.get_model("tools", "ToolName"),
        retired=apps.get_model("tools", "RetiredTool"),
        changes=apps.get_model("tools", "ContractChange"),
    )


class Migration(migrations.Migration):
    dependencies = [("tools", "0001_tool_surface")]

    operations = [migrations.RunPython(seed, migrations.RunPython.noop)]
