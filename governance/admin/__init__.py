"""The admin for product staff: a tool's whole lifecycle, contract changes, the ledger.

Every write goes through `governance.services` (the same rules as the management commands,
code and the system checks), with the staff member as the actor, so each one lands in the
governance history; forms show a broken rule on the field at fault. Pickers offer what a rule
allows and label every ledger name with its status (live, deprecated, alias, retired, dropped);
the services still judge what is saved.

- **Ledger**: names are read-only, their dates and note are corrected through the services.
- **Deprecated tools** and **aliases**: added and edited here, with ordered replacements, the
  reason and the retire-on date; withdrawn or ended on a page that asks why.
- **Retired tools**: retiring a live tool is the kill switch (every replica stops listing it and
  answers calls to it as retired within GOVERNANCE_REFRESH_SECONDS plus one request; the form
  asks for a confirmation); un-retiring is its own page that asks why (no generic delete).
- Each deprecated, aliased or retired tool's page shows who still calls it (the analytics' panel,
  when the analytics are installed), and links to its governance history
  (`admin:tools_toolname_governance`) and the analytics' old callers.
- **Compare with the committed fixture** (`admin:tools_toolname_fixture`): what the admin
  changed against `governance/fixtures/tool_surface.json`, the new file to download, and what
  `check --deploy --database default` reports now and once the file is committed.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Sequence
from typing import Any
from urllib.parse import urlencode

from django import forms
from django.apps import apps
from django.conf import settings
from django.contrib import admin, messages
from django.core import checks as django_checks
from django.core.exceptions import PermissionDenied, ValidationError
from django.core.paginator import Paginator
from django.db import transaction
from django.db.models import Model, QuerySet
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import NoReverseMatch, URLPattern, path, reverse
from django.utils.html import format_html, format_html_join

from governance import checks as tool_checks
from governance import fixtures, selectors, services
from governance.clock import today
from governance.models import (
    ClientSurface,
    ContractChange,
    DeprecatedTool,
    GovernanceEvent,
    RetiredTool,
    ToolAlias,
    ToolName,
)
from governance.surface import ChangeKind, Surface, dumps
from tools.definition import TOOL_NAME

VIA_ADMIN = "admin"
HISTORY_PER_PAGE = 100
CALLERS_PANEL = "analytics/still_calling_panel.html"
"""The analytics' panel of who still calls a tool (included when the analytics are installed)."""
MEDIA = forms.Media(css={"all": ("tools/governance.css",)})


def kill_switch_text() -> str:
    """What retiring a live tool does, with this deployment's time bound."""
    return (
        "Retiring a live tool is the kill switch: every replica stops listing it and answers calls to it "
        f"as retired within {settings.GOVERNANCE_REFRESH_SECONDS:g} s plus one request "
        "(GOVERNANCE_REFRESH_SECONDS), without a restart or a deploy. Un-retiring it brings it back "
        "in the same time."
    )


def in_force_text() -> str:
    return (
        f"Every replica answers so within {settings.GOVERNANCE_REFRESH_SECONDS:g} s plus one request "
        "(GOVERNANCE_REFRESH_SECONDS), without a restart or a deploy."
    )


RETIRE_ON_HELP = (
    "The UTC day it is retired: from 00:00 UTC that day every replica answers it as retired (within "
    "GOVERNANCE_REFRESH_SECONDS), with no deploy and no one at the admin; the first replica to notice records "
    "it in the history. A later day than today; empty: not scheduled."
)


def governance_history_url(name: str) -> str:
    return reverse("admin:tools_toolname_governance", args=[name])


def old_callers_url(name: str) -> str | None:
    """The analytics dashboard's old callers (retired names, outdated inputs), for this tool only;
    None where the analytics are not installed."""
    try:
        dashboard = reverse("analytics:dashboard")
    except NoReverseMatch:
        return None
    return f"{dashboard}?{urlencode({'tool': name})}#old-callers"


