"""The exchange events (core/exchange.py): what the MCP edge answered besides tool calls.

- `Session started`: the `logged` middleware, when an `initialize` is answered, with the client's
  name and version (`clientInfo`), the protocol revision agreed and the one asked for, whether
  its capabilities declared MCP Apps. Over HTTP its `session` is the label of the
  `Mcp-Session-Id` minted in that answer (protocol/http/endpoint.py), the key every later
  request of the session carries, so a session's timeline starts with it.
- `MCP request refused`: `logged`, for every request its chain answered with a JSON-RPC error
  (a method not served, parameters the SDK refused, a request before `initialize`, a handler
  that raised), on every transport; the single-request exchange (protocol/exchange.py) writes
  it too for a failure outside the chain (`refused_outside`).
- `Tools listed`: `listing_once` (protocol/handlers/tools.py), which holds the wire listing and
  the bytes each tool's entry costs (`WireListing`, worked out once per wire listing).

What none of them sees: bodies the `/mcp` guard answers before any JSON-RPC is read (a plain
HTTP status, a body that is not one JSON-RPC message), a request refused by sign-in (the OAuth
answer), and what the SDK's own transport refuses before its server runs (a 2026-07-28 request
whose envelope its ladder refuses, an `initialize` on that revision, a request with that
envelope on a handshake-era connection): those are answered, and counted by the request spans
when traces are on, but no line says so. Notifications are never answered, so never refused.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from typing import Any

from mcp.server.context import CallNext, ServerRequestContext
from mcp.shared.jsonrpc_dispatcher import handler_exception_to_error_data
from mcp_types import INTERNAL_ERROR, ErrorData
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from core.events import CLIENT_NAME_LENGTH, ERROR_TEXT_LENGTH, SHORT_TEXT_LENGTH, clip, log
from core.exchange import VERSION_LENGTH, RequestRefused, SessionStarted
from protocol.handlers.callers import ContextFactory
from protocol.identity import UNKNOWN, sanitise
from protocol.mcp_apps import declares_apps

_LOGGED = "_tomtom_mcp_refusal_logged"
"""The attribute `logged` sets on an exception it wrote a refusal for (so it is written once)."""


class ExchangeLog:
    """The `logged` middleware, over the transport's way to say who is calling."""

    __slots__ = ("make_context",)

    def __init__(self, make_context: ContextFactory) -> None:
        self.make_context = make_context

    async def logged(self, ctx: ServerRequestContext[Any], call_next: CallNext) -> Any:
        """Middleware: `Session started` for an `initialize` answered, `MCP request refused` for a
        request answered with a JSON-RPC error. A notification passes untouched."""
        if ctx.request_id is None:
            return await call_next(ctx)
        try:
            result = await call_next(ctx)
        except Exception as exc:
            self._refused(ctx, exc)
            raise
        if ctx.method == "initialize" and isinstance(result, Mapping):
            self._started(ctx, result)
        return result

    def _started(self, ctx: ServerRequestContext[Any], result: Mapping[str, Any]) -> None:
        context = self.make_context(ctx)
        params = ctx.params or {}
        info = params.get("clientInfo")
        info = info if isinstance(info, Mapping) else {}
        agreed = _version(result.get("protocolVersion"))
        requested = _version(params.get("protocolVersion"))
        log(
            SessionStarted(
                client=_text(info.get("name"), CLIENT_NAME_LENGTH) or UNKNOWN,
                client_version=_text(info.get("version"), VERSION_LENGTH),
                protocol_version=agreed,
                requested_version="" if requested == agreed else requested,
                transport=context.transport,
                apps="apps" if declares_apps(params.get("capabilities")) else "text",
                tenant=context.tenant,
                user_agent=context.user_agent,
                request_id=context.request_id,
                session=context.session,
            )
        )

    def _refused(self, ctx: ServerRequestContext[Any], exc: Exception) -> None:
        try:
            context = self.make_context(ctx)
        except Exception:  # the caller cannot even be named: the request is still answered
            return
        error = handler_exception_to_error_data(exc)
        if error is None:  # as the SDK answers it: code 0 before 2026-07-28, INTERNAL_ERROR then
            if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
                error = ErrorData(code=INTERNAL_ERROR, message="Internal server error")
            else:
                error = ErrorData(code=0, message=str(exc))
        log(
            RequestRefused(
                method=clip(ctx.method, SHORT_TEXT_LENGTH),
                code=error.code,
                client=context.client_name,
                protocol_version=context.protocol_version or "",
                transport=context.transport,
                tenant=context.tenant,
                request_id=context.request_id,
                session=context.session,
                error=_masked(error.message, context.secrets()),
            )
        )
        with contextlib.suppress(AttributeError, TypeError):  # a type without attributes of its own
            setattr(exc, _LOGGED, True)


def refused_outside(
    method: str,
    error: ErrorData,
    *,
    client: str,
    transport: str,
    protocol_version: str | None,
    tenant: str | None,
    session: str | None,
    secrets: list[str],
) -> None:
    """`MCP request refused` for a request that failed outside the middleware chain (so `logged`
    did not see it), named by what the transport knows of its caller."""
    log(
        RequestRefused(
            method=clip(method, SHORT_TEXT_LENGTH),
            code=error.code,
            client=clip(client, CLIENT_NAME_LENGTH),
            protocol_version=_version(protocol_version),
            transport=transport,
            tenant=tenant,
            session=session,
            error=_masked(error.message, secrets),
        )
    )


def already_refused(exc: BaseException) -> bool:
    """Whether `logged` wrote the refusal of this exception."""
    return bool(getattr(exc, _LOGGED, False))


def _text(value: Any, length: int) -> str:
    return clip(sanitise(value), length) if isinstance(value, str) else ""


def _version(value: Any) -> str:
    return _text(value, VERSION_LENGTH)


def _masked(message: str, secrets: list[str]) -> str:
    for secret in secrets:
        message = message.replace(secret, "***")
    return clip(message, ERROR_TEXT_LENGTH)
