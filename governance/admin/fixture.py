"""Compare with the committed fixture (`admin:tools_toolname_fixture`), a page of the ledger's
admin: what the admin changed against `governance/fixtures/tool_surface.json`, the new file to
download, and what `check --deploy --database default` reports now and once it is committed.
"""

from __future__ import annotations

import dataclasses
import difflib
from typing import Any

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
            "checks_now": [check_sentence(message) for message in sorted(now, key=_most_serious_first)],
            "checks_after": [check_sentence(message) for message in sorted(after, key=_most_serious_first)],
            "deploy_fails_now": any(message.is_serious() for message in now),
            "deploy_fails_after": any(message.is_serious() for message in after),
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


FIELD_WORDS = {
    "replaced_by": "replacements",
    "retire_on": "retire-on date",
    "since": "since date",
    "reason": "reason",
    "target": "target",
    "arguments": "argument mapping",
    "release": "release",
    "message": "message",
    "first_seen": "first-seen date",
    "first_release": "first release",
    "note": "note",
    "kind": "kind",
    "instead": "what to send instead",
    "new_input": "new input",
    "was": "old shape",
    "now": "new shape",
}
"""Each committed record's fields in words, for the sentences of what changed."""

EXPECTED_CHECKS = frozenset({"tools.E100", "tools.W001"})
"""The checks that say the tables and the committed file disagree: expected until it is committed."""


def surface_changes(committed: Surface, tables: Surface) -> list[dict[str, str]]:
    """Each row the admin added, changed or removed, against the committed history, with a
    sentence saying so."""
    sections: list[tuple[str, dict[str, Any], dict[str, Any]]] = [
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
            sentence = change_sentence(section, key, before.get(key), after.get(key))
            changes.append({"section": section, "key": key, "what": what, "sentence": sentence})
    return changes


def _changed_fields(before: Any, after: Any) -> str:
    names = [
        FIELD_WORDS.get(field.name, field.name)
        for field in dataclasses.fields(after)
        if getattr(before, field.name) != getattr(after, field.name)
    ]
    return ", ".join(names)


def _replaced(replaced_by: tuple[str, ...]) -> str:
    return f", replaced by {', '.join(replaced_by)}" if replaced_by else ", naming no replacement"


def change_sentence(section: str, key: str, before: Any, after: Any) -> str:
    """One change in plain words: what happened to `key` in the admin since the last commit."""
    if section == "contract changes":
        record = after or before
        subject = f"{record.input} of {record.tool}"
        if before is None:
            return f"A contract change was recorded: {subject} ({after.kind.value.replace('_', ' ')})."
        if after is None:
            return f"The contract change of {subject} was deleted."
        return f"The contract change of {subject} was edited ({_changed_fields(before, after)})."
    if section == "ledger":
        if before is None:
            return f"{key} was added to the tool name ledger."
        if after is None:
            return f"{key} is in the committed ledger but not in the tables (apply the fixture to restore it)."
        return f"{key}'s ledger row was corrected ({_changed_fields(before, after)})."
    if after is None:
        undone = {
            "deprecated": "is no longer deprecated",
            "aliases": "is no longer an alias",
            "retired": "was un-retired",
        }
        return f"{key} {undone[section]} (withdrawn, ended, or moved to another state)."
    if before is not None:
        noun = {"deprecated": "deprecation", "aliases": "alias", "retired": "retirement"}[section]
        return f"{key}'s {noun} was changed ({_changed_fields(before, after)})."
    if section == "deprecated":
        retire = f", to retire on {after.retire_on.isoformat()}" if after.retire_on else ""
        return f"{key} was deprecated{_replaced(after.replaced_by)}{retire}."
    if section == "aliases":
        renamed = f", renaming {len(after.arguments)} argument(s)" if after.arguments else ""
        retire = f", to retire on {after.retire_on.isoformat()}" if after.retire_on else ""
        return f"{key} became an alias of {after.target}{renamed}{retire}."
    return f"{key} was retired{_replaced(after.replaced_by)}."


def check_sentence(message: django_checks.CheckMessage) -> dict[str, Any]:
    """A check's message for the page: its id, what it says, and whether it is the expected
    reminder to commit the file (tools.E100, W001), a warning, or something to fix."""
    if message.id in EXPECTED_CHECKS:
        verdict = "expected until the downloaded file is committed"
        kind = "expected"
    elif message.is_serious():
        verdict, kind = "to fix before deploying: it stops `check --deploy`", "fix"
    else:
        verdict, kind = "a warning: the deploy still passes", "warning"
    return {
        "id": message.id,
        "obj": message.obj,
        "msg": message.msg,
        "hint": message.hint,
        "verdict": verdict,
        "kind": kind,
    }
