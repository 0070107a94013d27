"""`response_detail: "full"`: TomTom's untrimmed answer, within a size the caller can take.

`full_answer(body, limit)` returns `body` when its JSON is at most `limit` characters
(`ClientSettings.max_full_chars`, MCP_MAX_FULL_CHARS), else raises `invalid_arguments` on
`response_detail`, asking for `compact` or `geometry`: the call can succeed with a different
argument, so the fault is the argument's, not TomTom's.
"""

from __future__ import annotations

from typing import Any

import orjson

from tools.errors import invalid


def full_answer(body: Any, limit: int, *, geometry: bool = True) -> Any:
    """`body` if its JSON text has at most `limit` characters, else `invalid_arguments`."""
    size = len(orjson.dumps(body).decode())
    if size > limit:
        instead = "`compact` or `geometry`" if geometry else "`compact`"
        raise invalid(
            "response_detail",
            f"the full answer is {size:,} characters, over the {limit:,} a result may have"
            f" (MCP_MAX_FULL_CHARS); use {instead} instead",
        )
    return body
