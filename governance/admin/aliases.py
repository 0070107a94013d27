"""Aliases' admin: an old name whose calls reach a live tool, with its arguments renamed, the
reason and the retire-on date; redirecting a live name asks for a confirmation; ended on a page
that asks why.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import ValidationError
from django.http import HttpRequest

from governance import selectors, services
from governance.admin.fields import LedgerNameChoiceField, refused
from governance.admin.lifecycle import LifecycleAdmin
from governance.admin.shared import RETIRE_ON_HELP, VIA_ADMIN, in_force_text
from governance.models import ToolAlias, ToolName


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
