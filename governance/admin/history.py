"""One tool's governance history (`admin:tools_toolname_governance`), a page of the ledger's
admin: every change to one name, linked from each ledger row and each lifecycle page.
"""

from __future__ import annotations

from django.contrib import admin
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.urls import reverse

from governance import selectors
from governance.admin.shared import old_callers_url
from governance.models import ToolName

HISTORY_PER_PAGE = 100


class GovernanceHistoryPage(admin.ModelAdmin):
    """The history page's view, for the ledger's admin (which routes it)."""

    def governance_view(self, request: HttpRequest, name: str) -> HttpResponse:
        """Every governance change to one ledger name, oldest first (HISTORY_PER_PAGE a page):
        when, who, what and the message. Needs the view permission on governance events."""
        if not request.user.has_perm("tools.view_governanceevent"):
            raise PermissionDenied
        entry = ToolName.objects.select_related("retirement", "deprecation", "alias").filter(name=name).first()
        events = selectors.tool_history(name)
        if entry is None and not events.exists():
            raise Http404(f"{name} is not in the tool name ledger.")
        pages = []
        for relation, route in (
            ("deprecation", "deprecatedtool"),
            ("alias", "toolalias"),
            ("retirement", "retiredtool"),
        ):
            row = getattr(entry, relation, None)
            if row is not None:
                pages.append((reverse(f"admin:tools_{route}_change", args=[row.pk]), relation.capitalize()))
        context = {
            **self.admin_site.each_context(request),
            "title": f"Governance history: {name}",
            "subtitle": None,
            "opts": self.opts,
            "name": name,
            "status": selectors.ledger_statuses().get(name, "dropped"),
            "page": Paginator(events, HISTORY_PER_PAGE).get_page(request.GET.get("page")),
            "ledger_url": reverse("admin:tools_toolname_change", args=[entry.pk]) if entry else None,
            "state_pages": pages,
            "old_callers_url": old_callers_url(name),
        }
        return TemplateResponse(request, "admin/tools/governance_history.html", context)
