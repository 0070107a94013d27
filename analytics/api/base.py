"""What the endpoints share: the filters (the dashboard's, as query parameters), the head of a
report, which echoes the query its rows answer, and the most events one page lists."""

from __future__ import annotations

from datetime import date, datetime
from typing import Literal, get_args

from ninja import Field, Schema
from ninja.errors import HttpError

from analytics.forms import BACKENDS
from analytics.selectors import NO_TENANT, PRESETS, Bucket, Group, ReportQuery

MAX_EVENTS = 500


class Filters(Schema):
    start: date | None = Field(None, description="First UTC day; default: 29 days before `end`.")
    end: date | None = Field(None, description="Last UTC day, included; default: today.")
    bucket: Bucket = Field("day", description="Bucket size of time series.")
    tool: str = Field("", description="Only this tool.")
    client: str = Field("", description="Only this host (client name).")
    family: str = Field("", description="Only the hosts of this host family.")
    group: Group = Field("client", description="Report hosts by exact client name or by host family.")
    tenant: str = Field(
        "",
        description=f"Only this tenant's calls (`{NO_TENANT}`: callers with an API key). Widget "
        "events record no tenant: widget endpoints answer 422 with it.",
    )
    backend: Literal[("", *BACKENDS)] = Field(  # type: ignore[valid-type]
        "", description="Only calls served by this TomTom backend. Widget endpoints answer 422 with it."
    )
    window: Literal["", "1h", "6h", "24h", "7d", "30d"] = Field(
        "",
        description="A preset window: its whole UTC hours before the current one, and the current hour "
        "(overrides the dates).",
    )
    since: datetime | None = Field(None, description="First UTC hour of a window (with `until`; overrides the dates).")
    until: datetime | None = Field(None, description="The first moment after the window (a whole UTC hour).")

    def query(self) -> ReportQuery:
        since, until = self.since, self.until
        try:
            return ReportQuery.from_filters(
                start=self.start,
                end=self.end,
                bucket=self.bucket,
                tool=self.tool,
                client=self.client,
                family=self.family,
                group=self.group,
                tenant=self.tenant,
                backend=self.backend,
                since=since,
                until=until,
                window=self.window,
            )
        except ValueError as error:
            raise HttpError(422, str(error)) from None


assert set(get_args(Filters.model_fields["window"].annotation)) == {"", *PRESETS}, "the API offers every preset"


class Report(Schema):
    start: date
    end: date
    bucket: str
    tool: str
    client: str
    family: str
    group: str
    tenant: str
    backend: str


def report_head(query: ReportQuery) -> dict[str, object]:
    return {
        "start": query.start,
        "end": query.end,
        "bucket": query.bucket,
        "tool": query.tool,
        "client": query.client,
        "family": query.family,
        "group": query.group,
        "tenant": query.tenant,
        "backend": query.backend,
    }
