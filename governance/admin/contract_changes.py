"""Contract changes' admin: one input of a live tool that broke, judged, saved and deleted
through the services (each delete recorded, also from the list's bulk action).
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin
from django.core.exceptions import ValidationError
from django.db.models import QuerySet
from django.http import HttpRequest

from governance import services
from governance.admin.shared import MEDIA, VIA_ADMIN
from governance.models import ContractChange
from governance.surface import ChangeKind


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
