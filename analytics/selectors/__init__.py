"""Reports on app-status events, shared by the dashboard and the JSON API.

A report covers whole UTC days, `start` to `end` inclusive, or a window of whole UTC hours inside
them (`since`, `until`: a preset such as the last 6 hours, or a drill-down's exact hours),
optionally one tool and one host (client name) or host family (analytics/families.py). Counts are
summed in SQL from the rollups (`rollups`): the daily ones for the whole UTC days of the range, the
hourly ones for the hours at its edges (and for hourly buckets), so a window is exact to the hour.
Rows are grouped by any of bucket (the UTC hour or day), client and tool; rates are computed from
the summed counts when read. With `group="family"` the client of every row is its host family and
rows of one family are summed. Drill-down and old-caller reports read the raw events.

The parts, each using only those below it (import-linter checks this):

- ``widget_failures``: widget failures by bucket, host and tool (`failure_counts`);
  ``old_callers``: who still calls old names and inputs (`old_callers`, `still_calling`);
  ``drill_down``: the raw calls and events behind a figure, and what the retention removed.
- ``scope``: the rollup rows of a range with the report's filters applied (`rollups`), and the
  hosts and tools to filter by.
- ``query``: a report's range and filters (`ReportQuery`), the presets, and `spans`.

Callers import from this package: `from analytics.selectors import ReportQuery, rollups`.
"""

from analytics.selectors.drill_down import (
    CALL_DETAIL_FIELDS,
    MAX_GROUPS,
    REQUEST_WINDOW,
    MessageGroup,
    RequestEvent,
    RetentionGap,
    call_details,
    failing_call_groups,
    failing_calls,
    failing_event_groups,
    failing_events,
    request_events,
    retention_gap,
)
from analytics.selectors.old_callers import OldCaller, StillCalling, old_callers, still_calling
from analytics.selectors.query import (
    BUCKETS,
    CALL_ONLY_FILTERS,
    DAY,
    DEFAULT_DAYS,
    DEFAULT_PRESET,
    GROUPS,
    HOUR,
    HOURLY_UP_TO,
    MAX_DAYS,
    NO_TENANT,
    PRESETS,
    Bucket,
    Dimension,
    Group,
    ReportQuery,
    auto_bucket,
    preset_range,
    spans,
)
from analytics.selectors.scope import UnsupportedFilter, families_present, hosts_and_tools, rollups
from analytics.selectors.widget_failures import FailureRow, failure_counts

__all__ = [
    "BUCKETS",
    "CALL_DETAIL_FIELDS",
    "CALL_ONLY_FILTERS",
    "DAY",
    "DEFAULT_DAYS",
    "DEFAULT_PRESET",
    "GROUPS",
    "HOUR",
    "HOURLY_UP_TO",
    "MAX_DAYS",
    "MAX_GROUPS",
    "NO_TENANT",
    "PRESETS",
    "REQUEST_WINDOW",
    "Bucket",
    "Dimension",
    "FailureRow",
    "Group",
    "MessageGroup",
    "OldCaller",
    "ReportQuery",
    "RequestEvent",
    "RetentionGap",
    "StillCalling",
    "UnsupportedFilter",
    "auto_bucket",
    "call_details",
    "failing_call_groups",
    "failing_calls",
    "failing_event_groups",
    "failing_events",
    "failure_counts",
    "families_present",
    "hosts_and_tools",
    "old_callers",
    "preset_range",
    "request_events",
    "retention_gap",
    "rollups",
    "spans",
    "still_calling",
]
