"""The process's dispatcher, as every transport serves it (the composition root).

    log_calls -> tenant terms (quota, allow-list) -> result size cap -> governance (retired names, outdated inputs)
              -> app-data delivery -> the tool

Transports (HTTP, stdio, exec) build one with `build_dispatcher()` and hand it the call
context they made; nothing here depends on which transport asks.
"""

from __future__ import annotations

from tools.dispatch import Dispatcher, log_calls
from tools.governance.runtime import build_governance
from tools.mcp.appdata import deliver_app_data
from tools.mcp.limits import cap_result_size
from tools.registry import default_registry
from tools.tenancy import enforce_terms, filter_listing


def build_dispatcher() -> Dispatcher:
    governance = build_governance()
    return Dispatcher(
        default_registry(),
        interceptors=(log_calls, enforce_terms, cap_result_size, governance.intercept, deliver_app_data),
        listing_filters=(governance.filter_listing, filter_listing),
        refreshers=(governance.refresh_if_due,),
        probes={"governance": governance.readiness},
    )
