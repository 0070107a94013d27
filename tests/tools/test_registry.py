"""The registry: names unique, and every registered tool in the committed tool-surface history.

A tool added to `tools.registry.default_tools()` must also be ledgered in
`governance/fixtures/tool_surface.json` (docs/governance.md): CI, not a migration, catches it.
"""

import pytest

from governance.fixtures import read_fixture
from tests.governance.conftest import fake_tool
from tools.definition import ToolDefinitionError
from tools.registry import Registry, default_tools


def test_every_registered_tool_is_in_the_committed_ledger():
    ledgered = {entry.name for entry in read_fixture().ledger}
    assert [tool.name for tool in default_tools() if tool.name not in ledgered] == []


def test_no_registered_tool_is_retired_in_the_committed_history():
    retired = {retirement.name for retirement in read_fixture().retired}
    assert [tool.name for tool in default_tools() if tool.name in retired] == []


def test_two_tools_cannot_share_a_name():
    with pytest.raises(ToolDefinitionError, match="two tools are named 'demo'"):
        Registry([fake_tool("demo"), fake_tool("demo")])


def test_the_points_only_hint_names_the_offered_tools_with_geometry():
    tools = default_tools()
    hint = Registry.hints(tools)["points_only"]
    assert hint.startswith("Tools with geometry: ")
    assert "tomtom-routing" in hint and "tomtom-geocode" not in hint
    offered = [tool for tool in tools if tool.name != "tomtom-optimize-waypoints"]
    assert "tomtom-optimize-waypoints" not in Registry.hints(offered)["points_only"]
