"""Django's middleware, run on the event loop under ASGI.

Under ASGI, Django runs every hook of a synchronous middleware (`process_request`,
`process_view`, `process_response`) in a worker thread: one thread hop each, about 60 µs, and
the first hop of a request starts a thread of its own. The stock stack costs `/mcp` a dozen
hops per call, more than the call itself (docs/adr/0025-an-edge-without-patches.md). The hooks of
the middleware below never block (no database, file or network access), so they run inline;
the session middleware hops only to save a session, the static-files middleware only to open a
file. Under WSGI (`runserver`) each behaves exactly like the Django class it extends.

Under ASGI, `MCP_PATH` is served through `MCP_MIDDLEWARE` only, a subsequence of `MIDDLEWARE`
(tomtom_mcp/asgi.py): the browser-facing middleware cost `/mcp` more than 0.1 ms of CPU a call
and do nothing for a JSON-RPC client.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

from asgiref.sync import iscoroutinefunction, markcoroutinefunction, sync_to_async
from django.conf import settings
from django.contrib.auth.middleware import AuthenticationMiddleware as _AuthenticationMiddleware
from django.contrib.messages.middleware import MessageMiddleware as _MessageMiddleware
from django.contrib.sessions.middleware import SessionMiddleware as _SessionMiddleware
from django.core.exceptions import DisallowedHost
from django.http import HttpRequest, HttpResponse
from django.middleware.clickjacking import XFrameOptionsMiddleware as _XFrameOptionsMiddleware
from django.middleware.common import CommonMiddleware as _CommonMiddleware
from django.middleware.csrf import CsrfViewMiddleware as _CsrfViewMiddleware
from django.middleware.security import SecurityMiddleware as _SecurityMiddleware
from whitenoise.middleware import WhiteNoiseMiddleware as _WhiteNoiseMiddleware

from protocol.http import mcp_route, misdirected

NON_BLOCKING = {
    "django.middleware.security.SecurityMiddleware": "tomtom_mcp.middleware.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware": "tomtom_mcp.middleware.StaticFilesMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware": "tomtom_mcp.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware": "tomtom_mcp.middleware.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware": "tomtom_mcp.middleware.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware": "tomtom_mcp.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware": "tomtom_mcp.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware": "tomtom_mcp.middleware.XFrameOptionsMiddleware",
}
"""`MIDDLEWARE` names Django's classes (so Django's checks and operators see the usual stack); the
ASGI handler loads these subclasses in their place."""

_HOOKS = ("process_view", "process_exception", "process_template_response")


def is_subsequence(part: Sequence[str], whole: Sequence[str]) -> bool:
    """Whether every name of `part` is in `whole`, in the same order."""
    names = iter(whole)
    return all(name in names for name in part)


def _on_loop(hook: Callable[..., Any]) -> Callable[..., Any]:
    async def run(*args: Any) -> Any:
        return hook(*args)

    return markcoroutinefunction(run)


class NonBlocking:
    """Mixin for a Django middleware class (a `MiddlewareMixin`) whose hooks never block: given
    an asynchronous `get_response` (Django's middleware documentation: the stack is async), it
    is a coroutine function itself and runs its hooks on the event loop, in Django's order
    (request, view, exception, template response, response). Given a synchronous one, it is
    the Django class unchanged."""

    get_response: Callable[[HttpRequest], Any]

    def __init__(self, get_response: Callable[[HttpRequest], Any]) -> None:
        super().__init__(get_response)  # type: ignore[call-arg]  # MiddlewareMixin's, next in the MRO
        self.on_loop = iscoroutinefunction(get_response)
        if self.on_loop:
            markcoroutinefunction(self)
            for name in _HOOKS:
                hook = getattr(self, name, None)
                if hook is not None:
                    setattr(self, name, _on_loop(hook))  # the handler then calls it without a hop

    def __call__(self, request: HttpRequest) -> Any:
        if self.on_loop:
            return self._acall(request)
        return super().__call__(request)  # type: ignore[misc]  # MiddlewareMixin's

    async def _acall(self, request: HttpRequest) -> HttpResponse:
        response = self.process_request(request) if hasattr(self, "process_request") else None
        response = response or await self.get_response(request)
        if hasattr(self, "process_response"):
            response = await self._respond(request, response)
        return response

    async def _respond(self, request: HttpRequest, response: HttpResponse) -> HttpResponse:
        return self.process_response(request, response)  # type: ignore[attr-defined]  # checked by _acall


class SecurityMiddleware(NonBlocking, _SecurityMiddleware):
    pass


class CommonMiddleware(NonBlocking, _CommonMiddleware):
    pass


class CsrfViewMiddleware(NonBlocking, _CsrfViewMiddleware):
    """Non-blocking while the CSRF secret lives in a cookie (`CSRF_USE_SESSIONS` is off)."""


class AuthenticationMiddleware(NonBlocking, _AuthenticationMiddleware):
    """`request.user` is lazy: the database is read only when a view asks (in its own thread)."""


class MessageMiddleware(NonBlocking, _MessageMiddleware):
    """Messages go to a cookie or into the session; the session middleware saves it."""


class XFrameOptionsMiddleware(NonBlocking, _XFrameOptionsMiddleware):
    pass


class SessionMiddleware(NonBlocking, _SessionMiddleware):
    """The session is loaded lazily (by a view, in its thread); saving it hops to a thread."""

    async def _respond(self, request: HttpRequest, response: HttpResponse) -> HttpResponse:
        session = request.session
        if session.modified or settings.SESSION_SAVE_EVERY_REQUEST:
            return await sync_to_async(self.process_response)(request, response)
        return self.process_response(request, response)


class StaticFilesMiddleware(_WhiteNoiseMiddleware):
    """WhiteNoise (compressed, hash-named files from `collectstatic`), async-capable: looking a
    path up is a dictionary read on the event loop; only opening a file hops to a thread, and its
    body is an asynchronous iterator (`AsyncFileBody`). Django's ASGI handler warns once per
    response it must stream from a synchronous iterator (WhiteNoise's file), which logged a
    `py.warnings` line per static file; an asynchronous body is what Django's documentation asks
    for under ASGI ("Streaming responses"), and it reads the file a block at a time off the loop."""

    sync_capable = True
    async_capable = True

    def __init__(self, get_response: Callable[[HttpRequest], Any]) -> None:
        super().__init__(get_response)
        self.async_mode = iscoroutinefunction(get_response)
        if self.async_mode:
            markcoroutinefunction(self)

    def __call__(self, request: HttpRequest) -> Any:
        if self.async_mode:
            return self._acall(request)
        return super().__call__(request)

    async def _acall(self, request: HttpRequest) -> HttpResponse:
        if self.autorefresh:  # development: the file system is searched on every request
            static_file = await sync_to_async(self.find_file)(request.path_info)
        else:
            static_file = self.files.get(request.path_info)
        if static_file is not None:
            response = await sync_to_async(self.serve)(static_file, request)
            response.streaming_content = AsyncFileBody(response.file_to_stream)
            return response
        return await self.get_response(request)


class AsyncFileBody:
    """An open file (or none: a 304 or HEAD answer) as an asynchronous iterator of blocks, each
    read in a thread; the file is closed at its end, or when the response is closed (a client
    that went away), whichever comes first."""

    BLOCK = 64 * 1024

    def __init__(self, file: Any) -> None:
        self.file = file

    def __aiter__(self) -> Any:
        return self._blocks()

    async def _blocks(self) -> Any:
        if self.file is None:
            return
        try:
            while block := await sync_to_async(self.file.read, thread_sensitive=False)(self.BLOCK):
                yield block
        finally:
            self.close()

    def close(self) -> None:
        if self.file is not None:
            self.file.close()
            self.file = None


def names_a_host(request: HttpRequest) -> bool:
    """Whether the request says which host it asked for (the header `get_host()` would read)."""
    if settings.USE_X_FORWARDED_HOST and request.META.get("HTTP_X_FORWARDED_HOST"):
        return True
    return bool(request.META.get("HTTP_HOST"))


class McpHostMiddleware:
    """`MCP_PATH` with a `Host` Django refuses answers 421, the MCP transport's DNS-rebinding
    answer (a JSON-RPC error), instead of the 400 page Django's `CommonMiddleware` would make of
    it. The rule is Django's: `ALLOWED_HOSTS`, checked by `HttpRequest.get_host()`, the one Host
    check of every path; only the answer for `MCP_PATH` is this middleware's. A request to
    `MCP_PATH` that names no host at all is refused the same way: HTTP/1.1 requires `Host`
    (RFC 9112, section 3.2), and without one Django would judge the server's own address, which
    is always allowed, so a client that leaves the header out would pass a check meant to see the
    name it asked for. First in `MIDDLEWARE` and `MCP_MIDDLEWARE`, so it answers before any other
    middleware asks."""

    sync_capable = True
    async_capable = True

    def __init__(self, get_response: Callable[[HttpRequest], Any]) -> None:
        self.get_response = get_response
        self.mcp_path = re.compile(mcp_route(settings.MCP_PATH))
        self.on_loop = iscoroutinefunction(get_response)
        if self.on_loop:
            markcoroutinefunction(self)

    def _misdirected(self, request: HttpRequest) -> HttpResponse | None:
        if not self.mcp_path.match(request.path_info.lstrip("/")):
            return None
        if not names_a_host(request):
            return misdirected()
        try:
            request.get_host()
        except DisallowedHost:
            return misdirected()
        return None

    def __call__(self, request: HttpRequest) -> Any:
        if self.on_loop:
            return self._acall(request)
        return self._misdirected(request) or self.get_response(request)

    async def _acall(self, request: HttpRequest) -> HttpResponse:
        return self._misdirected(request) or await self.get_response(request)
