"""Charts plot the hosts with the most events, each its own colour, and the rest as one `other` line."""

from __future__ import annotations

from datetime import UTC, datetime

from analytics.charts import OTHER, OTHER_COLOR, PALETTE, TOP_SERIES, line_chart, top_series

DAY = datetime(2026, 11, 2, tzinfo=UTC)


def test_the_largest_hosts_keep_their_line_and_the_rest_are_summed_as_other():
    series = {f"host-{i}": {DAY: (i, 10 * (i + 1))} for i in range(9)}  # host-8 has the most events

    kept = top_series(series)

    assert list(kept)[:TOP_SERIES] == ["host-8", "host-7", "host-6", "host-5", "host-4", "host-3"]
    assert kept[OTHER] == {DAY: (0 + 1 + 2, 10 + 20 + 30)}  # failures over events, not a mean of rates


def test_each_line_has_a_colour_of_the_palette_and_other_is_grey():
    series = {f"host-{i}": {DAY: (1, 10 + i)} for i in range(8)}

    chart = line_chart([DAY], series, "day", noun="calls", min_events=1, zoom=False)

    assert [line.host for line in chart.lines][-1] == OTHER
    assert [line.color for line in chart.lines] == [*PALETTE, OTHER_COLOR]
    assert len(set(PALETTE)) == TOP_SERIES
    assert chart.lines[-1].points[0].title == "other, 2026-11-02: 9.5% (2 of 21 calls failed; n = 21)"
