"""The dashboard's filters: a date range (whole UTC days), bucket size, tool and host."""

from __future__ import annotations

from django import forms

from analytics.models import FAILING_KINDS
from analytics.selectors import ReportQuery


class ReportForm(forms.Form):
    start = forms.DateField(required=False, widget=forms.DateInput(attrs={"type": "date"}))
    end = forms.DateField(required=False, widget=forms.DateInput(attrs={"type": "date"}))
    bucket = forms.ChoiceField(choices=[("day", "Day"), ("hour", "Hour")], required=False)
    tool = forms.CharField(required=False, widget=forms.TextInput(attrs={"list": "analytics-tools"}))
    client = forms.CharField(required=False, label="Host", widget=forms.TextInput(attrs={"list": "analytics-hosts"}))
    kind = forms.ChoiceField(choices=[("", "every failing kind"), *[(k, k) for k in FAILING_KINDS]], required=False)

    def report_query(self) -> ReportQuery:
        """The query the filters describe; call after is_valid(). Impossible filters become a
        form error and the default query."""
        data = self.cleaned_data
        try:
            return ReportQuery.from_filters(
                start=data.get("start"),
                end=data.get("end"),
                bucket=data.get("bucket"),
                tool=data.get("tool"),
                client=data.get("client"),
            )
        except ValueError as error:
            self.add_error(None, str(error))
            return ReportQuery.from_filters(start=None, end=None, bucket=None, tool=None, client=None)
