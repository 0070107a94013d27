"""The rules of the tool surface, as pure functions over a registry and a history.

`tools.checks` reports them for the whole surface; `services` refuses a write that would
break them. "Live" means registered in this release (tools.registry) and not retired.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping

from tools.definition import Tool
from tools.governance.surface import ChangeKind


def is_live(name: str, registry: Mapping[str, Tool], retired: Collection[str]) -> bool:
    return name in registry and name not in retired


def replacement_problems(
    name: str, replaced_by: Collection[str], registry: Mapping[str, Tool], retired: Collection[str]
) -> list[str]:
    """Why `replaced_by` cannot replace the retired tool `name` (empty when it can)."""
    problems = []
    if len(set(replaced_by)) != len(replaced_by):
        problems.append("names a tool twice")
    for replacement in replaced_by:
        if replacement == name:
            problems.append(f"{replacement} cannot replace itself")
        elif not is_live(replacement, registry, retired):
            problems.append(f"{replacement} is not a live tool")
    return problems


def input_problem(tool: Tool, input_name: str, kind: ChangeKind) -> str | None:
    """Why the tool's current schema contradicts the change (None when it agrees)."""
    schema = tool.input_schema.get("properties", {}).get(input_name)
    if kind is ChangeKind.REMOVED and schema is not None:
        return f"{input_name} is still an input of {tool.name}"
    if kind is ChangeKind.STRING_NOW_LIST and (schema is None or schema.get("type") != "array"):
        return f"{input_name} is not a list in {tool.name}'s input schema"
    return None
