"""Host families: the seeded table, first match wins, unmatched names stay, bad patterns refused."""

from __future__ import annotations

import pytest

from analytics.families import Families
from analytics.models import HostFamily

pytestmark = pytest.mark.django_db


def test_the_seeded_families_group_the_common_hosts_and_leave_others_alone():
    families = Families.load()

    assert {
        name: families.family_of(name)
        for name in (
            "claude-ai",
            "claude-code",
            "ChatGPT/1.2026.310",
            "openai-mcp",
            "cursor-vscode",
            "Visual Studio Code",
            "windsurf-client",
            "Zed",
            "Cline",
            "goose",
            "mcp-inspector",
            "inspector-client",
            "fleet-agent",
        )
    } == {
        "claude-ai": "Claude (desktop, web)",
        "claude-code": "Claude Code",
        "ChatGPT/1.2026.310": "ChatGPT",
        "openai-mcp": "ChatGPT",
        "cursor-vscode": "Cursor",
        "Visual Studio Code": "VS Code",
        "windsurf-client": "Windsurf",
        "Zed": "Zed",
        "Cline": "Cline",
        "goose": "Goose",
        "mcp-inspector": "MCP Inspector",
        "inspector-client": "MCP Inspector",
        "fleet-agent": "fleet-agent",
    }


def test_families_are_tried_in_position_order():
    HostFamily.objects.create(name="Fleet", pattern="fleet-.*|cursor-vscode", position=1)

    families = Families.load()

    assert (families.family_of("fleet-agent"), families.family_of("cursor-vscode")) == ("Fleet", "Fleet")
    assert families.names[0] == "Fleet"


def test_the_admin_refuses_a_pattern_that_is_not_a_regular_expression(admin_client):
    response = admin_client.post(
        "/admin/analytics/hostfamily/add/", {"name": "Broken", "pattern": "cursor(", "position": 5, "description": ""}
    )

    assert response.status_code == 200
    assert "Not a valid regular expression: missing ), unterminated subpattern at position 6." in response.text
    assert not HostFamily.objects.filter(name="Broken").exists()


def test_the_admin_saves_a_valid_family(admin_client):
    response = admin_client.post(
        "/admin/analytics/hostfamily/add/", {"name": "Fleet", "pattern": "fleet-.*", "position": 5, "description": ""}
    )

    assert response.status_code == 302
    assert Families.load().family_of("fleet-agent") == "Fleet"
