"""Aliases' admin: an old name whose calls reach a live tool, with its arguments renamed, the
reason and the retire-on date; redirecting a live name asks for a confirmation; ended on a page
that asks why.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.http import HttpRequest

from governance import rules, selectors, services
from governance.admin.fields import LedgerNameChoiceField, callable_tools, refused, statuses_attr
from governance.admin.lifecycle import LifecycleAdmin
from governance.admin.mapping import ArgumentMappingField, ArgumentMappingWidget, tool_inputs
from governance.admin.shared import RETIRE_ON_HELP, VIA_ADMIN, in_force_text
from governance.models import ToolAlias, ToolName

LIVE = ("live", "deprecated")
"""The statuses whose own code answers calls: aliasing such a name asks for `confirm_redirect`."""


def redirect_text(name: str = "the old name", target: str = "the target") -> str:
    return f"{name} is live in this release: its calls will reach {target} instead of its own code. {in_force_text()}"


class ToolAliasForm(forms.ModelForm):
    """Make a name an alias: a ledger name (`tool`), or a name no release listed (`name`: one
    agents call that does not exist), its live target, the argument mapping as pairs, and, for a
    live name, the redirect confirmation, shown with the form."""

    tool = LedgerNameChoiceField(
        queryset=ToolName.objects.none(),
        to_field_name="name",
        required=False,
        help_text="The old name. Not listed; its calls reach the target and answer as it does, with a notice.",
    )
    name = forms.CharField(
        required=False,
        max_length=128,
        label="Or a name no release listed",
        help_text="A name agents call that does not exist (the analytics' unknown names): saving adds it to the "
        "tool name ledger and makes it an alias.",
    )
    target = LedgerNameChoiceField(
        queryset=ToolName.objects.none(),
        to_field_name="name",
        help_text="The live tool that answers calls to the old name.",
    )
    arguments = ArgumentMappingField(
        required=False,
        help_text="Pairs of inputs: the old name's input, and the target's input it becomes (or leave it out). "
        "Inputs not named pass as sent. As text: one old_name = new_name a line.",
    )
    confirm_redirect = forms.BooleanField(
        required=False,
        label="Send its calls to the target now",
        help_text="Asked because the old name is live in this release: its own code stops answering.",
    )

    class Meta:
        model = ToolAlias
        fields = ("tool", "target", "arguments", "retire_on", "reason", "since")
        help_texts = {"retire_on": RETIRE_ON_HELP}

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.statuses = statuses = selectors.ledger_statuses()
        if "tool" in self.fields:
            field = self.fields["tool"]
            field.queryset = ToolName.objects.filter(  # type: ignore[attr-defined]
                name__in=[name for name, status in statuses.items() if status in ("live", "deprecated", "dropped")]
            )
            field.statuses = statuses  # type: ignore[attr-defined]
            field.widget.attrs["data-statuses"] = statuses_attr(statuses)
        if "confirm_redirect" in self.fields:
            self.fields["confirm_redirect"].widget.attrs.update({"data-confirm-for": " ".join(LIVE)})
        old = self.instance.name if self.instance.pk else str(self.initial.get("tool") or "")
        offered = set(callable_tools(old or None))
        if self.instance.pk:  # a stored target no longer live stays visible, labelled, so saving it says why
            offered.add(self.instance.target_id)
        target = self.fields["target"]
        target.queryset = ToolName.objects.filter(name__in=offered)  # type: ignore[attr-defined]
        target.statuses = statuses  # type: ignore[attr-defined]
        mapping = self.fields["arguments"].widget
        assert isinstance(mapping, ArgumentMappingWidget)
        mapping.inputs, mapping.old_name = tool_inputs(), self.instance.name if self.instance.pk else ""

    def old_name(self, data: dict[str, Any]) -> tuple[str | None, bool]:
        """The old name and whether it is one no release listed."""
        if self.instance.pk:
            return self.instance.name, False
        picked, typed = getattr(data.get("tool"), "name", None), (data.get("name") or "").strip()
        if picked and typed:
            self.add_error("name", f"Pick {picked} or type {typed}, not both.")
            return None, False
        if picked:
            return picked, False
        if not typed:
            if "tool" not in self.errors:
                self.add_error("tool", "Pick the old name, or type a name no release listed below.")
            return None, False
        return typed, typed not in self.statuses

    def clean(self) -> dict[str, Any]:
        """Every broken rule at once: the form's own, the services' and the confirmation."""
        data = super().clean() or {}
        name, unlisted = self.old_name(data)
        if name is None:
            return data
        existing = bool(self.instance.pk)
        stored_date = ToolAlias.objects.get(pk=self.instance.pk).retire_on if existing else None
        retire_on = data.get("retire_on")
        target = getattr(data.get("target"), "name", "")
        if target or "target" not in self.errors:
            refused(
                self,
                lambda: services.alias_validate(
                    name=name,
                    target=target,
                    arguments=data.get("arguments") or {},
                    retire_on=None if existing and retire_on == stored_date else retire_on,
                    existing=existing,
                    unlisted=unlisted,
                ),
            )
        if not existing and self.statuses.get(name) in LIVE and not data.get("confirm_redirect"):
            self.add_error(
                "confirm_redirect", f"{redirect_text(name, target or 'the target')} Tick the box to confirm."
            )
        data["old_name"], data["unlisted"] = name, unlisted
        return data


@admin.register(ToolAlias)
class ToolAliasAdmin(LifecycleAdmin):
    form = ToolAliasForm
    list_display = ("tool", "target", "mapping", "retire_on", "since", "reason")
    search_fields = ("tool__name", "target__name", "reason")
    undo_label = "End the alias"

    @admin.display(description="arguments renamed")
    def mapping(self, obj: ToolAlias) -> str:
        if rules.mapping_problems(obj.arguments):  # written around the services: shown, never a crash
            return "not valid, left out of the rules (check tools.E120)"
        return ", ".join(f"{old} → {new or '(left out)'}" for old, new in obj.arguments.items()) or "—"

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> tuple[str, ...]:
        return ("tool", "links") if obj is not None else ()

    def get_fieldsets(self, request: HttpRequest, obj: Any = None) -> Any:
        fields: tuple[str, ...] = ("tool", "target", "arguments", "retire_on", "reason", "since")
        if obj is None:  # the confirmation is asked up front, beside the name it is about
            fields = ("tool", "name", "confirm_redirect", "target", "arguments", "retire_on", "reason", "since")
            return [(None, {"fields": fields, "description": in_force_text()})]
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
        saved = services.alias_create(name=data["old_name"], since=data["since"], unlisted=data["unlisted"], **fields)
        obj.pk, obj.tool_id = saved.pk, saved.tool_id
        self.message_user(
            request, f"Saved: {saved.name} is an alias of {saved.target_id}. {in_force_text()}", messages.SUCCESS
        )

    def get_changeform_initial_data(self, request: HttpRequest) -> dict[str, Any]:
        """Pre-filled from the evidence pages: `?name=<old name>&target=<tool>` (or `?tool=`); a
        name the ledger has is picked, any other is typed into `name`. `?arguments=old=new,...`."""
        initial = super().get_changeform_initial_data(request)
        name = (request.GET.get("name") or request.GET.get("tool") or "").strip()[:128]
        initial.pop("name", None)
        initial.pop("tool", None)
        if name:
            initial["tool" if ToolName.objects.filter(name=name).exists() else "name"] = name
        if arguments := request.GET.get("arguments"):
            initial["arguments"] = "\n".join(pair.strip() for pair in arguments.split(",") if pair.strip())
        return initial

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
