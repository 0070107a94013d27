from django.apps import AppConfig


class ToolsConfig(AppConfig):
    name = "tools"
    verbose_name = "MCP tools"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from django.db.models.signals import post_migrate, pre_delete

        from tools import checks  # noqa: F401  (registers the tool-surface system checks)
        from tools.governance import receivers
        from tools.models import ToolName

        post_migrate.connect(receivers.ledger_registered_tools, sender=self)
        pre_delete.connect(receivers.refuse_ledger_delete, sender=ToolName)
