"""Compact shape of a POI Categories answer: words -> the category ids search takes.

TomTom answers `{"poiCategories": [{id, name, childCategoryIds, synonyms}, ...]}`: several
hundred categories and sub-categories, with synonyms. Compact answers the question asked:

- with `filters`: the categories whose name or a synonym contains one of the phrases
  (case-insensitive), best first (name equal, name contains, synonym equal, synonym contains,
  every word of the phrase in the name or a synonym; then by id), at most `MAX_MATCHES`, each
  `{id, name, synonyms?}` with up to `MAX_SYNONYMS` synonyms;
- without: the top-level categories (those no other category lists as a child), `{id, name}`.
"""

from __future__ import annotations

from typing import Any

from tools.shaping.points import pick
from tools.shaping.search import listing
from tools.shaping.shape import ANY, ID, compile_spec, expect

MAX_MATCHES = 25
MAX_SYNONYMS = 5
CATEGORIES_ANSWER = compile_spec(
    {"poiCategories": [{"id": ID, "name": ANY, "synonyms": [ANY], "childCategoryIds": [ID]}]}
)
"""A POI Categories answer as shaping reads it (tools.shaping.shape)."""


def _rank(category: dict[str, Any], words: list[str]) -> int | None:
    """0 (best) to 4 for how `category` matches any of `words`, or None when it does not."""
    name = str(category.get("name", "")).casefold()
    synonyms = [str(s).casefold() for s in category.get("synonyms") or []]
    ranks = []
    for word in words:
        if word == name:
            ranks.append(0)
        elif word in name:
            ranks.append(1)
        elif word in synonyms:
            ranks.append(2)
        elif any(word in synonym for synonym in synonyms):
            ranks.append(3)
        elif all(any(token in text for text in (name, *synonyms)) for token in word.split()):
            ranks.append(4)
    return min(ranks, default=None)


def compact_categories(body: dict[str, Any], filters: list[str] | None) -> dict[str, Any]:
    expect(body, CATEGORIES_ANSWER)
    categories = [c for c in body.get("poiCategories") or [] if isinstance(c, dict) and "id" in c]
    if filters:
        words = [word.strip().casefold() for word in filters if word.strip()]
        ranked = sorted(
            ((rank, category) for category in categories if (rank := _rank(category, words)) is not None),
            key=lambda pair: (pair[0], str(pair[1]["id"])),
        )
        shown = [
            pick(
                {"id": c["id"], "name": c.get("name"), "synonyms": list(c.get("synonyms") or [])[:MAX_SYNONYMS]},
                ("id", "name", "synonyms"),
            )
            for _, c in ranked[:MAX_MATCHES]
        ]
        return {"categories": shown, **listing(shown, len(ranked))}
    children = {child for c in categories for child in c.get("childCategoryIds") or []}
    top = [{"id": c["id"], "name": c.get("name")} for c in categories if c["id"] not in children]
    return {"categories": top, **listing(top, len(top))}


MAX_INDEX = 2_000
"""The most categories the index of every category (a resource) lists."""
MAX_NAME_LENGTH = 100


def category_index(body: dict[str, Any]) -> dict[str, Any]:
    """Every category of a POI Categories answer as `{"<id>": name}`, in TomTom's order, at
    most `MAX_INDEX` (with `total`, `returned`, `truncated`), names cut to `MAX_NAME_LENGTH`."""
    expect(body, CATEGORIES_ANSWER)
    categories = [c for c in body.get("poiCategories") or [] if isinstance(c, dict) and "id" in c]
    index = {str(c["id"]): str(c.get("name") or "")[:MAX_NAME_LENGTH] for c in categories[:MAX_INDEX]}
    return {
        "categories": index,
        "total": len(categories),
        "returned": len(index),
        "truncated": len(categories) > len(index),
    }
