"""What the analytics' evidence pages read of the tool surface (`TOOL_STATUSES`)."""

from __future__ import annotations

from dataclasses import replace
from datetime import date

import pytest
from django.conf import settings
from django.utils.module_loading import import_string

from governance import services
from governance.selectors import tool_statuses
from tests.governance.conftest import fake_tool

pytestmark = pytest.mark.django_db


def test_the_setting_names_the_governance_selector():
    assert import_string(settings.TOOL_STATUSES) is tool_statuses


def test_each_name_has_its_state_and_app_only_tools_are_never_live(use_registry):
    app_only = replace(fake_tool("demo-bridge"), app_only=True)
    use_registry(fake_tool("demo-live"), fake_tool("demo-next"), fake_tool("demo-old-name"), app_only)
    for name in ("demo-live", "demo-next", "demo-old-name", "demo-bridge", "demo-gone"):
        services.ledger_add(name=name, first_seen=date(2026, 1, 1))
    services.deprecation_create(name="demo-next", replaced_by=["demo-live"])
    services.retired_tool_create(name="demo-old-name", replaced_by=["demo-live"])

    statuses = tool_statuses()
    assert {
        name: statuses[name] for name in ("demo-live", "demo-next", "demo-old-name", "demo-bridge", "demo-gone")
    } == {
        "demo-live": "live",
        "demo-next": "deprecated",
        "demo-old-name": "retired",
        "demo-bridge": "app-only",
        "demo-gone": "dropped",
    }
