"""One stateless handshake-era JSON-RPC request, answered by the SDK's request kernel directly.

The SDK's stateless Streamable HTTP transport serves every POST as a session of one request:
a new transport with its memory streams, a `JSONRPCDispatcher`, a server task started in the
manager's task group, a task for the request and a Starlette response, all torn down again.
For a request whose answer is one JSON body (`json_response=True`) none of that carries
anything, and on this server it cost more CPU than a compact tool call's own work
(docs/adr/0002-official-sdk-low-level-server.md has the figures).

`single_request(message, protocol_version)` says whether a POST is that case: one JSON-RPC
request (not a notification or a response) at a handshake-era protocol version (or none),
read from the message the transport guard decoded (`protocol.body.parse_body`, the SDK's own
parser: the body is not decoded again). `answer`
then runs the SDK's single-exchange driver (`mcp.server.runner.serve_one`: the same
`ServerRunner` kernel, middleware, per-version validation and result serialisation every
transport uses) on a born-ready stateless connection, and maps a failure to its JSON-RPC error
exactly as the SDK's dispatcher does. Parsing uses the SDK's own `mcp_types` models, and so
do errors; a result, which the SDK has already validated and dumped for the request's version,
is encoded once by orjson inside the JSON-RPC 2.0 envelope (`jsonrpc`, `id`, `result`), or by
the SDK's `JSONRPCResponse` when an integer in it is beyond orjson's 64 bits.
Anything else (2026-07-28 requests, notifications, responses, a request whose envelope the
SDK's models refuse) is left to the SDK's transport, which owns those answers and reads the
body's bytes itself.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import anyio
import orjson
from mcp.server import Server
from mcp.server.connection import Connection
from mcp.server.runner import serve_one
from mcp.shared.dispatcher import CallOptions
from mcp.shared.exceptions import NoBackChannelError
from mcp.shared.jsonrpc_dispatcher import handler_exception_to_error_data
from mcp.shared.message import ServerMessageMetadata
from mcp.shared.transport_context import TransportContext
from mcp_types import (
    DEFAULT_NEGOTIATED_VERSION,
    ErrorData,
    JSONRPCError,
    JSONRPCRequest,
    JSONRPCResponse,
    RequestId,
    jsonrpc_message_adapter,
)
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from pydantic import TypeAdapter, ValidationError
from starlette.requests import Request

from core.events import SHORT_TEXT_LENGTH, clip, log
from core.operations import HandlerRaised
from protocol.evidence import already_refused

_ERROR = TypeAdapter(JSONRPCError)
_RESPONSE = TypeAdapter(JSONRPCResponse)


def single_request(message: Mapping[str, Any], protocol_version: str | None) -> JSONRPCRequest | None:
    """`message` as the SDK's request model when it is one JSON-RPC request this module
    answers, else None.

    `message` is the decoded body; `protocol_version` the `MCP-Protocol-Version` header: absent
    or a handshake-era revision. The message is validated as the SDK's transport validates a
    decoded body (`jsonrpc_message_adapter`), so what is taken here is what it would take.
    """
    if protocol_version is not None and protocol_version not in HANDSHAKE_PROTOCOL_VERSIONS:
        return None
    if "id" not in message or "method" not in message:
        return None
    try:
        request = jsonrpc_message_adapter.validate_python(message, by_name=False)
    except ValidationError:
        return None
    return request if isinstance(request, JSONRPCRequest) else None


@dataclass(slots=True)
class _OneRequest:
    """The `mcp.shared.dispatcher.DispatchContext` of a request answered with one JSON body.

    As in the SDK's JSON-response mode, the request-scoped channel has no wire: a server
    request cannot be sent (`NoBackChannelError`) and notifications and progress are dropped.
    """

    transport: TransportContext
    request_id: RequestId
    message_metadata: ServerMessageMetadata
    cancel_requested: anyio.Event = field(default_factory=anyio.Event)
    can_send_request: bool = False

    async def send_raw_request(
        self, method: str, params: Mapping[str, Any] | None, opts: CallOptions | None = None
    ) -> dict[str, Any]:
        raise NoBackChannelError(method)

    async def notify(self, method: str, params: Mapping[str, Any] | None, opts: CallOptions | None = None) -> None:
        return None

    async def progress(self, progress: float, total: float | None = None, message: str | None = None) -> None:
        return None


async def answer(
    server: Server[Any],
    request: Request,
    message: JSONRPCRequest,
    protocol_version: str | None,
    lifespan_state: Any,
    refused: Callable[[str, ErrorData], None] | None = None,
) -> bytes:
    """The JSON body answering `message`: its result, or its error as the SDK's dispatcher maps
    it (`MCPError` and validation errors by the SDK's ladder, anything else logged and code 0).

    An error is logged as `MCP request refused` by the server's `logged` middleware
    (protocol/evidence.py); one raised outside the middleware chain, which it did not see, is
    passed to `refused` (the method and the error) to be logged."""
    dctx = _OneRequest(
        transport=TransportContext(kind="streamable-http", can_send_request=False),
        request_id=message.id,
        message_metadata=ServerMessageMetadata(request_context=request, can_send_request=False),
    )
    connection = Connection.from_envelope(protocol_version or DEFAULT_NEGOTIATED_VERSION, None, None)
    try:
        result = await serve_one(
            server, dctx, message.method, message.params, connection=connection, lifespan_state=lifespan_state
        )
    except Exception as exc:
        error = handler_exception_to_error_data(exc)
        if error is None:
            log(HandlerRaised(method=clip(message.method, SHORT_TEXT_LENGTH)), exc_info=True)
            error = ErrorData(code=0, message=str(exc))
        if refused is not None and not already_refused(exc):
            refused(message.method, error)
        failure = JSONRPCError(jsonrpc="2.0", id=message.id, error=error)
        return _ERROR.dump_json(failure, by_alias=True, exclude_unset=True)
    # `result` is already the SDK's wire form (validated and dumped for this version): encoded
    # as is, without a second pass through the `JSONRPCResponse` model's serialiser, unless it
    # or the id holds an integer beyond 64 bits (JSON-RPC allows any), which only that one writes.
    try:
        return orjson.dumps({"jsonrpc": "2.0", "id": message.id, "result": result})
    except TypeError:
        success = JSONRPCResponse(jsonrpc="2.0", id=message.id, result=result)
        return _RESPONSE.dump_json(success, by_alias=True, exclude_unset=True)
