from django.apps import AppConfig


class GovernanceConfig(AppConfig):
    """Tool governance. The label stays `tools`: the tables, migrations, content types, permissions
    and admin URLs it had when it lived in the tool catalogue."""

    name = "governance"
    label = "tools"
    verbose_name = "MCP tools"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from django.db.models.signals import post_migrate, pre_delete

        from governance import (
            checks,  # noqa: F401  (registers the tool-surface system checks)
            receivers,
        )
        from governance.models import ToolName

        post_migrate.connect(receivers.ledger_registered_tools, sender=self)
        pre_delete.connect(receivers.refuse_ledger_delete, sender=ToolName)
