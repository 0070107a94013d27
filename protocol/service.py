"""The process's dispatcher, as every transport serves it (the composition root).

    trace_calls -> log_calls -> alias resolution -> error results named -> tenant terms (quota,
              allow-list) -> result size cap -> governance (retired names, outdated inputs,
              deprecations) -> app-data delivery -> the deprecation notice -> TomTom's attribution
              -> the tool

An alias becomes a call to its target before the tenant's terms judge it, so an alias never
reaches a tool the tenant may not call. An error result of a tool a widget draws gets the
`_meta` a widget joins by (`tool`, `request_id`) outside everything that may answer one
(protocol.appdata). The notice is added to the answer before the app data is fitted around it,
and so is the attribution that ends every result showing TomTom data (tools.attribution).
Transports (HTTP, stdio, exec) build one with `build_dispatcher()` and hand it the call context
they made; nothing here depends on which transport asks.
"""

from __future__ import annotations

from governance.runtime import build_governance
from protocol.appdata import deliver_app_data, name_errors
from protocol.limits import cap_result_size
from protocol.tenancy import enforce_terms, filter_listing
from tools.attribution import attribute
from tools.dispatch import Dispatcher, log_calls, trace_calls
from tools.registry import default_registry


def build_dispatcher() -> Dispatcher:
    registry = default_registry()
    governance = build_governance({tool.name: tool for tool in registry})
    return Dispatcher(
        registry,
        interceptors=(
            trace_calls,
            log_calls,
            governance.resolve_alias,
            name_errors,
            enforce_terms,
            cap_result_size,
            governance.intercept,
            deliver_app_data,
            governance.annotate,
            attribute,
        ),
        listing_filters=(filter_listing, governance.filter_listing),
        refreshers=(governance.refresh_if_due,),
        probes={"governance": governance.readiness},
    )
