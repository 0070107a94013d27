"""Retired tools' admin: retiring a live tool is the kill switch (every replica stops listing it
and answers calls to it as retired within GOVERNANCE_REFRESH_SECONDS plus one request; the form
asks for a confirmation); un-retiring is its own page that asks why (no generic delete).
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.conf import settings
from django.contrib import admin, messages
from django.db.models import Model
from django.http import HttpRequest

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
from governance.admin.shared import VIA_ADMIN, in_force_text
from governance.models import DeprecatedTool, RetiredTool, ToolAlias, ToolName


def kill_switch_text() -> str:
    """What retiring a live tool does, with this deployment's time bound."""
    return (
        "Retiring a live tool is the kill switch: every replica stops listing it and answers calls to it "
        f"as retired within {settings.GOVERNANCE_REFRESH_SECONDS:g} s plus one request "
        "(GOVERNANCE_REFRESH_SECONDS), without a restart or a deploy. Un-retiring it brings it back "
        "in the same time."
    )


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
        help_text="Asked because the name is live in this release: retiring it is the kill switch.",
    )

    class Meta:
        model = RetiredTool
        fields = ("tool", "replaced_by", "since", "release", "message")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        statuses = selectors.ledger_statuses()
        if "tool" in self.fields:
            self.fields["tool"].statuses = statuses  # type: ignore[attr-defined]
            self.fields["tool"].widget.attrs["data-statuses"] = statuses_attr(statuses)
        if "confirm_kill_switch" in self.fields:
            self.fields["confirm_kill_switch"].widget.attrs["data-confirm-for"] = "live deprecated"
        offer_replacements(
            self.fields["replaced_by"],  # type: ignore[arg-type]
            but=self.instance_name or str(self.initial.get("tool") or "") or None,
            stored=as_names(self.initial.get("replaced_by")),
        )

    @property
    def instance_name(self) -> str | None:
        return self.instance.name if self.instance.pk else None

    def clean(self) -> dict[str, Any]:
        """Every broken rule at once: the fields' own, the services' and the confirmation."""
        data = super().clean() or {}
        name = self.instance_name or getattr(data.get("tool"), "name", None)
        if name is None:
            return data
        kept = RetiredTool.objects.get(pk=self.instance.pk).replaced_by if self.instance.pk else []
        refused(
            self,
            lambda: services.retired_tool_validate(name=name, replaced_by=data.get("replaced_by", []), kept=kept),
        )
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
        if obj is None:  # the kill switch's confirmation is asked up front, beside the name it is about
            fields = ("tool", "confirm_kill_switch", "replaced_by", "since", "release", "message")
            return [(None, {"fields": fields, "description": kill_switch_text()})]
        return [
            (None, {"fields": answer, "description": kill_switch_text()}),
            ("History and callers", {"fields": ("links",)}),
        ]

    def get_changeform_initial_data(self, request: HttpRequest) -> dict[str, Any]:
        """`?tool=<name>` (the deprecation's "Retire it now"): its replacements and reason."""
        initial = super().get_changeform_initial_data(request)
        if "replaced_by" in initial:
            initial["replaced_by"] = names_from_link(request.GET.getlist("replaced_by"))
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
