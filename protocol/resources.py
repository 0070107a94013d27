"""Reference data as resources: what a model looks up once rather than asking a tool each time.

- `tomtom://travel-modes`: the travel modes each backend takes, per tool that takes one, read
  from the tools' own declarations (`tools.inputs.choices`), so it is true for this release.
- `tomtom://poi-categories` and the template `tomtom://poi-categories/{language}`: every POI
  category id with its name, in a language (TomTom's default without one), from TomTom's POI
  Categories API on the caller's backend. Reading it is a call of `tomtom-poi-categories`
  through the dispatcher, with the caller's key, quotas, allow-list and call log like any other
  call, and it carries TomTom's attribution (tools.attribution); it is listed only to callers
  offered that tool.

Contents are JSON, bounded (at most `MAX_INDEX` categories). How resources travel on the wire
is the protocol layer's business (protocol.handlers.resources); they cost nothing in `tools/list`. The
decision: docs/adr/0036-prompts-resources-attribution.md.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from typing import Any

from core.errors import ToolError
from tools.attribution import ATTRIBUTION_KEY
from tools.context import CallContext
from tools.definition import Tool
from tools.dispatch import Dispatcher, dumps
from tools.inputs import choices
from tools.shaping.categories import category_index
from tools.tomtom.backends import Backend

JSON = "application/json"
POI_CATEGORIES_TOOL = "tomtom-poi-categories"
LANGUAGE_TAG = re.compile(r"^[A-Za-z0-9-]{2,35}$")
"""A language as the resource URI takes it (the tool's own input rule judges the rest)."""


@dataclass(frozen=True, slots=True)
class Reference:
    """A resource (or, with `{...}` in its `uri`, a resource template)."""

    uri: str
    name: str
    title: str
    description: str
    needs: str | None = None
    """The tool a read calls: listed only to callers offered it."""
    mime_type: str = JSON

    def offered_to(self, offered: Collection[str]) -> bool:
        return self.needs is None or self.needs in offered


TRAVEL_MODES = Reference(
    uri="tomtom://travel-modes",
    name="travel-modes",
    title="Travel modes per backend",
    description="The travelMode values each tool takes on each TomTom backend.",
)
POI_CATEGORIES = Reference(
    uri="tomtom://poi-categories",
    name="poi-categories",
    title="POI category ids",
    description="Every POI category id and its name (the poiCategories of the search tools), from TomTom.",
    needs=POI_CATEGORIES_TOOL,
)
POI_CATEGORIES_IN = Reference(
    uri="tomtom://poi-categories/{language}",
    name="poi-categories-in-language",
    title="POI category ids in a language",
    description="Every POI category id and its name in a language (an IETF tag such as de-DE), from TomTom.",
    needs=POI_CATEGORIES_TOOL,
)
RESOURCES = (TRAVEL_MODES, POI_CATEGORIES)
TEMPLATES = (POI_CATEGORIES_IN,)


class ReadError(Exception):
    """A resource could not be read: `error` is the closed-set error (core.errors) that says why."""

    def __init__(self, error: dict[str, Any]) -> None:
        super().__init__(error.get("message", ""))
        self.error = error

    @property
    def code(self) -> str:
        return str(self.error.get("code", ""))


def travel_modes(tools: Iterable[Tool]) -> dict[str, dict[str, list[Any]]]:
    """`{backend: {tool: [travelMode, ...]}}` for the tools that take a travel mode, on each
    backend that serves them."""
    tools = list(tools)
    return {
        backend.value: {
            tool.name: modes
            for tool in tools
            if tool.serves(backend) and (modes := choices(tool.input_model, "travelMode", backend)) is not None
        }
        for backend in Backend
    }


async def poi_categories(dispatcher: Dispatcher, context: CallContext, language: str | None) -> dict[str, Any]:
    """Every POI category of the caller's backend in `language` (None: TomTom's default), or
    `ReadError` with what the call answered."""
    arguments: dict[str, Any] = {"response_detail": "full"}
    if language is not None:
        arguments["language"] = language
    outcome = await dispatcher.call(POI_CATEGORIES_TOOL, arguments, context)
    if outcome.is_error:
        raise ReadError(outcome.data["error"])
    try:
        index = category_index(outcome.data)
    except ToolError as error:
        raise ReadError(error.as_dict()["error"]) from None
    attribution = {ATTRIBUTION_KEY: outcome.data[ATTRIBUTION_KEY]} if ATTRIBUTION_KEY in outcome.data else {}
    return {"backend": context.effective_backend.value, "language": language, **index, **attribution}


def language_of(uri: str) -> str | None:
    """The language a `tomtom://poi-categories/{language}` URI names, or None when `uri` is not
    one (a bad tag is `ReadError`)."""
    prefix = POI_CATEGORIES.uri + "/"
    if not uri.startswith(prefix):
        return None
    language = uri.removeprefix(prefix)
    if not LANGUAGE_TAG.fullmatch(language):
        raise ReadError(
            {
                "code": "invalid_arguments",
                "argument": "language",
                "message": f"language: {language[:40]!r} is not a language tag; send one such as de-DE or en-GB",
            }
        )
    return language


async def read(uri: str, dispatcher: Dispatcher, context: CallContext, offered: Collection[str]) -> str | None:
    """The JSON text of the reference resource at `uri` for a caller offered the tools named in
    `offered`, None when no reference resource it is offered has that URI, or `ReadError`."""
    if uri == TRAVEL_MODES.uri:
        return dumps(travel_modes(dispatcher.registry))
    if POI_CATEGORIES_TOOL not in offered:
        return None
    if uri == POI_CATEGORIES.uri:
        return dumps(await poi_categories(dispatcher, context, None))
    language = language_of(uri)
    if language is None:
        return None
    return dumps(await poi_categories(dispatcher, context, language))