def governance_links(name: str) -> str:
    """Links to the tool's governance history and to the clients still calling it the old way."""
    links = [(governance_history_url(name), "Governance history")]
    if (callers := old_callers_url(name)) is not None:
        links.append((callers, "Old callers (analytics): clients still calling it the old way"))
    return format_html_join(" · ", '<a href="{}">{}</a>', links)


def callers_panel() -> str | None:
    """The template of the analytics' who-still-calls panel, or None without the analytics."""
    return CALLERS_PANEL if apps.is_installed("analytics") else None


def status_label(name: str, statuses: dict[str, selectors.Status] | None = None) -> str:
    return f"{name} ({(statuses or selectors.ledger_statuses()).get(name, 'not in the ledger')})"


# --- Pickers ----------------------------------------------------------------------------------


class LedgerNameChoiceField(forms.ModelChoiceField):
    """A ledger name, labelled with its status (`tomtom-geocode (live)`)."""

    statuses: dict[str, selectors.Status] = {}

    def label_from_instance(self, obj: Any) -> str:
        return f"{obj.name} ({self.statuses.get(obj.name, 'dropped')})"


class ReplacementOrderWidget(forms.Widget):
    """Every live tool with a number box: the tools numbered 1, 2, 3... replace the tool, in that
    order (the order a caller's answer names them). A form posted without the boxes may send the
    names themselves, in order, under the field's own name."""

    template_name = "admin/tools/widgets/replacement_order.html"

    def __init__(self, attrs: dict[str, Any] | None = None) -> None:
        super().__init__(attrs)
        self.choices: list[tuple[str, str]] = []

    def get_context(self, name: str, value: Any, attrs: dict[str, Any] | None) -> dict[str, Any]:
        context = super().get_context(name, value, attrs)
        positions = {tool: index + 1 for index, tool in enumerate(value or [])}
        base = context["widget"]["attrs"].get("id") or f"id_{name}"
        context["widget"]["rows"] = [
            {
                "name": f"{name}__{tool}",
                "id": f"{base}_{index}",
                "tool": tool,
                "label": label,
                "position": positions.get(tool, ""),
            }
            for index, (tool, label) in enumerate(self.choices)
        ]
        return context

    def value_from_datadict(self, data: Any, files: Any, name: str) -> list[str]:
        if name in data:
            return [value for value in data.getlist(name) if value] if hasattr(data, "getlist") else data[name]
        ranked = []
        for index, (tool, _label) in enumerate(self.choices):
            raw = str(data.get(f"{name}__{tool}", "")).strip()
            if raw:
                try:
                    ranked.append((float(raw), index, tool))
                except ValueError:
                    ranked.append((float("inf"), index, tool))
        return [tool for _position, _index, tool in sorted(ranked)]

    def value_omitted_from_data(self, data: Any, files: Any, name: str) -> bool:
        return False  # no number at all is an empty list, not an omission

    def id_for_label(self, id_: str) -> str:
        return f"{id_}_0"


class ReplacementsField(forms.Field):
    """The tools that replace one, in order. It offers the live tools; whether a name may replace
    the tool is the services' rule, so this field only checks each value is a tool name."""

    widget = ReplacementOrderWidget

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("required", False)
        kwargs.setdefault(
            "help_text",
            "Number the live tools that replace it, 1 first: callers are told to use them in that order. "
            "Leave the others empty.",
        )
        super().__init__(**kwargs)

    def offer(self, choices: list[tuple[str, str]]) -> None:
        self.widget.choices = choices

    def to_python(self, value: Any) -> list[str]:
        names = [value] if isinstance(value, str) else list(value or [])
        for name in names:
            if not TOOL_NAME.fullmatch(name):
                raise ValidationError(f"{name!r} is not a tool name.")
        return names


def offer_replacements(field: ReplacementsField, *, but: str | None, stored: Sequence[str]) -> None:
    """Offer the live tools (not `but`): the stored replacements first, in their order, then the
    others. A stored replacement that is no longer live stays, labelled with its status, so
    saving it shows the services' reason instead of dropping it."""
    statuses = selectors.ledger_statuses()
    names = [*stored, *(name for name in selectors.live_tools() if name != but and name not in stored)]
    field.offer([(name, status_label(name, statuses)) for name in names])


