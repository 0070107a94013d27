"""tomtom-get-map-key (app-only): the TomTom key the map widget loads its tiles with.

Map and traffic tiles are fetched by the browser, so the widget needs a key there. It gets
the key this call would use for TomTom, chosen by the same rule (tools.tomtom.credentials):
the caller's own key (`tomtom-api-key` header, bearer token, or `--apikey` on stdio and exec),
else the server's `TOMTOM_API_KEY`, except over HTTP in hosted mode, where the server's key is
never handed out and a caller without a key is answered `unauthorized` (the widget then draws
without tiles). The decision and its trade-off: docs/adr/0009-map-key-for-widgets.md.

The key never travels in app data or in any result the model reads: only in this tool's
answer, which hosts give to the widget alone (`_meta.ui.visibility: ["app"]`).
"""

from __future__ import annotations

from typing import Any

from tools.context import CallContext
from tools.definition import Annotations, define_tool
from tools.inputs import ToolInput
from tools.tomtom.client import upstream_user_agent
from tools.tomtom.credentials import resolve_api_key

APP_PRODUCT_TOKENS = {"http": "TomTomMCPAPPHttp"}
"""The `TomTom-User-Agent` product of requests the widget makes (TomTomMCPAPP off HTTP)."""


class MapKeyInput(ToolInput):
    # No inputs: the key follows from the call itself (its transport, headers and server).
    pass


async def run(input: MapKeyInput, context: CallContext) -> dict[str, Any]:
    key, method = resolve_api_key(
        context.keys,
        server_key=context.config.server_key,
        over_http=context.transport == "http",
        hosted=context.config.hosted,
    )
    product = APP_PRODUCT_TOKENS.get(context.transport, "TomTomMCPAPP")
    return {
        "key": key,
        "key_source": method,
        "backend": context.effective_backend.value,
        "user_agent": upstream_user_agent(product, context.config.version, context.client_name),
    }


TOOL = define_tool(
    name="tomtom-get-map-key",
    title="TomTom Get Map Key",
    description="Map widget only: the TomTom key and backend its map tiles load with.",
    input=MapKeyInput,
    run=run,
    annotations=Annotations(read_only=True, destructive=False, idempotent=True, open_world=False),
    app_only=True,
)
