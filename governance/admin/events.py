"""The governance history's admin: every change, read-only, each row linking to its tool's
history page (governance.admin.history).
"""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.http import HttpRequest
from django.utils.html import format_html

from governance.admin.shared import governance_history_url
from governance.models import GovernanceEvent


@admin.register(GovernanceEvent)
class GovernanceEventAdmin(admin.ModelAdmin):
    """Every governance change, read-only (the services write it; nothing edits it)."""

    list_display = ("time", "tool_history", "subject", "action", "who", "message")
    list_filter = ("subject", "action", "via")
    search_fields = ("tool", "actor", "message")
    date_hierarchy = "time"

    @admin.display(description="tool", ordering="tool")
    def tool_history(self, obj: GovernanceEvent) -> str:
        return format_html('<a href="{}">{}</a>', governance_history_url(obj.tool), obj.tool)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False