def refused(form: forms.BaseForm, action: Callable[[], object]) -> bool:
    """Run a services' validation; its refusal goes on the form. True when it refused."""
    try:
        action()
    except ValidationError as error:
        if hasattr(error, "error_dict"):
            for field, problems in error.message_dict.items():
                form.add_error(field if field in form.fields else None, problems)
        else:
            form.add_error(None, error)
        return True
    return False


# --- Shared pages ------------------------------------------------------------------------------


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
        }
        return super().change_view(request, object_id, form_url, context)

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


# --- The ledger ------------------------------------------------------------------------------


class ToolNameForm(forms.ModelForm):
    class Meta:
        model = ToolName
        fields = ("first_seen", "first_release", "note")


@admin.register(ToolName)
class ToolNameAdmin(admin.ModelAdmin):
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
        ]
        return own + super().get_urls()  # before the admin's catch-all `<path:object_id>/`

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


# --- Deprecated tools ---------------------------------------------------------------------------


class DeprecatedToolForm(forms.ModelForm):
    """Deprecate a live tool: its ordered replacements, why, and the day it is retired."""

    tool = LedgerNameChoiceField(
        queryset=ToolName.objects.none(),
        to_field_name="name",
        help_text="A live tool: it stays listed and answered, its description and every result starting with "
        "the deprecation notice.",
    )
    replaced_by = ReplacementsField()

    class Meta:
        model = DeprecatedTool
        fields = ("tool", "replaced_by", "retire_on", "reason", "since")
        help_texts = {"retire_on": RETIRE_ON_HELP}

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if "tool" in self.fields:
            statuses = selectors.ledger_statuses()
            field = self.fields["tool"]
            field.queryset = ToolName.objects.filter(  # type: ignore[attr-defined]
                name__in=[name for name, status in statuses.items() if status == "live"]
            )
            field.statuses = statuses  # type: ignore[attr-defined]
        name = self.instance.name if self.instance.pk else None
        offer_replacements(self.fields["replaced_by"], but=name, stored=self.initial.get("replaced_by") or [])  # type: ignore[arg-type]

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if self.errors:
            return data
        stored = DeprecatedTool.objects.get(pk=self.instance.pk) if self.instance.pk else None
        name = stored.name if stored else getattr(data.get("tool"), "name", None)
        if name is not None:
            refused(
                self,
                lambda: services.deprecation_validate(
                    name=name, replaced_by=data.get("replaced_by") or [], retire_on=data.get("retire_on"), stored=stored
                ),
            )
        return data


@admin.register(DeprecatedTool)
class DeprecatedToolAdmin(LifecycleAdmin):
    form = DeprecatedToolForm
    list_display = ("tool", "replacements", "retire_on", "since", "reason")
    search_fields = ("tool__name", "reason")
    undo_label = "Withdraw the deprecation"

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> tuple[str, ...]:
        return ("tool", "notice", "links") if obj is not None else ()

    def get_fieldsets(self, request: HttpRequest, obj: Any = None) -> Any:
        fields = ("tool", "replaced_by", "retire_on", "reason", "since")
        if obj is None:
            return [(None, {"fields": fields, "description": in_force_text()})]
        return [
            (None, {"fields": fields, "description": in_force_text()}),
            ("What callers read", {"fields": ("notice",)}),
            ("History and callers", {"fields": ("links",)}),
        ]

    @admin.display(description="notice")
    def notice(self, obj: DeprecatedTool) -> str:
        from governance import rules

        deprecation = obj.as_deprecation()
        return format_html(
            "Description: <q>{} …</q><br>Every result: <q>{}</q>",
            rules.deprecation_notice(deprecation.replaced_by, deprecation.retire_on),
            rules.deprecation_notice(deprecation.replaced_by, deprecation.retire_on, name=obj.name),
        )

    def actions_for(self, request: HttpRequest, obj: Any) -> list[dict[str, str]]:
        links = super().actions_for(request, obj)
        if obj is not None and request.user.has_perm("tools.add_retiredtool"):
            retire = f"{reverse('admin:tools_retiredtool_add')}?{urlencode({'tool': obj.name})}"
            links.insert(0, {"url": retire, "label": "Retire it now…"})
        return links

    def save_model(self, request: HttpRequest, obj: DeprecatedTool, form: Any, change: bool) -> None:
        data = form.cleaned_data
        fields = {
            "replaced_by": data["replaced_by"],
            "reason": data["reason"],
            "retire_on": data["retire_on"],
            "by": request.user,
            "via": VIA_ADMIN,
        }
        if change:
            services.deprecation_update(deprecation=obj, since=data["since"], **fields)
            return
        saved = services.deprecation_create(name=data["tool"].name, since=data["since"], **fields)
        obj.pk = saved.pk
        self.message_user(request, f"{saved.name} is deprecated. {in_force_text()}", messages.SUCCESS)

    def undo(self, obj: DeprecatedTool, *, reason: str, by: Any) -> None:
        services.deprecation_withdraw(deprecation=obj, reason=reason, by=by, via=VIA_ADMIN)

    def undo_text(self, obj: DeprecatedTool) -> str:
        scheduled = f" and its retirement on {obj.retire_on.isoformat()} is cancelled" if obj.retire_on else ""
        return f"{obj.name} becomes a plain live tool again: no notice in its description or results{scheduled}."


