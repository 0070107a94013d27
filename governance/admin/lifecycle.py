"""What the deprecated, aliased and retired tools' pages share (`LifecycleAdmin`).

Undoing any of the three (withdraw, end, un-retire) asks why on its own page and goes through
the services with the staff member as the actor, so the history says who and why; there is no
generic delete.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.apps import apps
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import URLPattern, path, reverse

from governance.admin.shared import MEDIA, governance_links, in_force_text
from governance.admin.summary import tool_summary
from governance.models import ToolName

CALLERS_PANEL = "analytics/still_calling_panel.html"
"""The analytics' panel of who still calls a tool (included when the analytics are installed)."""


def callers_panel() -> str | None:
    """The template of the analytics' who-still-calls panel, or None without the analytics."""
    return CALLERS_PANEL if apps.is_installed("analytics") else None


class ReasonForm(forms.Form):
    reason = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 3, "cols": 60}),
        help_text="Kept in the tool's governance history with your name.",
    )


class LifecycleAdmin(admin.ModelAdmin):
    """What the deprecated, aliased and retired tools' pages share: no generic delete (undoing
    asks why, on its own page), the lists readable at 1,280 px, and each tool's page showing who
    still calls it, its history and its next steps."""

    change_form_template = "admin/tools/lifecycle_change_form.html"
    change_list_template = "admin/tools/governance_change_list.html"
    undo_label = ""
    """The undo page's title and button (e.g. "Un-retire")."""

    @property
    def media(self) -> forms.Media:
        return super().media + MEDIA

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    @admin.display(description="history and callers")
    def links(self, obj: Any) -> str:
        return governance_links(obj.name)

    @admin.display(description="replaced by")
    def replacements(self, obj: Any) -> str:
        return ", ".join(obj.replaced_by) or "—"

    def route(self, view: str) -> str:
        """The admin URL name of this model's `view` (`tools_retiredtool_undo`)."""
        return f"{self.opts.app_label}_{self.opts.model_name}_{view}"

    def get_urls(self) -> list[URLPattern]:
        own = [path("<path:object_id>/undo/", self.admin_site.admin_view(self.undo_view), name=self.route("undo"))]
        return own + super().get_urls()

    def actions_for(self, request: HttpRequest, obj: Any) -> list[dict[str, str]]:
        """The links above a tool's page: its next steps."""
        if obj is None or not self.has_change_permission(request, obj):
            return []
        return [{"url": reverse(f"admin:{self.route('undo')}", args=[obj.pk]), "label": f"{self.undo_label}…"}]

    def change_view(
        self, request: HttpRequest, object_id: str, form_url: str = "", extra_context: dict[str, Any] | None = None
    ) -> HttpResponse:
        obj = self.get_object(request, object_id)
        context = {
            **(extra_context or {}),
            "lifecycle_actions": self.actions_for(request, obj),
            "callers_panel": callers_panel(),
            "tool_name": obj.name if obj is not None else None,
            "summary": tool_summary(request, obj.name) if obj is not None else None,
        }
        return super().change_view(request, object_id, form_url, context)

    def add_view(
        self, request: HttpRequest, form_url: str = "", extra_context: dict[str, Any] | None = None
    ) -> HttpResponse:
        """A form pre-filled with a ledger name (`?tool=`, `?name=`) opens on that name's summary."""
        name = (request.GET.get("tool") or request.GET.get("name") or "")[:128]
        known = bool(name) and ToolName.objects.filter(name=name).exists()
        context = {**(extra_context or {}), "summary": tool_summary(request, name) if known else None}
        return super().add_view(request, form_url, context)

    def undo_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        obj = self.get_object(request, object_id)
        if obj is None:
            raise Http404
        if not self.has_change_permission(request, obj):
            raise PermissionDenied
        form = ReasonForm(request.POST or None)
        if request.method == "POST" and form.is_valid():
            try:
                with transaction.atomic():
                    self.log_deletions(request, self.model._default_manager.filter(pk=obj.pk))  # before it goes
                    self.undo(obj, reason=form.cleaned_data["reason"], by=request.user)
            except ValidationError as error:
                form.add_error(None, error)
            else:
                self.message_user(request, self.undone_text(obj), messages.SUCCESS)
                return HttpResponseRedirect(reverse(f"admin:{self.route('changelist')}"))
        context = {
            **self.admin_site.each_context(request),
            "title": f"{self.undo_label}: {obj.name}",
            "subtitle": None,
            "opts": self.opts,
            "object": obj,
            "form": form,
            "action": self.undo_label,
            "what_happens": self.undo_text(obj),
            "media": self.media,
        }
        return TemplateResponse(request, "admin/tools/reason_form.html", context)

    def undo(self, obj: Any, *, reason: str, by: Any) -> None:
        raise NotImplementedError

    def undo_text(self, obj: Any) -> str:
        raise NotImplementedError

    def undone_text(self, obj: Any) -> str:
        return f"{obj.name}: {self.undo_label.lower()} done. {in_force_text()}"
