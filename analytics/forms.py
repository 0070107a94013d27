"""The dashboards' filters: a date range (whole UTC days, ISO dates), bucket size, tool, host or
host family, how hosts are grouped, and the chart's zoom."""

from __future__ import annotations

from django import forms

from analytics.families import FAMILY_PREFIX
from analytics.models import FAILING_KINDS
from analytics.selectors import ReportQuery

ISO_DATE = {"placeholder": "YYYY-MM-DD", "pattern": r"\d{4}-\d{2}-\d{2}", "size": 10, "inputmode": "numeric"}


class ReportForm(forms.Form):
    # Text, not type="date": a browser shows its locale's format there (mm/dd/yyyy); ISO is unambiguous.
    start = forms.DateField(required=False, input_formats=["%Y-%m-%d"], widget=forms.TextInput(attrs=ISO_DATE))
    end = forms.DateField(required=False, input_formats=["%Y-%m-%d"], widget=forms.TextInput(attrs=ISO_DATE))
    bucket = forms.ChoiceField(choices=[("day", "Day"), ("hour", "Hour")], required=False)
    tool = forms.CharField(required=False, widget=forms.Select())
    client = forms.CharField(required=False, label="Host", widget=forms.Select())
    group = forms.ChoiceField(
        choices=[("client", "exact client name"), ("family", "host family")], required=False, label="Hosts by"
    )
    zoom = forms.BooleanField(required=False, label="Zoom the chart to the data")
    kind = forms.ChoiceField(choices=[("", "every failing kind"), *[(k, k) for k in FAILING_KINDS]], required=False)

    def set_choices(self, *, hosts: list[str], families: list[str], tools: list[str]) -> None:
        """The host select offers the families, then the hosts, present in the range; the tool
        select the tools. A value given that is not among them is kept as an option."""
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

    def report_query(self) -> ReportQuery:
        """The query the filters describe; call after is_valid(). Impossible filters become a
        form error and the default query. A host value `family:NAME` filters by family."""
        data = self.cleaned_data
        client = (data.get("client") or "").strip()
        family = client.removeprefix(FAMILY_PREFIX) if client.startswith(FAMILY_PREFIX) else ""
        try:
            return ReportQuery.from_filters(
                start=data.get("start"),
                end=data.get("end"),
                bucket=data.get("bucket"),
                tool=data.get("tool"),
                client="" if family else client,
                family=family,
                group=data.get("group"),
            )
        except ValueError as error:
            self.add_error(None, str(error))
            return ReportQuery.from_filters(start=None, end=None, bucket=None, tool=None, client=None)