# --- Aliases ----------------------------------------------------------------------------------


class ArgumentMappingField(forms.CharField):
    """An alias's argument mapping as lines of `old = new` (`old =` leaves the argument out)."""

    widget = forms.Textarea(attrs={"rows": 3, "cols": 40})

    def prepare_value(self, value: Any) -> Any:
        if isinstance(value, dict):
            return "\n".join(f"{old} = {new or ''}".rstrip() for old, new in value.items())
        return value

    def to_python(self, value: Any) -> dict[str, str | None]:  # type: ignore[override]
        text = super().to_python(value) or ""
        mapping: dict[str, str | None] = {}
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            old, equals, new = line.partition("=")
            if not equals or not old.strip():
                raise ValidationError(f"Line {number}: write old_name = new_name (or old_name = to leave it out).")
            mapping[old.strip()] = new.strip() or None
        return mapping


class ToolAliasForm(forms.ModelForm):
    tool = LedgerNameChoiceField(
        queryset=ToolName.objects.none(),
        to_field_name="name",
        help_text="The old name. Not listed; its calls reach the target and answer as it does, with a notice.",
    )
    target = LedgerNameChoiceField(
        queryset=ToolName.objects.none(),
        to_field_name="name",
        help_text="The live tool that answers calls to the old name.",
    )
    arguments = ArgumentMappingField(
        required=False,
        help_text="One per line: old_name = new_name, for each argument the old name took under another name; "
        "old_name = (nothing) leaves it out. Other arguments pass as sent.",
    )
    confirm_redirect = forms.BooleanField(
        required=False,
        label="Send its calls to the target now",
        help_text="Needed when the old name is live in this release: its own code stops answering.",
    )

    class Meta:
        model = ToolAlias
        fields = ("tool", "target", "arguments", "retire_on", "reason", "since")
        help_texts = {"retire_on": RETIRE_ON_HELP}

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        statuses = selectors.ledger_statuses()
        if "tool" in self.fields:
            field = self.fields["tool"]
            field.queryset = ToolName.objects.filter(  # type: ignore[attr-defined]
                name__in=[name for name, status in statuses.items() if status in ("live", "deprecated", "dropped")]
            )
            field.statuses = statuses  # type: ignore[attr-defined]
        offered = set(selectors.live_tools())
        if self.instance.pk:  # a stored target no longer live stays visible, labelled, so saving it says why
            offered.add(self.instance.target_id)
        target = self.fields["target"]
        target.queryset = ToolName.objects.filter(name__in=offered)  # type: ignore[attr-defined]
        target.statuses = statuses  # type: ignore[attr-defined]

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if self.errors:
            return data
        existing = bool(self.instance.pk)
        name = self.instance.name if existing else getattr(data.get("tool"), "name", None)
        if name is None:
            return data
        stored_date = ToolAlias.objects.get(pk=self.instance.pk).retire_on if existing else None
        retire_on = data.get("retire_on")
        target = getattr(data.get("target"), "name", "")
        if refused(
            self,
            lambda: services.alias_validate(
                name=name,
                target=target,
                arguments=data.get("arguments") or {},
                retire_on=None if existing and retire_on == stored_date else retire_on,
                existing=existing,
            ),
        ):
            return data
        live = selectors.ledger_statuses().get(name) in ("live", "deprecated")
        if not existing and live and not data.get("confirm_redirect"):
            self.add_error(
                "confirm_redirect",
                f"{name} is live in this release: its calls will reach {target} instead of its own "
                f"code. {in_force_text()} Tick the box to confirm.",
            )
        return data


