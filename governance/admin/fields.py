"""The pickers the lifecycle forms share, and how a services' refusal reaches a form.

Pickers offer what a rule allows and label every ledger name with its status (live,
deprecated, alias, retired, dropped); the services still judge what is saved, and `refused`
puts their reason on the field at fault.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from django import forms
from django.core.exceptions import ValidationError

from governance import selectors
from tools.definition import TOOL_NAME


def status_label(name: str, statuses: dict[str, selectors.Status] | None = None) -> str:
    return f"{name} ({(statuses or selectors.ledger_statuses()).get(name, 'not in the ledger')})"


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
