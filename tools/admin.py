"""The admin for product staff: retire tools, record contract changes, read the ledger.

Every write goes through `tools.governance.services` (the same rules as code and the system
checks), with the staff member as the actor, so each one lands in the governance history;
forms show a broken rule on the field at fault. Pickers offer what a rule allows and label every
ledger name with its status (live, retired, dropped); the services still judge what is saved.

Retiring a live tool is the kill switch: every replica stops listing it and answers calls to it
as retired within GOVERNANCE_REFRESH_SECONDS plus one request. The retire form says so before
saving and asks for a confirmation when the name is live.

Each ledger name has a governance history page (`admin:tools_toolname_governance`), linked from
its ledger row and its retirement, beside a link to the analytics' old callers of that tool.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from django import forms
from django.conf import settings
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied, ValidationError
from django.core.paginator import Paginator
from django.db.models import QuerySet
from django.http import Http404, HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.urls import NoReverseMatch, URLPattern, path, reverse
from django.utils.html import format_html, format_html_join

from tools.definition import TOOL_NAME
from tools.governance import selectors, services
from tools.governance.surface import ChangeKind
from tools.models import ClientSurface, ContractChange, GovernanceEvent, RetiredTool, ToolName

VIA_ADMIN = "admin"
HISTORY_PER_PAGE = 100


def kill_switch_text() -> str:
    """What retiring a live tool does, with this deployment's time bound."""
    return (
        "Retiring a live tool is the kill switch: every replica stops listing it and answers calls to it "
        f"as retired within {settings.GOVERNANCE_REFRESH_SECONDS:g} s plus one request "
        "(GOVERNANCE_REFRESH_SECONDS), without a restart or a deploy. Deleting the retirement brings it back "
        "in the same time."
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


# --- The ledger ------------------------------------------------------------------------------


@admin.register(ToolName)
class ToolNameAdmin(admin.ModelAdmin):
    """The ledger, read-only: names are added by `migrate` and the committed fixture. Each row
    links to its governance history (`governance_view`)."""

    list_display = ("name", "status", "first_seen", "first_release", "note", "history")
    list_select_related = ("retirement",)
    search_fields = ("name",)
    readonly_fields = ("links",)

    @admin.display(description="status")
    def status(self, obj: ToolName) -> str:
        if hasattr(obj, "retirement"):
            return "retired"
        return "live" if obj.name in selectors.registered_tools() else "dropped"

    @admin.display(description="history")
    def history(self, obj: ToolName) -> str:
        return format_html('<a href="{}">governance history</a>', governance_history_url(obj.name))

    @admin.display(description="history and callers")
    def links(self, obj: ToolName) -> str:
        return governance_links(obj.name)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def get_urls(self) -> list[URLPattern]:
        own = [
            path(
                "governance/<str:name>/",
                self.admin_site.admin_view(self.governance_view),
                name="tools_toolname_governance",
            )
        ]
        return own + super().get_urls()  # before the admin's catch-all `<path:object_id>/`

    def governance_view(self, request: HttpRequest, name: str) -> HttpResponse:
        """Every governance change to one ledger name, oldest first (HISTORY_PER_PAGE a page):
        when, who, what and the message. Needs the view permission on governance events."""
        if not request.user.has_perm("tools.view_governanceevent"):
            raise PermissionDenied
        entry = ToolName.objects.select_related("retirement").filter(name=name).first()
        events = selectors.tool_history(name)
        if entry is None and not events.exists():
            raise Http404(f"{name} is not in the tool name ledger.")
        retirement = getattr(entry, "retirement", None)
        context = {
            **self.admin_site.each_context(request),
            "title": f"Governance history: {name}",
            "subtitle": None,
            "opts": self.opts,
            "name": name,
            "status": selectors.ledger_statuses().get(name, "dropped"),
            "page": Paginator(events, HISTORY_PER_PAGE).get_page(request.GET.get("page")),
            "ledger_url": reverse("admin:tools_toolname_change", args=[entry.pk]) if entry else None,
            "retirement_url": reverse("admin:tools_retiredtool_change", args=[retirement.pk]) if retirement else None,
            "old_callers_url": old_callers_url(name),
        }
        return TemplateResponse(request, "admin/tools/governance_history.html", context)


# --- Retired tools ---------------------------------------------------------------------------


class LedgerNameChoiceField(forms.ModelChoiceField):
    """A ledger name, labelled with its status (`tomtom-geocode (live)`)."""

    statuses: dict[str, selectors.Status] = {}

    def label_from_instance(self, obj: Any) -> str:
        return f"{obj.name} ({self.statuses.get(obj.name, 'dropped')})"


class ReplacementsField(forms.MultipleChoiceField):
    """The tools a caller should use instead. It offers the live tools; whether a name may
    replace the retired one is the services' rule (`retired_tool_validate`), so this field only
    checks that each value is a tool name, and the form shows the services' reason."""

    widget = forms.CheckboxSelectMultiple

    def valid_value(self, value: str) -> bool:
        return bool(TOOL_NAME.fullmatch(value))


class RetiredToolForm(forms.ModelForm):
    """Retire a ledger name. The pickers offer what the rules allow (names not yet retired; live
    tools as replacements); retiring a live name asks for `confirm_kill_switch` first."""

    tool = LedgerNameChoiceField(
        queryset=ToolName.objects.filter(retirement__isnull=True),
        to_field_name="name",
        help_text="A ledger name that is not retired yet, with its status: live (listed and callable now) "
        "or dropped (no longer registered).",
    )
    replaced_by = ReplacementsField(
        required=False, help_text="The live tools a caller should use instead, in the order the answer names them."
    )
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
        statuses = selectors.ledger_statuses()
        if "tool" in self.fields:
            self.fields["tool"].statuses = statuses  # type: ignore[attr-defined]
        offered = [(name, f"{name} (live)") for name in selectors.live_tools() if name != self.instance_name]
        # A stored replacement that is no longer live stays visible, labelled, so saving it
        # shows the services' reason instead of silently dropping it.
        for name in self.initial.get("replaced_by") or []:
            if name not in dict(offered):
                offered.append((name, f"{name} ({statuses.get(name, 'not in the ledger')})"))
        self.fields["replaced_by"].choices = offered  # type: ignore[attr-defined]

    @property
    def instance_name(self) -> str | None:
        return self.instance.name if self.instance.pk else None

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        name = self.instance_name or getattr(data.get("tool"), "name", None)
        if name is None or self.errors:
            return data
        try:
            services.retired_tool_validate(name=name, replaced_by=data.get("replaced_by", []))
        except ValidationError as error:
            self.add_error(None, error)
            return data
        if self.instance_name is None and name in selectors.registered_tools() and not data.get("confirm_kill_switch"):
            self.add_error(
                "confirm_kill_switch",
                f"{name} is live in this release. {kill_switch_text()} Tick the box to confirm.",
            )
        return data


@admin.register(RetiredTool)
class RetiredToolAdmin(admin.ModelAdmin):
    form = RetiredToolForm
    list_display = ("tool", "replacements", "since", "release")
    search_fields = ("tool__name",)

    @admin.display(description="replaced by")
    def replacements(self, obj: RetiredTool) -> str:
        return ", ".join(obj.replaced_by) or "—"

    @admin.display(description="history and callers")
    def links(self, obj: RetiredTool) -> str:
        return governance_links(obj.name)

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
        saved = services.retired_tool_create(name=data["tool"].name, **fields)
        obj.pk = saved.pk
        if saved.name in selectors.registered_tools():
            self.message_user(
                request,
                f"Kill switch: {saved.name} is live in this release. Every replica stops listing it and "
                f"answers calls to it as retired within {settings.GOVERNANCE_REFRESH_SECONDS:g} seconds plus one "
                "request. Remove it from the code before the next deploy (system check tools.E003).",
                messages.WARNING,
            )

    def delete_model(self, request: HttpRequest, obj: RetiredTool) -> None:
        services.retired_tool_delete(retired=obj, by=request.user, via=VIA_ADMIN)

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[RetiredTool]) -> None:
        for retired in queryset:
            services.retired_tool_delete(retired=retired, by=request.user, via=VIA_ADMIN)


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
    list_display = ("tool", "input", "kind", "new_input", "since", "instead")
    list_filter = ("kind",)
    search_fields = ("tool__name", "input")

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
    replica applies a saved rule within GOVERNANCE_REFRESH_SECONDS (tools.client_surface)."""

    form = ClientSurfaceForm
    list_display = ("pattern", "position", "widgets", "hidden", "note")
    list_editable = ("position",)
    search_fields = ("pattern", "note")

    @admin.display(description="hidden tools")
    def hidden(self, obj: ClientSurface) -> str:
        return ", ".join(obj.hidden_tools) or "—"
