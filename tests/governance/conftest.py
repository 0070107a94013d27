"""Governance fixtures: tools and registries of our own, so no test depends on which tools
this release happens to register."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from tools.definition import Tool, define_tool


async def _echo(arguments: dict[str, Any], context: Any) -> dict[str, Any]:
    return {"echo": arguments}


def fake_tool(name: str, **properties: dict[str, Any]) -> Tool:
    """A registered tool whose inputs are `properties` (default: one string, `query`)."""
    return define_tool(
        name=name,
        title=name.title(),
        description=f"{name}, for tests.",
        input_schema={
            "type": "object",
            "properties": properties or {"query": {"type": "string"}},
            "additionalProperties": False,
        },
        run=_echo,
    )


@pytest.fixture
def use_registry(monkeypatch: pytest.MonkeyPatch) -> Callable[..., dict[str, Tool]]:
    """Make governance see exactly these tools as this release's registry."""

    def use(*tools: Tool) -> dict[str, Tool]:
        registry = {tool.name: tool for tool in tools}
        monkeypatch.setattr("tools.governance.selectors.registered_tools", lambda: dict(registry))
        return registry

    return use
