"""The widgets this server offers: one shared map app (docs/widgets.md).

A tool drawn by a widget names it (`define_tool(widget=MAP_APP_URI)`); a tool only the widget
calls says `app_only=True`. How a widget is served (a `ui://` resource, its MIME type, CSP and
`_meta.ui`) is the protocol layer's business: protocol.mcp_apps.

The map app tells results apart by their shape and tool name, so every tool with `show_ui`
shares `MAP_APP_URI`. It loads MapLibre GL JS `MAPLIBRE_VERSION` from `MAPLIBRE_CDN`, or from
`maplibre_url` (a folder holding `maplibre-gl.mjs` and `maplibre-gl.css` of that version:
self-hosting, and the browser tests, which cannot reach a CDN).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from tools.tomtom.backends import CREDITS

MAP_APP_URI = "ui://tomtom-map/app.html"
MAP_APP_CALLS = ("tomtom-routing", "tomtom-poi-search", "tomtom-reachable-range")
"""The tools the map app's card calls through the host ("Route here", "Search nearby", "Show
reachable area"). Each result the app draws names those its caller is listed, so the card offers
only what this caller can use, in hosts that do not pass the app's `tools/list` on too."""
MAPLIBRE_VERSION = "6.17.0"
MAPLIBRE_CDN = f"https://cdn.jsdelivr.net/npm/maplibre-gl@{MAPLIBRE_VERSION}/dist/"
TOMTOM_DOMAINS = ("https://api.tomtom.com", "https://*.api.tomtom.com")
"""Map tiles and traffic tiles: the only other places the map app talks to."""
WORKER_DOMAINS = ("blob:", "data:")
"""MapLibre starts its workers from a blob: or data: URL when the frame's origin is opaque."""


@dataclass(frozen=True, slots=True)
class Widget:
    """One `ui://` resource: a self-contained HTML page and the domains it may reach."""

    uri: str
    name: str
    title: str
    description: str
    html: str
    connect_domains: tuple[str, ...]
    """Where its scripts may connect (CSP connect-src)."""
    resource_domains: tuple[str, ...]
    """Where it may load scripts, styles, images and workers from."""


MAX_PAGE_BYTES = 70_000
MAX_PAGE_GZIP_BYTES = 20_000
"""What the map app may weigh as sent, whole and gzipped (tests/widgets/test_widget_size.py)."""


def compact(page: str) -> str:
    """The page as sent: each line without its indentation, and without blank lines and lines that
    are only a `//` comment. The source keeps both for its readers; the host and the model's
    context pay for neither. Line breaks stay, so no statement joins another (the page's script
    relies on them where it has no semicolon)."""
    lines = (line.strip() for line in page.splitlines())
    return "\n".join(line for line in lines if line and not line.startswith("//"))


@cache
def _template() -> str:
    return compact((Path(__file__).with_name("map_app.html")).read_text(encoding="utf-8"))


def _script_json(value: Any) -> str:
    """JSON that is safe inside an inline <script> (no `</script>`, no HTML comment opener)."""
    return json.dumps(value).replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def map_app(maplibre_url: str = MAPLIBRE_CDN, *, version: str = "") -> Widget:
    """The shared map app, loading MapLibre from `maplibre_url` (a folder URL)."""
    base = maplibre_url if maplibre_url.endswith("/") else maplibre_url + "/"
    parts = urlsplit(base)
    if parts.scheme not in ("https", "http") or not parts.netloc:
        raise ValueError(f"WIDGET_MAPLIBRE_URL: {maplibre_url!r} is not an http(s) folder URL")
    origin = f"{parts.scheme}://{parts.netloc}"
    config = {"maplibre": base, "version": version, "credits": {b.value: text for b, text in CREDITS.items()}}
    html = _template().replace("/*CONFIG*/{}", _script_json(config))
    return Widget(
        uri=MAP_APP_URI,
        name="tomtom-map",
        title="TomTom map",
        description="Interactive map for TomTom tool results: places, routes, areas, traffic and your own data.",
        html=html,
        connect_domains=(*TOMTOM_DOMAINS, origin),
        resource_domains=(origin, *TOMTOM_DOMAINS, *WORKER_DOMAINS),
    )