@admin.register(ToolAlias)
class ToolAliasAdmin(LifecycleAdmin):
    form = ToolAliasForm
    list_display = ("tool", "target", "mapping", "retire_on", "since", "reason")
    search_fields = ("tool__name", "target__name", "reason")
    undo_label = "End the alias"

    @admin.display(description="arguments renamed")
    def mapping(self, obj: ToolAlias) -> str:
        return ", ".join(f"{old} → {new or '(left out)'}" for old, new in obj.arguments.items()) or "—"

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> tuple[str, ...]:
        return ("tool", "links") if obj is not None else ()

    def get_fieldsets(self, request: HttpRequest, obj: Any = None) -> Any:
        fields = ("tool", "target", "arguments", "retire_on", "reason", "since")
        if obj is None:
            return [
                (None, {"fields": fields, "description": in_force_text()}),
                ("Live names", {"fields": ("confirm_redirect",)}),
            ]
        return [
            (None, {"fields": fields, "description": in_force_text()}),
            ("History and callers", {"fields": ("links",)}),
        ]

    def save_model(self, request: HttpRequest, obj: ToolAlias, form: Any, change: bool) -> None:
        data = form.cleaned_data
        fields = {
            "target": data["target"].name,
            "arguments": data["arguments"],
            "reason": data["reason"],
            "retire_on": data["retire_on"],
            "by": request.user,
            "via": VIA_ADMIN,
        }
        if change:
            services.alias_update(alias=obj, since=data["since"], **fields)
            return
        saved = services.alias_create(name=data["tool"].name, since=data["since"], **fields)
        obj.pk = saved.pk
        self.message_user(
            request, f"{saved.name} is an alias of {saved.target_id}. {in_force_text()}", messages.SUCCESS
        )

    def undo(self, obj: ToolAlias, *, reason: str, by: Any) -> None:
        services.alias_remove(alias=obj, reason=reason, by=by, via=VIA_ADMIN)

    def undo_text(self, obj: ToolAlias) -> str:
        if obj.name in selectors.registered_tools():
            return f"Calls to {obj.name} reach its own code again."
        return (
            f"Calls to {obj.name} stop reaching {obj.target_id}: no tool answers the name, which the checks report "
            "(tools.E002) until it is retired. To refuse its callers with a pointer to the replacement, retire it "
            "instead."
        )


# --- Retired tools ---------------------------------------------------------------------------


class RetiredToolForm(forms.ModelForm):
    """Retire a ledger name. The pickers offer what the rules allow (names not yet retired; live
    tools as replacements, in order); retiring a live name asks for `confirm_kill_switch` first."""

    tool = LedgerNameChoiceField(
        queryset=ToolName.objects.filter(retirement__isnull=True),
        to_field_name="name",
        help_text="A ledger name that is not retired yet, with its status: live or deprecated (listed and callable "
        "now), an alias, or dropped (no longer registered).",
    )
    replaced_by = ReplacementsField()
    confirm_kill_switch = forms.BooleanField(
        required=False,
        label="Withdraw it from every replica now",
        help_text="Needed when the name is live: retiring it is the kill switch.",
    )

    class Meta:
        model = RetiredTool
        fields = ("tool", "replaced_by", "since", "release", "message")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if "tool" in self.fields:
            self.fields["tool"].statuses = selectors.ledger_statuses()  # type: ignore[attr-defined]
        offer_replacements(
            self.fields["replaced_by"],  # type: ignore[arg-type]
            but=self.instance_name,
            stored=self.initial.get("replaced_by") or [],
        )

    @property
    def instance_name(self) -> str | None:
        return self.instance.name if self.instance.pk else None

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        name = self.instance_name or getattr(data.get("tool"), "name", None)
        if name is None or self.errors:
            return data
        if refused(self, lambda: services.retired_tool_validate(name=name, replaced_by=data.get("replaced_by", []))):
            return data
        live = selectors.ledger_statuses().get(name) in ("live", "deprecated")
        if self.instance_name is None and live and not data.get("confirm_kill_switch"):
            self.add_error(
                "confirm_kill_switch",
                f"{name} is live in this release. {kill_switch_text()} Tick the box to confirm.",
            )
        return data


