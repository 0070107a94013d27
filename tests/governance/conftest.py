"""Governance fixtures: tools and registries of our own, so no test depends on which tools
this release happens to register."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from pydantic import create_model

from tools.definition import Tool, define_tool
from tools.inputs import ToolInput


async def _echo(input: ToolInput, context: Any) -> dict[str, Any]:
    return {"echo": input.model_dump(exclude_unset=True)}


def fake_tool(name: str, **inputs: Any) -> Tool:
    """A registered tool whose optional inputs have these types (default: one string, `query`)."""
    fields: dict[str, Any] = {key: (kind | None, None) for key, kind in (inputs or {"query": str}).items()}
    model = create_model(f"Input_{name.replace('-', '_')}", __base__=ToolInput, **fields)
    return define_tool(name=name, title=name.title(), description=f"{name}, for tests.", input=model, run=_echo)


@pytest.fixture
def use_registry(monkeypatch: pytest.MonkeyPatch) -> Callable[..., dict[str, Tool]]:
    """Make governance see exactly these tools as this release's registry."""

    def use(*tools: Tool) -> dict[str, Tool]:
        registry = {tool.name: tool for tool in tools}
        monkeypatch.setattr("tools.governance.selectors.registered_tools", lambda: dict(registry))
        return registry

    return use
