"""The pickers the lifecycle forms share, and how a services' refusal reaches a form.

Pickers offer what a rule allows and label every ledger name with its status (live,
deprecated, alias, retired, dropped); the services still judge what is saved, and `refused`
puts their reason on the field at fault.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from typing import Any

from django import forms
from django.core.exceptions import ValidationError

from governance import selectors
from governance.models import RetiredTool, ToolAlias
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
        positions = {tool: index + 1 for index, tool in enumerate(as_names(value))}
        base = context["widget"]["attrs"].get("id") or f"id_{name}"
        rows = [
            {
                "name": f"{name}__{tool}",
                "id": f"{base}_{index}",
                "tool": tool,
                "label": label,
                "position": positions.get(tool, ""),
            }
            for index, (tool, label) in enumerate(self.choices)
        ]
        # The numbered tools first, in their order; the other live tools folded away below them,
        # so a page opens on what the tool is replaced by, not on a list of every tool.
        context["widget"]["chosen"] = sorted((row for row in rows if row["position"]), key=lambda r: r["position"])
        context["widget"]["others"] = [row for row in rows if not row["position"]]
        context["widget"]["total"] = len(rows)
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
        names = as_names(value)
        for name in names:
            if not TOOL_NAME.fullmatch(name):
                raise ValidationError(f"{name!r} is not a tool name.")
        return names


def names_from_link(values: list[str]) -> list[str]:
    """The tool names a link pre-fills (`?replaced_by=a,b` or repeated), in order: at most 50,
    each a tool name (anything else in a link is dropped, never shown)."""
    return [name for name in as_names(",".join(values)) if TOOL_NAME.fullmatch(name)][:50]


def as_names(value: Any) -> list[str]:
    """Tool names from a list, or from one comma-separated string (`?replaced_by=a,b`)."""
    if isinstance(value, str):
        return [name.strip() for name in value.split(",") if name.strip()]
    return [str(name) for name in value or []]


def callable_tools(but: str | None = None) -> list[str]:
    """The live tools a caller of `but` can call instead: not `but`, and no app-only tool (only
    widgets call those) unless `but` is app-only itself."""
    registry = selectors.registered_tools()
    app_only_ok = but in registry and registry[but].app_only
    return [name for name in selectors.live_tools() if name != but and (app_only_ok or not registry[name].app_only)]


def offer_replacements(field: ReplacementsField, *, but: str | None, stored: Sequence[str]) -> None:
    """Offer the live tools a caller can call (not `but`, not app-only: `callable_tools`): the
    stored replacements first, in their order, then the others. A stored replacement that is no
    longer live stays, labelled with its status, so saving it shows the services' reason instead
    of dropping it."""
    statuses = selectors.ledger_statuses()
    stored = as_names(stored)
    names = [*stored, *(name for name in callable_tools(but) if name not in stored)]
    field.offer([(name, status_label(name, statuses)) for name in names])


def statuses_attr(statuses: dict[str, selectors.Status]) -> str:
    """The ledger statuses as the JSON a picker carries (`data-statuses`) for the page's script."""
    return json.dumps(statuses, separators=(",", ":"))


NOT_LIVE = re.compile(r"^(?P<name>\S+) is not a live tool\.$")


def instead_of(name: str) -> str:
    """What to pick instead of `name`, which is not a live tool: its replacements, its target,
    or any live tool the form offers."""
    live = set(selectors.live_tools())
    retired = RetiredTool.objects.filter(tool__name=name).first()
    if retired is not None:
        replacements = [tool for tool in retired.replaced_by if tool in live]
        pick = " or ".join(replacements) if replacements else "one of the live tools offered"
        return f"it is retired; pick {pick} instead"
    alias = ToolAlias.objects.filter(tool__name=name).first()
    if alias is not None:
        return f"it is an old name of {alias.target_id}; pick {alias.target_id} instead"
    return "this release offers no tool of that name; pick one of the live tools offered"


def advise(problem: str) -> str:
    """A services' refusal, with what to pick instead where it names a tool that is not live."""
    if (match := NOT_LIVE.match(problem)) is not None:
        return f"{match['name']} is not a live tool: {instead_of(match['name'])}."
    return problem


def refused(form: forms.BaseForm, action: Callable[[], object]) -> bool:
    """Run a services' validation; every refusal goes on the form, at once, on its field (a
    field already in error keeps its own message). True when it refused."""
    try:
        action()
    except ValidationError as error:
        if hasattr(error, "error_dict"):
            for field, problems in error.message_dict.items():
                key = field if field in form.fields else None
                if key is not None and key in form.errors:
                    continue
                form.add_error(key, [advise(problem) for problem in problems])
        else:
            form.add_error(None, error)
        return True
    return False
