"""The registry: which tools this release offers, in listing order (the composition root).

Adding a tool is one line in `default_tools()`. `Registry(tools)` checks the names are
unique and knows what the dispatcher asks of a set of them (which have geometry).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

from tools.definition import Tool, ToolDefinitionError
from tools.definitions.common import POINTS_ONLY


class Registry:
    def __init__(self, tools: Iterable[Tool]) -> None:
        self._tools: dict[str, Tool] = {}
        for tool in tools:
            if tool.name in self._tools:
                raise ToolDefinitionError(f"two tools are named {tool.name!r}")
            self._tools[tool.name] = tool

    @staticmethod
    def hints(offered: Sequence[Tool]) -> dict[str, str]:
        """Extra text for input errors that depend on the tools a caller is offered
        (tools.inputs.parse): which of them have geometry."""
        geometry = ", ".join(tool.name for tool in offered if tool.has_geometry) or "none"
        return {POINTS_ONLY: f"Tools with geometry: {geometry}"}

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    def __iter__(self) -> Iterator[Tool]:
        return iter(self._tools.values())

    def __len__(self) -> int:
        return len(self._tools)


def default_tools() -> list[Tool]:
    """Every tool module's `TOOL`, in listing order. Register a new tool here (one line)."""
    from tools.definitions import (
        area_search,
        data_viz,
        dynamic_map,
        ev_routing,
        ev_search,
        fuzzy_search,
        geocode,
        get_app_data,
        get_map_key,
        map_image,
        matrix_routing,
        optimize_waypoints,
        place_details,
        poi_categories,
        poi_search,
        reachable_range,
        report_app_status,
        reverse_geocode,
        routing,
        search_along_route,
        traffic,
        traffic_flow,
    )

    return [
        geocode.TOOL,
        reverse_geocode.TOOL,
        fuzzy_search.TOOL,
        poi_search.TOOL,
        place_details.TOOL,
        poi_categories.TOOL,
        ev_search.TOOL,
        area_search.TOOL,
        search_along_route.TOOL,
        routing.TOOL,
        matrix_routing.TOOL,
        optimize_waypoints.TOOL,
        ev_routing.TOOL,
        reachable_range.TOOL,
        traffic.TOOL,
        traffic_flow.TOOL,
        map_image.TOOL,
        dynamic_map.TOOL,
        data_viz.TOOL,
        get_app_data.TOOL,
        get_map_key.TOOL,
        report_app_status.TOOL,
    ]


def default_registry() -> Registry:
    return Registry(default_tools())
