"""The summary header on each tool's admin pages (the ledger row, its deprecation, alias or
retirement): its state in words, what replaces it, its retire-on date, who still calls it (a
total and one figure per host family, from the analytics when installed) with a CSV download,
and the next steps. It comes before any form, so a page opens on the answer, not on a picker."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from django.apps import apps
from django.contrib import admin
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.template.loader import render_to_string
from django.urls import reverse

from governance import selectors
from governance.admin.shared import governance_history_url, old_callers_url
from governance.clock import today
from governance.models import ToolName

CALLERS_SUMMARY = "admin/tools/_callers_summary.html"
"""The who-still-calls part of the header; it loads the analytics' `tool_summary` tags."""
CALLERS_CSV = "admin/tools/still_calling.csv"


def tool_summary(request: HttpRequest, name: str) -> dict[str, Any]:
    """What the header says about the ledger name `name` today."""
    entry = ToolName.objects.select_related("retirement", "deprecation", "alias").filter(name=name).first()
    status = selectors.ledger_statuses().get(name, "dropped")
    retirement = getattr(entry, "retirement", None)
    deprecation = getattr(entry, "deprecation", None)
    alias = getattr(entry, "alias", None)
    scheduled = deprecation or alias
    retire_on = getattr(scheduled, "retire_on", None)
    replacements: list[str] = []
    if retirement is not None:
        replacements = list(retirement.replaced_by)
    elif alias is not None:
        replacements = [alias.target_id]
    elif deprecation is not None:
        replacements = list(deprecation.replaced_by)
    if status == "retired":
        since = retirement.since if retirement is not None else retire_on
        state = "retired"
        sentence = f"{name} is retired" + (f" since {since.isoformat()}" if since else "") + ": never listed."
    elif retire_on is not None:
        state = "scheduled to retire"
        what = f"an alias of {alias.target_id}" if alias is not None else "deprecated"
        sentence = f"{name} is {what}, scheduled to retire on {retire_on.isoformat()} (00:00 UTC)."
    elif alias is not None:
        state, sentence = "aliased", f"{name} is an alias of {alias.target_id}: not listed, its calls reach it."
    elif status == "deprecated":
        state, sentence = "deprecated", f"{name} is deprecated, with no retire-on date: listed with a notice."
    elif status == "live":
        state, sentence = "live", f"{name} is live: listed and answered."
    else:
        state, sentence = "dropped", f"{name} is dropped: no longer registered, and no state says what replaces it."
    return {
        "name": name,
        "state": state,
        "sentence": sentence,
        "replacements": replacements,
        "retire_on": retire_on,
        "days_left": (retire_on - today()).days if retire_on is not None and state != "retired" else None,
        "pages": _pages(entry),
        "next_steps": _next_steps(request, name, status),
        "callers_summary": CALLERS_SUMMARY if apps.is_installed("analytics") else None,
        "csv_url": reverse("admin:tools_toolname_callers_csv", args=[name]) if apps.is_installed("analytics") else None,
        "history_url": governance_history_url(name),
        "old_callers_url": old_callers_url(name),
    }


def _pages(entry: ToolName | None) -> list[dict[str, str]]:
    if entry is None:
        return []
    pages = [{"url": reverse("admin:tools_toolname_change", args=[entry.pk]), "label": "Ledger row"}]
    for relation, route, label in (
        ("deprecation", "deprecatedtool", "Deprecation"),
        ("alias", "toolalias", "Alias"),
        ("retirement", "retiredtool", "Retirement"),
    ):
        row = getattr(entry, relation, None)
        if row is not None:
            pages.append({"url": reverse(f"admin:tools_{route}_change", args=[row.pk]), "label": label})
    return pages


def _next_steps(request: HttpRequest, name: str, status: str) -> list[dict[str, str]]:
    """The add forms this name can go to next, pre-filled with it."""
    steps = []
    query = urlencode({"tool": name})
    if status == "live" and request.user.has_perm("tools.add_deprecatedtool"):
        steps.append({"url": f"{reverse('admin:tools_deprecatedtool_add')}?{query}", "label": "Deprecate…"})
    if status in ("live", "deprecated", "dropped") and request.user.has_perm("tools.add_toolalias"):
        steps.append({"url": f"{reverse('admin:tools_toolalias_add')}?{query}", "label": "Make it an alias…"})
    if status != "retired" and request.user.has_perm("tools.add_retiredtool"):
        steps.append({"url": f"{reverse('admin:tools_retiredtool_add')}?{query}", "label": "Retire it now…"})
    return steps


class CallersCsvPage(admin.ModelAdmin):
    """The CSV of who still calls one tool the old way, for the ledger's admin (which routes it)."""

    def callers_csv_view(self, request: HttpRequest, name: str) -> HttpResponse:
        if not self.has_view_permission(request):
            raise PermissionDenied
        if not apps.is_installed("analytics"):
            raise Http404("The analytics are not installed: no one's calls are counted.")
        if not ToolName.objects.filter(name=name).exists():
            raise Http404(f"{name} is not in the tool name ledger.")
        text = render_to_string(CALLERS_CSV, {"tool": name})
        response = HttpResponse(text, content_type="text/csv; charset=utf-8")
        response["Content-Disposition"] = f'attachment; filename="still-calling-{name}.csv"'
        return response
