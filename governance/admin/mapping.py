"""An alias's argument mapping on its form: pairs of inputs (old input -> new input) picked from
both tools' input schemas and checked as you type (`tools/governance.js`), posted as lines of
`old = new` (or the stored JSON object); the server gives the same verdicts (`mapping_problems`
and the services' `rules.alias_problems`)."""

from __future__ import annotations

import json
from typing import Any

from django import forms
from django.core.exceptions import ValidationError

from governance import selectors


def tool_inputs() -> dict[str, list[str]]:
    """Every registered tool's input names, from its input schema, for the page's script."""
    return {
        name: sorted(tool.input_schema.get("properties", {}))
        for name, tool in sorted(selectors.registered_tools().items())
    }


class ArgumentMappingWidget(forms.Textarea):
    """The mapping as text (works without script), enhanced by `tools/governance.js` into rows
    of two pickers with a verdict beside each: the old name's inputs (typed freely when no
    release registers it) and the target's inputs or "leave it out"."""

    template_name = "admin/tools/widgets/argument_mapping.html"

    def __init__(self, attrs: dict[str, Any] | None = None) -> None:
        super().__init__({"rows": 3, "cols": 40, **(attrs or {})})
        self.inputs: dict[str, list[str]] = {}
        self.old_name = ""

    def get_context(self, name: str, value: Any, attrs: dict[str, Any] | None) -> dict[str, Any]:
        context = super().get_context(name, value, attrs)
        context["widget"]["inputs_json"] = json.dumps(self.inputs, separators=(",", ":"))
        context["widget"]["old_name"] = self.old_name
        return context


class ArgumentMappingField(forms.CharField):
    """An alias's argument mapping: lines of `old = new` (`old =` leaves the argument out), or
    the stored JSON object (`{"old": "new", "gone": null}`). Every broken line is named at once."""

    widget = ArgumentMappingWidget

    def prepare_value(self, value: Any) -> Any:
        if isinstance(value, dict):
            return "\n".join(f"{old} = {new or ''}".rstrip() for old, new in value.items())
        return value

    def to_python(self, value: Any) -> dict[str, str | None]:  # type: ignore[override]
        text = (super().to_python(value) or "").strip()
        if text.startswith("{"):
            return _from_json(text)
        mapping: dict[str, str | None] = {}
        problems = []
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            old, equals, new = line.partition("=")
            old, new = old.strip(), new.strip()
            if not equals or not old:
                problems.append(f"Line {number}: write old_name = new_name (or old_name = to leave it out).")
            elif old in mapping:
                problems.append(f"{old} is mapped twice.")
            else:
                mapping[old] = new or None
        if problems:
            raise ValidationError(problems)
        return mapping


def _from_json(text: str) -> dict[str, str | None]:
    try:
        data = json.loads(text)
    except ValueError:
        raise ValidationError('Write one pair a line (old_name = new_name), or a JSON object {"old": "new"}.') from None
    if not isinstance(data, dict) or not all(
        isinstance(old, str) and (new is None or isinstance(new, str)) for old, new in data.items()
    ):
        raise ValidationError('A JSON object of argument names: {"old": "new"}, or {"old": null} to leave it out.')
    return {old: new or None for old, new in data.items()}
