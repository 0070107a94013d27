"""Governance fixtures: tools and registries of our own, so no test depends on which tools
this release happens to register."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any

import pytest
from pydantic import Field, create_model

from tools.definition import Tool, define_tool
from tools.inputs import ToolInput


async def _echo(input: ToolInput, context: Any) -> dict[str, Any]:
    return {"echo": input.model_dump(exclude_unset=True)}


SCALARS = {"string": str, "number": float, "integer": int, "boolean": bool}


def python_type(schema: dict[str, Any]) -> Any:
    """The input type a JSON Schema property stands for (the few keywords these tests write)."""
    if schema["type"] == "array":
        kind: Any = list[python_type(schema.get("items", {"type": "string"}))]  # type: ignore[misc]
        bounds = {"min_length": schema.get("minItems"), "max_length": schema.get("maxItems")}
    else:
        kind, bounds = SCALARS[schema["type"]], {"min_length": schema.get("minLength")}
    given = {key: value for key, value in bounds.items() if value is not None}
    return Annotated[kind, Field(**given)] if given else kind


def fake_tool(name: str, **inputs: Any) -> Tool:
    """A registered tool whose optional inputs are these JSON Schema properties, or Python types
    (default: one string, `query`)."""
    kinds = {
        key: python_type(kind) if isinstance(kind, dict) else kind for key, kind in (inputs or {"query": str}).items()
    }
    fields: dict[str, Any] = {key: (kind | None, None) for key, kind in kinds.items()}
    model = create_model(f"Input_{name.replace('-', '_')}", __base__=ToolInput, **fields)
    return define_tool(name=name, title=name.title(), description=f"{name}, for tests.", input=model, run=_echo)


@pytest.fixture
def use_registry(monkeypatch: pytest.MonkeyPatch) -> Callable[..., dict[str, Tool]]:
    """Make governance see exactly these tools as this release's registry."""

    def use(*tools: Tool) -> dict[str, Tool]:
        registry = {tool.name: tool for tool in tools}
        monkeypatch.setattr("governance.selectors.registered_tools", lambda: dict(registry))
        return registry

    return use


@pytest.fixture
def governance_clock(settings, monkeypatch):
    """Stop the governance clock (`set(moment)`); today is 2027-01-10 until a test moves it.
    `set(moment, system=True)` stops the system clock there too: the date truly came, so what
    it retires is written; without it, the clock is a rehearsal and writes nothing."""
    from datetime import UTC, datetime

    from django.utils import timezone

    from tests.support import clock

    settings.GOVERNANCE_CLOCK = clock.PATH

    class Stopped:
        system: datetime | None = None

        def set(self, moment: datetime, *, system: bool = False) -> None:
            clock.set_now(moment)
            if system:
                self.system = moment

    stopped = Stopped()
    monkeypatch.setattr("governance.clock.system_now", lambda: stopped.system or timezone.now())
    stopped.set(datetime(2027, 1, 10, 12, 0, tzinfo=UTC))
    yield stopped
    clock.set_now(None)
