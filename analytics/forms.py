"""The dashboards' filters: one time range for every page (a preset: the last hour, 6 hours, 24
hours, 7 days or 30 days; whole UTC days as ISO dates; or an exact window of hours, `since` and
`until`, as drill-down links carry), bucket size (hours or days by the range's length unless
chosen), tool, host or host family, tenant, backend, how hosts are grouped, and the chart's zoom.

Dates given win over a preset, and a preset over nothing: so the page frame's form carries the
preset in force as a hidden field, and typing dates into it replaces the preset."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django import forms

from analytics.families import FAMILY_PREFIX
from analytics.models import FAILING_KINDS
from analytics.selectors import DEFAULT_PRESET, NO_TENANT, PRESETS, ReportQuery
from core.calls import ToolCall
from core.errors import ErrorCode
from core.events import describe

ISO_DATE = {"placeholder": "YYYY-MM-DD", "pattern": r"\d{4}-\d{2}-\d{2}", "size": 10, "inputmode": "numeric"}
BACKENDS: tuple[str, ...] = describe(ToolCall).field("backend").values or ()
"""The TomTom backends a call can be served by (core/calls.py)."""


class ReportForm(forms.Form):
    window = forms.ChoiceField(
        choices=[("", "Dates below"), *((name, label) for name, (label, _) in PRESETS.items())],
        required=False,
        label="Range",
    )
    # Text, not type="date": a browser shows its locale's format there (mm/dd/yyyy); ISO is unambiguous.
    start = forms.DateField(required=False, input_formats=["%Y-%m-%d"], widget=forms.TextInput(attrs=ISO_DATE))
    end = forms.DateField(required=False, input_formats=["%Y-%m-%d"], widget=forms.TextInput(attrs=ISO_DATE))
    since = forms.DateTimeField(required=False, widget=forms.HiddenInput())
    until = forms.DateTimeField(required=False, widget=forms.HiddenInput())
    bucket = forms.ChoiceField(
        choices=[("", "by the range"), ("hour", "Hour"), ("day", "Day")], required=False, label="Buckets"
    )
    tool = forms.CharField(required=False, widget=forms.Select())
    client = forms.CharField(required=False, label="Host", widget=forms.Select())
    tenant = forms.CharField(required=False, widget=forms.Select())
    backend = forms.ChoiceField(choices=[("", "every backend"), *((b, b) for b in BACKENDS)], required=False)
    group = forms.ChoiceField(
        choices=[("client", "exact client name"), ("family", "host family")], required=False, label="Hosts by"
    )
    zoom = forms.BooleanField(required=False, label="Zoom the chart to the data")
    kind = forms.ChoiceField(choices=[("", "every failing kind"), *[(k, k) for k in FAILING_KINDS]], required=False)
    code = forms.ChoiceField(
        choices=[("", "every error code"), *((c.value, c.value) for c in ErrorCode)], required=False, label="Code"
    )

    def __init__(self, data: Any = None, *, default_preset: str = DEFAULT_PRESET) -> None:
        super().__init__(data)
        self.default_preset = default_preset

    def set_choices(self, *, hosts: list[str], families: list[str], tools: list[str], tenants: list[str]) -> None:
        """The host select offers the families, then the hosts, present in the range; the tool
        and tenant selects those present. A value given that is not among them is kept as an option."""
        data = self.cleaned_data if hasattr(self, "cleaned_data") else {}
        family_options = [(f"{FAMILY_PREFIX}{name}", name) for name in families]
        host_options = [(host, host) for host in hosts]
        chosen = data.get("client") or ""
        if chosen and chosen not in {value for value, _ in family_options + host_options}:
            host_options.insert(0, (chosen, chosen))
        self.fields["client"].widget.choices = [
            ("", "every host"),
            ("Host families", family_options),
            ("Hosts", host_options),
        ]
        tool_options = [(tool, tool) for tool in tools]
        if (tool := data.get("tool") or "") and tool not in tools:
            tool_options.insert(0, (tool, tool))
        self.fields["tool"].widget.choices = [("", "every tool"), *tool_options]
        tenant_options = [(tenant, tenant) for tenant in tenants if tenant]
        if (tenant := data.get("tenant") or "") and tenant != NO_TENANT and tenant not in tenants:
            tenant_options.insert(0, (tenant, tenant))
        self.fields["tenant"].widget.choices = [
            ("", "every tenant"),
            (NO_TENANT, "no tenant (API key)"),
            *tenant_options,
        ]

    @property
    def preset(self) -> str:
        """The preset window in force: none when dates or exact hours are given (or `window` is
        given empty: "dates"); else the one chosen, else the page's default."""
        data = self.cleaned_data if hasattr(self, "cleaned_data") else {}
        if data.get("start") or data.get("end") or data.get("since") or self.data.get("window") == "":
            return ""
        if data.get("window") in PRESETS:
            return data["window"]
        return self.default_preset

    @property
    def more_filters(self) -> bool:
        """Whether a filter the page frame folds away (tenant, backend, grouping, bucket, kind,
        code, zoom) is given: its fold then opens."""
        data = self.cleaned_data if hasattr(self, "cleaned_data") else {}
        return any(data.get(name) for name in ("tenant", "backend", "bucket", "kind", "code", "zoom")) or (
            data.get("group") == "family"
        )

    def report_query(self, now: datetime | None = None) -> ReportQuery:
        """The query the filters describe; call after is_valid(). Impossible filters become a
        form error and the default query. A host value `family:NAME` filters by family."""
        data = self.cleaned_data
        client = (data.get("client") or "").strip()
        family = client.removeprefix(FAMILY_PREFIX) if client.startswith(FAMILY_PREFIX) else ""
        dates = data.get("start") or data.get("end")
        since, until = (None, None) if dates else (data.get("since"), data.get("until"))
        filters = {
            "bucket": data.get("bucket") or None,
            "tool": data.get("tool"),
            "client": "" if family else client,
            "family": family,
            "group": data.get("group"),
            "tenant": data.get("tenant"),
            "backend": data.get("backend"),
        }
        try:
            return ReportQuery.from_filters(
                start=data.get("start"),
                end=data.get("end"),
                since=since,
                until=until,
                window=self.preset,
                now=now,
                **filters,
            )
        except ValueError as error:
            self.add_error(None, str(error))
            return ReportQuery.from_filters(
                start=None, end=None, bucket=None, tool=None, client=None, window=self.default_preset, now=now
            )


DEFAULT_OVERVIEW_PRESET = DEFAULT_PRESET
