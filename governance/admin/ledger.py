"""The tool name ledger's admin: read-only names, their dates and note corrected through the
services, and the routes to each name's governance history and to the fixture comparison.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin
from django.http import HttpRequest, HttpResponse
from django.urls import URLPattern, path, reverse
from django.utils.html import format_html

from governance import selectors, services
from governance.admin.fixture import FixturePage
from governance.admin.history import GovernanceHistoryPage
from governance.admin.shared import MEDIA, VIA_ADMIN, governance_history_url, governance_links
from governance.admin.summary import CallersCsvPage, tool_summary
from governance.clock import today
from governance.models import ToolName


class ToolNameForm(forms.ModelForm):
    class Meta:
        model = ToolName
        fields = ("first_seen", "first_release", "note")


@admin.register(ToolName)
class ToolNameAdmin(GovernanceHistoryPage, FixturePage, CallersCsvPage):
    """The ledger: names are added by `migrate` and the committed fixture and never change; a
    row's dates and note are corrected here, through the services (recorded). Each row links to
    its governance history (`governance_view`); the list links to the fixture comparison."""

    form = ToolNameForm
    list_display = ("name", "status", "first_seen", "first_release", "note", "history")
    list_select_related = ("retirement", "deprecation", "alias")
    search_fields = ("name",)
    readonly_fields = ("name", "status", "links")
    fields = ("name", "status", "first_seen", "first_release", "note", "links")
    change_list_template = "admin/tools/governance_change_list.html"
    change_form_template = "admin/tools/lifecycle_change_form.html"

    @property
    def media(self) -> forms.Media:
        return super().media + MEDIA

    @admin.display(description="status")
    def status(self, obj: ToolName) -> str:
        day = today()
        for relation, label in (("retirement", "retired"), ("alias", "alias"), ("deprecation", "deprecated")):
            row = getattr(obj, relation, None)
            if row is None:
                continue
            retire_on = getattr(row, "retire_on", None)
            if retire_on is not None and retire_on <= day:
                return "retired"
            return f"{label}, retired on {retire_on.isoformat()}" if retire_on else label
        return "live" if obj.name in selectors.registered_tools() else "dropped"

    @admin.display(description="history")
    def history(self, obj: ToolName) -> str:
        return format_html('<a href="{}">governance history</a>', governance_history_url(obj.name))

    @admin.display(description="history and callers")
    def links(self, obj: ToolName) -> str:
        return governance_links(obj.name)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def save_model(self, request: HttpRequest, obj: ToolName, form: Any, change: bool) -> None:
        data = form.cleaned_data
        services.ledger_update(
            entry=obj,
            first_seen=data["first_seen"],
            first_release=data["first_release"],
            note=data["note"],
            by=request.user,
            via=VIA_ADMIN,
        )

    def change_view(
        self, request: HttpRequest, object_id: str, form_url: str = "", extra_context: dict[str, Any] | None = None
    ) -> HttpResponse:
        """The row's page opens on the tool's summary (state, replacements, retire-on date, who
        still calls it), then its dates and note."""
        obj = self.get_object(request, object_id)
        summary = tool_summary(request, obj.name) if obj is not None else None
        return super().change_view(request, object_id, form_url, {**(extra_context or {}), "summary": summary})

    def changelist_view(self, request: HttpRequest, extra_context: dict[str, Any] | None = None) -> HttpResponse:
        actions = [{"url": reverse("admin:tools_toolname_fixture"), "label": "Compare with the committed fixture"}]
        return super().changelist_view(request, {**(extra_context or {}), "list_actions": actions})

    def get_urls(self) -> list[URLPattern]:
        own = [
            path(
                "governance/<str:name>/",
                self.admin_site.admin_view(self.governance_view),
                name="tools_toolname_governance",
            ),
            path("fixture/", self.admin_site.admin_view(self.fixture_view), name="tools_toolname_fixture"),
            path(
                "callers/<str:name>/csv/",
                self.admin_site.admin_view(self.callers_csv_view),
                name="tools_toolname_callers_csv",
            ),
        ]
        return own + super().get_urls()  # before the admin's catch-all `<path:object_id>/`
