"""docs/analytics.md describes every stat, every analytics setting and every API endpoint."""

from __future__ import annotations

import re

from analytics.api import api
from analytics.models import UNKNOWN_KIND
from analytics.stats import STAT_NAMES
from core.app_status import APP_STATUS_EVENTS, AppData, Fetched
from tests.conftest import REPO
from tomtom_mcp.env import ENV_VARS

DOCS = (REPO / "docs" / "analytics.md").read_text()


def test_every_stat_is_described():
    assert [name for name in STAT_NAMES if f"| `{name}` |" not in DOCS] == []


def test_every_analytics_setting_is_described():
    settings = [name for name in ENV_VARS if name.startswith("ANALYTICS_")]

    assert settings, "the analytics settings are read through tomtom_mcp.env"
    assert [name for name in settings if f"| `{name}` |" not in DOCS] == []


def test_every_endpoint_is_listed():
    paths = api.get_openapi_schema(path_prefix="/api/analytics/")["paths"]

    assert [path for path in paths if f"`GET {path}`" not in DOCS] == []


def test_every_counted_message_and_the_unknown_kind_are_named():
    counted = [event for event in APP_STATUS_EVENTS if event not in (AppData, Fetched)]

    assert [event.MESSAGE for event in counted if f"`{event.MESSAGE}`" not in DOCS] == []
    assert f"kind **`{UNKNOWN_KIND}`**" in DOCS


def test_every_tool_call_stat_and_metric_is_described():
    from analytics.metrics import REGISTRY
    from analytics.tool_stats import CALL_STAT_NAMES

    section = DOCS[DOCS.index("Tool-call stats") : DOCS.index("**Old callers**")]
    metrics = [metric.name for metric in REGISTRY.collect()]

    assert [name for name in CALL_STAT_NAMES if f"`{name}`" not in section] == []
    assert metrics and [name for name in metrics if f"`{name}" not in DOCS] == []


def test_every_system_check_is_documented():
    ids = set(re.findall(r'id="(analytics\.[EW]\d{3})"', (REPO / "analytics" / "checks.py").read_text()))

    assert ids and [check for check in sorted(ids) if f"`{check}`" not in DOCS] == []
