"""Host families: client names grouped by pattern (the `HostFamily` table, edited in the admin).

`Families.load()` reads the table once; `family_of(client)` is the name of the first family (in
`position` order) whose pattern matches the whole client name, ignoring case, or the client name
itself when none does. Reports group by family by mapping each row's client and summing, so a
family edited in the admin applies to every stored event at once: the rollups keep exact names.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cached_property

from analytics.models import HostFamily

MAX_MATCHED_LENGTH = 500
"""Only this much of a client name is matched (client names are bounded by the server anyway)."""
FAMILY_PREFIX = "family:"
"""The dashboard's host select marks a family's option value with this prefix."""


@dataclass(frozen=True)
class Families:
    """An ordered list of (family name, compiled pattern)."""

    patterns: tuple[tuple[str, re.Pattern[str]], ...]
    _cache: dict[str, str] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def load(cls) -> Families:
        """The families as stored now. A pattern that no longer compiles (edited outside the
        admin) is left out rather than failing every report."""
        patterns = []
        for family in HostFamily.objects.order_by("position", "name"):
            try:
                patterns.append((family.name, re.compile(family.pattern, re.IGNORECASE)))
            except re.error:
                continue
        return cls(tuple(patterns))

    @cached_property
    def names(self) -> tuple[str, ...]:
        return tuple(name for name, _ in self.patterns)

    def family_of(self, client: str) -> str:
        """The family `client` belongs to, or `client` itself when no pattern matches."""
        if (found := self._cache.get(client)) is not None:
            return found
        matched = client[:MAX_MATCHED_LENGTH]
        family = next((name for name, pattern in self.patterns if pattern.fullmatch(matched)), client)
        self._cache[client] = family
        return family

    def members(self, family: str, clients: list[str]) -> list[str]:
        """The clients among `clients` that belong to `family`."""
        return [client for client in clients if self.family_of(client) == family]
