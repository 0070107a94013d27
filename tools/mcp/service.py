"""The process's dispatcher, as every transport serves it (the composition root).

    trace_calls -> log_calls -> alias resolution -> tenant terms (quota, allow-list) -> result size cap
              -> governance (retired names, outdated inputs, deprecations) -> app-data delivery
              -> the deprecation notice -> the tool

An alias becomes a call to its target before the tenant's terms judge it, so an alias never
reaches a tool the tenant may not call. The notice is added to the answer before the app data
is fitted around it. Transports (HTTP, stdio, exec) build one with `build_dispatcher()` and hand
it the call context they made; nothing here depends on which transport asks.
"""

from __future__ import annotations

from tools.dispatch import Dispatcher, log_calls, trace_calls
from tools.governance.runtime import build_governance
from tools.mcp.appdata import deliver_app_data
from tools.mcp.limits import cap_result_size
from tools.registry import default_registry
from tools.tenancy import enforce_terms, filter_listing


def build_dispatcher() -> Dispatcher:
    registry = default_registry()
    governance = build_governance({tool.name: tool for tool in registry})
    return Dispatcher(
        registry,
        interceptors=(
            trace_calls,
            log_calls,
            governance.resolve_alias,
            enforce_terms,
            cap_result_size,
            governance.intercept,
            deliver_app_data,
            governance.annotate,
        ),
        listing_filters=(governance.filter_listing, filter_listing),
        refreshers=(governance.refresh_if_due,),
        probes={"governance": governance.readiness},
    )
