"""The admin for product staff: retire tools, record contract changes, read the ledger.

Every write goes through `tools.governance.services` (the same rules as code and the system
checks); forms show a broken rule on the field at fault. The admin's history of each row is the
audit trail. Retiring a live tool is the kill switch: every replica stops listing it and
answers calls to it as retired within GOVERNANCE_REFRESH_SECONDS.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.conf import settings
from django.contrib import admin, messages
from django.core.exceptions import ValidationError
from django.db.models import QuerySet
from django.http import HttpRequest

from tools.governance import selectors, services
from tools.governance.surface import ChangeKind
from tools.models import ContractChange, RetiredTool, ToolName


class ToolNamesField(forms.CharField):
    """A list of tool names, typed as comma- or space-separated text."""

    def prepare_value(self, value: Any) -> Any:
        return ", ".join(value) if isinstance(value, list) else value

    # A CharField (its parsing and null-character check) whose value is the list the text names.
    def to_python(self, value: Any) -> list[str]:  # type: ignore[override]
        text = super().to_python(value) or ""
        return [name for name in text.replace(",", " ").split() if name]


@admin.register(ToolName)
class ToolNameAdmin(admin.ModelAdmin):
    """The ledger, read-only: names are added by `migrate` and the committed fixture."""

    list_display = ("name", "status", "first_seen", "first_release", "note")
    list_select_related = ("retirement",)
    search_fields = ("name",)

    @admin.display(description="status")
    def status(self, obj: ToolName) -> str:
        if hasattr(obj, "retirement"):
            return "retired"
        return "live" if obj.name in selectors.registered_tools() else "not registered"

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


class RetiredToolForm(forms.ModelForm):
    replaced_by = ToolNamesField(
        required=False, help_text="The live tools a caller should use instead, e.g. tomtom-routing."
    )

    class Meta:
        model = RetiredTool
        fields = ("tool", "replaced_by", "since", "release", "message")

    def clean(self) -> dict[str, Any]:
        super().clean()
        data = self.cleaned_data
        name = self.instance.name if self.instance.pk else getattr(data.get("tool"), "name", None)
        if name is not None and not self.errors:
            try:
                services.retired_tool_validate(name=name, replaced_by=data.get("replaced_by", []))
            except ValidationError as error:
                self.add_error(None, error)
        return data


@admin.register(RetiredTool)
class RetiredToolAdmin(admin.ModelAdmin):
    form = RetiredToolForm
    list_display = ("tool", "replacements", "since", "release")
    search_fields = ("tool__name",)

    @admin.display(description="replaced by")
    def replacements(self, obj: RetiredTool) -> str:
        return ", ".join(obj.replaced_by) or "—"

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> tuple[str, ...]:
        return ("tool",) if obj is not None else ()

    def save_model(self, request: HttpRequest, obj: RetiredTool, form: Any, change: bool) -> None:
        data = form.cleaned_data
        fields = {
            "replaced_by": data["replaced_by"],
            "since": data["since"],
            "release": data["release"],
            "message": data["message"],
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
                f"answers calls to it as retired within {settings.GOVERNANCE_REFRESH_SECONDS} seconds. "
                "Remove it from the code before the next deploy (system check tools.E003).",
                messages.WARNING,
            )

    def delete_model(self, request: HttpRequest, obj: RetiredTool) -> None:
        services.retired_tool_delete(retired=obj)

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[RetiredTool]) -> None:
        for retired in queryset:
            services.retired_tool_delete(retired=retired)


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
        fields = {**change_fields(data), "since": data["since"], "instead": data["instead"]}
        if change:
            services.contract_change_update(change=obj, **fields)
            return
        saved = services.contract_change_record(tool=data["tool"].name, input_name=data["input"], **fields)
        obj.pk = saved.pk

    def delete_model(self, request: HttpRequest, obj: ContractChange) -> None:
        services.contract_change_delete(change=obj)

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[ContractChange]) -> None:
        for change in queryset:
            services.contract_change_delete(change=change)