@admin.register(RetiredTool)
class RetiredToolAdmin(LifecycleAdmin):
    form = RetiredToolForm
    list_display = ("tool", "replacements", "since", "release", "message")
    search_fields = ("tool__name",)
    undo_label = "Un-retire"

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> tuple[str, ...]:
        return ("tool", "links") if obj is not None else ()

    def get_fieldsets(self, request: HttpRequest, obj: Any = None) -> Any:
        """Add: the answer, then the kill switch and its confirmation. Change: the answer under
        the kill switch's bound, then the links to the history and the old callers."""
        answer = ("tool", "replaced_by", "since", "release", "message")
        if obj is None:
            return [
                (None, {"fields": answer}),
                ("Kill switch", {"fields": ("confirm_kill_switch",), "description": kill_switch_text()}),
            ]
        return [
            (None, {"fields": answer, "description": kill_switch_text()}),
            ("History and callers", {"fields": ("links",)}),
        ]

    def get_changeform_initial_data(self, request: HttpRequest) -> dict[str, Any]:
        """`?tool=<name>` (the deprecation's "Retire it now"): its replacements and reason."""
        initial = super().get_changeform_initial_data(request)
        name = request.GET.get("tool")
        scheduled: Model | None = None
        if name:
            scheduled = DeprecatedTool.objects.filter(tool__name=name).first()
            scheduled = scheduled or ToolAlias.objects.filter(tool__name=name).first()
        if isinstance(scheduled, DeprecatedTool):
            initial |= {"replaced_by": list(scheduled.replaced_by), "message": scheduled.reason}
        elif isinstance(scheduled, ToolAlias):
            initial |= {"replaced_by": [scheduled.target_id], "message": scheduled.reason}
        return initial

    def save_model(self, request: HttpRequest, obj: RetiredTool, form: Any, change: bool) -> None:
        data = form.cleaned_data
        fields = {
            "replaced_by": data["replaced_by"],
            "since": data["since"],
            "release": data["release"],
            "message": data["message"],
            "by": request.user,
            "via": VIA_ADMIN,
        }
        if change:
            services.retired_tool_update(retired=obj, **fields)
            return
        live = selectors.ledger_statuses().get(data["tool"].name) in ("live", "deprecated")
        saved = services.retired_tool_create(name=data["tool"].name, **fields)
        obj.pk = saved.pk
        if live:
            self.message_user(
                request,
                f"Kill switch: {saved.name} is live in this release. Every replica stops listing it and "
                f"answers calls to it as retired within {settings.GOVERNANCE_REFRESH_SECONDS:g} seconds plus one "
                "request. Remove it from the code before the next deploy (system check tools.E003).",
                messages.WARNING,
            )

    def undo(self, obj: RetiredTool, *, reason: str, by: Any) -> None:
        services.retired_tool_unretire(retired=obj, reason=reason, by=by, via=VIA_ADMIN)

    def undo_text(self, obj: RetiredTool) -> str:
        if obj.name in selectors.registered_tools():
            return f"{obj.name} is registered in this release: it is listed and answered again. {in_force_text()}"
        return (
            f"{obj.name} is not registered in this release: no tool answers it once un-retired, which the checks "
            "report (tools.E002). Make it an alias of the tool that replaced it if its callers should still be "
            "answered."
        )


