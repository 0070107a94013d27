"""Deprecated tools' admin: a live tool on its way out, with its ordered replacements, the
reason and the retire-on date; what callers read; withdrawn on a page that asks why.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from django import forms
from django.contrib import admin, messages
from django.http import HttpRequest
from django.urls import reverse
from django.utils.html import format_html

from governance import selectors, services
from governance.admin.fields import (
    LedgerNameChoiceField,
    ReplacementsField,
    as_names,
    names_from_link,
    offer_replacements,
    refused,
    statuses_attr,
)
from governance.admin.lifecycle import LifecycleAdmin
from governance.admin.shared import RETIRE_ON_HELP, VIA_ADMIN, in_force_text
from governance.models import DeprecatedTool, ToolName


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
            field.widget.attrs["data-statuses"] = statuses_attr(statuses)
        name = self.instance.name if self.instance.pk else str(self.initial.get("tool") or "") or None
        stored = as_names(self.initial.get("replaced_by"))
        offer_replacements(self.fields["replaced_by"], but=name, stored=stored)  # type: ignore[arg-type]

    def clean(self) -> dict[str, Any]:
        """Every broken rule at once: the fields' own and the services' (on the fields not
        already in error)."""
        data = super().clean() or {}
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

    def get_changeform_initial_data(self, request: HttpRequest) -> dict[str, Any]:
        """Pre-filled from links (a never-called tool's "Deprecate…"): `?tool=<name>` (or
        `?name=`), `?replaced_by=<a>,<b>` in order, `?retire_on=YYYY-MM-DD`, `?reason=`."""
        initial = super().get_changeform_initial_data(request)
        if name := (request.GET.get("tool") or request.GET.get("name") or "").strip():
            initial["tool"] = name[:128]
        initial.pop("name", None)
        if "replaced_by" in request.GET:
            initial["replaced_by"] = names_from_link(request.GET.getlist("replaced_by"))
        return initial

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
        self.message_user(request, f"Saved: {saved.name} is deprecated. {in_force_text()}", messages.SUCCESS)

    def undo(self, obj: DeprecatedTool, *, reason: str, by: Any) -> None:
        services.deprecation_withdraw(deprecation=obj, reason=reason, by=by, via=VIA_ADMIN)

    def undo_text(self, obj: DeprecatedTool) -> str:
        scheduled = f" and its retirement on {obj.retire_on.isoformat()} is cancelled" if obj.retire_on else ""
        return f"{obj.name} becomes a plain live tool again: no notice in its description or results{scheduled}."
