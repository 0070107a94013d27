"""On PostgreSQL, the database itself keeps the tool name ledger append-only: a trigger
refuses any DELETE of a row and any UPDATE that changes a row's name, whoever sends it (raw
SQL, another service, a console). Dates and notes may still be corrected. TRUNCATE (used by
test flushes) is not a row operation and is left to the database's own permissions.

Other databases rely on the model layer (governance.models.ToolNameQuerySet and the pre_delete
receiver).
"""

from django.db import migrations

CREATE = """
CREATE OR REPLACE FUNCTION tools_toolname_append_only() RETURNS trigger AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        RAISE EXCEPTION 'The tool name ledger only grows: % cannot be deleted or renamed.', OLD.name
            USING ERRCODE = 'integrity_constraint_violation';
    END IF;
    IF NEW.name IS DISTINCT FROM OLD.name THEN
        RAISE EXCEPTION 'The tool name ledger only grows: % cannot be deleted or renamed.', OLD.name
            USING ERRCODE = 'integrity_constraint_violation';
    END IF;
    RETURN NEW;
END;
$$ LANGUAGE plpgsql
"""

CREATE_TRIGGER = """
CREATE TRIGGER tools_toolname_append_only
    BEFORE UPDATE OR DELETE ON tools_toolname
    FOR EACH ROW EXECUTE FUNCTION tools_toolname_append_only()
"""

DROP_TRIGGER = "DROP TRIGGER IF EXISTS tools_toolname_append_only ON tools_toolname"
DROP = "DROP FUNCTION IF EXISTS tools_toolname_append_only()"


def create_trigger(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(CREATE, params=None)  # no parameters: `%` is plpgsql's, not a placeholder
        schema_editor.execute(CREATE_TRIGGER, params=None)


def drop_trigger(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(DROP_TRIGGER, params=None)
        schema_editor.execute(DROP, params=None)


class Migration(migrations.Migration):
    dependencies = [("tools", "0003_contract_kinds")]

    operations = [migrations.RunPython(create_trigger, drop_trigger)]