# --- Contract changes ------------------------------------------------------------------------


class ContractChangeForm(forms.ModelForm):
    class Meta:
        model = ContractChange
        fields = ("tool", "input", "kind", "new_input", "was", "now", "since", "instead")

    def clean(self) -> dict[str, Any]:
        super().clean()
        data = self.cleaned_data
        if self.instance.pk:
            tool, input_name = self.instance.tool_id, self.instance.input
        else:
            tool, input_name = getattr(data.get("tool"), "name", None), data.get("input")
        if tool is not None and input_name and data.get("kind") and not self.errors:
            try:
                services.contract_change_validate(tool=tool, input_name=input_name, **change_fields(data))
            except ValidationError as error:
                self.add_error(None, error)
        return data


def change_fields(data: dict[str, Any]) -> dict[str, Any]:
    """The kind and its own fields, from a contract change form's cleaned data."""
    return {
        "kind": ChangeKind(data["kind"]),
        "new_input": data.get("new_input") or "",
        "was": data.get("was"),
        "now": data.get("now"),
    }


@admin.register(ContractChange)
class ContractChangeAdmin(admin.ModelAdmin):
    form = ContractChangeForm
    list_display = ("tool", "change", "since", "instead")
    list_filter = ("kind",)
    search_fields = ("tool__name", "input", "new_input", "instead")
    change_list_template = "admin/tools/governance_change_list.html"

    @property
    def media(self) -> forms.Media:
        return super().media + MEDIA

    @admin.display(description="input and change", ordering="input")
    def change(self, obj: ContractChange) -> str:
        kind = dict(ContractChange._meta.get_field("kind").flatchoices).get(obj.kind, obj.kind)
        if obj.new_input:
            return f"{obj.input} → {obj.new_input} ({kind})"
        return f"{obj.input} ({kind})"

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> tuple[str, ...]:
        return ("tool", "input") if obj is not None else ()

    def save_model(self, request: HttpRequest, obj: ContractChange, form: Any, change: bool) -> None:
        data = form.cleaned_data
        fields = {
            **change_fields(data),
            "since": data["since"],
            "instead": data["instead"],
            "by": request.user,
            "via": VIA_ADMIN,
        }
        if change:
            services.contract_change_update(change=obj, **fields)
            return
        saved = services.contract_change_record(tool=data["tool"].name, input_name=data["input"], **fields)
        obj.pk = saved.pk

    def delete_model(self, request: HttpRequest, obj: ContractChange) -> None:
        services.contract_change_delete(change=obj, by=request.user, via=VIA_ADMIN)

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[ContractChange]) -> None:
        for change in queryset:
            services.contract_change_delete(change=change, by=request.user, via=VIA_ADMIN)


# --- Governance history ----------------------------------------------------------------------


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


# --- Client surfaces ------------------------------------------------------------------------


class ClientSurfaceForm(forms.ModelForm):
    hidden_tools = forms.MultipleChoiceField(
        required=False,
        widget=forms.CheckboxSelectMultiple,
        help_text="Tools not listed to these clients; calls to them are still answered.",
    )

    class Meta:
        model = ClientSurface
        fields = ("pattern", "position", "widgets", "hidden_tools", "note")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["hidden_tools"].choices = [(name, name) for name in selectors.registered_tools()]  # type: ignore[attr-defined]

    def clean_hidden_tools(self) -> list[str]:
        return list(dict.fromkeys(self.cleaned_data["hidden_tools"]))


@admin.register(ClientSurface)
class ClientSurfaceAdmin(admin.ModelAdmin):
    """Per client name pattern: widgets offered or not, and tools hidden from the listing. Every
    replica applies a saved rule within GOVERNANCE_REFRESH_SECONDS (governance.client_surface)."""

    form = ClientSurfaceForm
    list_display = ("pattern", "position", "widgets", "hidden", "note")
    list_editable = ("position",)
    search_fields = ("pattern", "note")

    @admin.display(description="hidden tools")
    def hidden(self, obj: ClientSurface) -> str:
        return ", ".join(obj.hidden_tools) or "—"
