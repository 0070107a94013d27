"""Which tool names a tenant's allow-list may hold.

The tool names belong to the `tools` app, which this app does not import (the apps know each
other only through core: docs/adr/0026-log-events-declared-once.md). The project wiring says
where they live: `TENANT_TOOL_NAMES` names a function returning every tool name the server
knows, each with why an allow-list cannot hold it (None when it can): live tools may be allowed,
while a retired name, an alias or a dropped name answers no call of its own.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping

from django.conf import settings
from django.utils.module_loading import import_string


def known_tool_names() -> Mapping[str, str | None] | None:
    """Every tool name the server knows, with why an allow-list cannot name it (None: it can);
    None when no source is configured (then nothing is judged)."""
    path = getattr(settings, "TENANT_TOOL_NAMES", "")
    return import_string(path)() if path else None


def allow_list_problems(names: Iterable[str], known: Mapping[str, str | None] | None = None) -> list[str]:
    """What is wrong with an allow-list, one sentence per name it cannot hold, each saying what
    to write instead: "tomtom-routng: no tool has this name; did you mean tomtom-routing?"."""
    known = known_tool_names() if known is None else known
    if known is None:
        return []
    allowed = sorted(name for name, why in known.items() if why is None)
    problems = []
    for name in names:
        if name not in known:
            close = difflib.get_close_matches(name, allowed, n=1, cutoff=0.8)
            problems.append(f"{name}: no tool has this name" + (f"; did you mean {close[0]}?" if close else "."))
        elif (why := known[name]) is not None:
            problems.append(f"{name}: {why}.")
    return problems
