"""Client surfaces' admin: per client name pattern, widgets offered or not and tools hidden
from the listing (governance.client_surface applies them).
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin

from governance import selectors
from governance.models import ClientSurface


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
