"""Compare with the committed fixture (`admin:tools_toolname_fixture`), a page of the ledger's
admin: what the admin changed against `governance/fixtures/tool_surface.json`, the new file to
download, and what `check --deploy --database default` reports now and once it is committed.
"""

from __future__ import annotations

import difflib

from django.contrib import admin
from django.core import checks as django_checks
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse

from governance import checks as tool_checks
from governance import fixtures, selectors
from governance.clock import today
from governance.surface import Surface, dumps


class FixturePage(admin.ModelAdmin):
    """The comparison page's view, for the ledger's admin (which routes it)."""

    def fixture_view(self, request: HttpRequest) -> HttpResponse:
        """The tables against the committed fixture: what changed, the new file to download, and
        what `check --deploy --database default` reports now and once the file is committed."""
        if not self.has_view_permission(request):
            raise PermissionDenied
        day = today()
        tables = selectors.tool_surface().at(day)  # as export writes it: a retire-on date that came is a retirement
        text = dumps(tables)
        if request.GET.get("download"):
            response = HttpResponse(text, content_type="application/json; charset=utf-8")
            response["Content-Disposition"] = 'attachment; filename="tool_surface.json"'
            return response
        try:
            committed_text = fixtures.FIXTURE_PATH.read_text(encoding="utf-8")
            committed: Surface | None = fixtures.read_fixture(fixtures.FIXTURE_PATH)
        except (OSError, ValueError, KeyError, TypeError):
            committed_text, committed = "", None
        registry = selectors.registered_tools()
        now = django_checks.run_checks(tags=["tool_surface"], include_deployment_checks=True, databases=["default"])
        after = tool_checks.surface_issues(tables, registry, day=day)
        context = {
            **self.admin_site.each_context(request),
            "title": "Compare with the committed fixture",
            "subtitle": None,
            "opts": self.opts,
            "media": self.media,
            "fixture_name": tool_checks.FIXTURE_NAME,
            "today": day,
            "sections": tool_checks.differing_sections(tables, committed) if committed else ["the whole file"],
            "changes": surface_changes(committed or Surface(), tables),
            "diff": diff_lines(committed_text, text),
            "checks_now": sorted(now, key=_most_serious_first),
            "checks_after": sorted(after, key=_most_serious_first),
        }
        return TemplateResponse(request, "admin/tools/fixture.html", context)


def _most_serious_first(message: django_checks.CheckMessage) -> tuple[int, str, str]:
    return -message.level, str(message.id), str(message.obj)


def diff_lines(before: str, after: str) -> list[dict[str, str]]:
    """The unified diff of the committed file and the tables' file, line by line with its kind."""
    lines = difflib.unified_diff(
        before.splitlines(), after.splitlines(), "committed", "tables (download)", n=2, lineterm=""
    )
    kinds = {"+": "added", "-": "removed", "@": "hunk"}
    return [
        {"text": line, "kind": kinds.get(line[:1], "") if line[:3] not in ("+++", "---") else "file"} for line in lines
    ]


def surface_changes(committed: Surface, tables: Surface) -> list[dict[str, str]]:
    """Each row the admin added, changed or removed, against the committed history."""
    sections: list[tuple[str, dict[str, object], dict[str, object]]] = [
        ("ledger", {e.name: e for e in committed.ledger}, {e.name: e for e in tables.ledger}),
        ("deprecated", dict(committed.deprecated_by_name), dict(tables.deprecated_by_name)),
        ("aliases", dict(committed.aliases_by_name), dict(tables.aliases_by_name)),
        ("retired", dict(committed.retired_by_name), dict(tables.retired_by_name)),
        (
            "contract changes",
            {f"{c.tool}.{c.input}": c for c in committed.changes},
            {f"{c.tool}.{c.input}": c for c in tables.changes},
        ),
    ]
    changes = []
    for section, before, after in sections:
        for key in sorted(set(before) | set(after)):
            if before.get(key) == after.get(key):
                continue
            what = "added" if key not in before else "removed" if key not in after else "changed"
            changes.append({"section": section, "key": key, "what": what})
    return changes
