"""The ASGI entry point: every HTTP request goes to Django, `/mcp` included.

`application` adds the ASGI lifespan, which Django's handler refuses: startup starts the MCP
transport's task group on the worker's event loop, shutdown stops it and closes the shared TomTom
connections (docs/adr/0011-mcp-as-a-django-view.md). Requests for `MCP_PATH` go to a Django
handler whose middleware are `MCP_MIDDLEWARE` (a subsequence of `MIDDLEWARE`: Host, security
headers, the common rules); every other path to the handler of the whole `MIDDLEWARE`. Both
resolve the same URLconf.
"""

from __future__ import annotations

import asyncio
import os
import re
from collections.abc import Sequence
from contextlib import closing
from typing import Any

import django
from asgiref.sync import SyncToAsync, sync_to_async
from django.conf import settings
from django.core import signals
from django.core.exceptions import RequestAborted
from django.core.handlers.asgi import ASGIHandler as DjangoASGIHandler
from django.core.handlers.asgi import get_script_prefix
from django.urls import set_script_prefix

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tomtom_mcp.settings")
django.setup(set_prefix=False)


def _request_thread_started() -> bool:
    """Whether this request has run thread-sensitive code (its own worker thread exists)."""
    context = SyncToAsync.thread_sensitive_context.get(None)
    return context is not None and context in SyncToAsync.context_to_thread_executor


class ASGIHandler(DjangoASGIHandler):
    """Django's ASGI handler, without the thread hops that guard nothing.

    Django sends `request_started` and closes the response (which sends `request_finished`)
    through `sync_to_async`, so every request starts a worker thread of its own just to run
    Django's receivers there (`reset_queries`, `close_old_connections`, `close_caches`). They act
    on the current thread's database connections: a request whose code never ran in a worker
    thread has none to close. This handler runs them on the event loop, whose thread holds no
    connections (Django refuses synchronous database access there), and closes the response in
    the request's worker thread when one was started, as Django does. Its middleware are the
    non-blocking subclasses of those `MIDDLEWARE` names (tomtom_mcp/middleware.py). Everything
    else, the URLconf, the middleware's behaviour and the views, is Django's own.
    """

    def __init__(self, middleware: Sequence[str] | None = None) -> None:
        self.middleware_names = list(settings.MIDDLEWARE if middleware is None else middleware)
        super().__init__()

    def load_middleware(self, is_async: bool = False) -> None:
        """Django's stack from `middleware` (by default `MIDDLEWARE`), each class swapped for its
        non-blocking subclass. Django's loader reads `settings.MIDDLEWARE` and resolves names with
        its module's `import_string`; both are swapped for the load only (at import, before any
        request, on one thread)."""
        from django.core.handlers import base

        from tomtom_mcp.middleware import NON_BLOCKING

        # The name `load_middleware` looks up in its module (absent from django-stubs' base).
        namespace = vars(base)
        load = namespace["import_string"]
        namespace["import_string"] = lambda path: load(NON_BLOCKING.get(path, path))
        configured = settings.MIDDLEWARE
        settings.MIDDLEWARE = self.middleware_names
        try:
            super().load_middleware(is_async)
        finally:
            namespace["import_string"] = load
            settings.MIDDLEWARE = configured

    async def handle(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        try:
            body_file = await self.read_body(receive)
        except RequestAborted:
            return
        with closing(body_file):
            set_script_prefix(get_script_prefix(scope))
            signals.request_started.send(sender=self.__class__, scope=scope)
            request, error_response = self.create_request(scope, body_file)
            if request is None:
                assert error_response is not None  # Django answers the request it cannot build
                await self.send_response(error_response, send)
                error_response.close()
                return
            response = await self._respond(request, receive, send)
            if response is None:  # the client went away first
                signals.request_finished.send(sender=self.__class__)
            elif _request_thread_started():
                await sync_to_async(response.close)()
            else:
                response.close()

    async def _respond(self, request: Any, receive: Any, send: Any) -> Any:
        """The view's response, sent; None when the client went away first (the view is cancelled)."""
        response = None
        try:
            async with asyncio.TaskGroup() as group:
                group.create_task(self.listen_for_disconnect(receive))
                response = await self.run_get_response(request)
                await self.send_response(response, send)
                raise _Sent
        except* (_Sent, RequestAborted):
            pass
        return response


class _Sent(Exception):
    """Ends the disconnect listener once the response is out."""


django_app = ASGIHandler()
mcp_app = ASGIHandler(settings.MCP_MIDDLEWARE)


def _mcp_path() -> re.Pattern[str]:
    from tools.mcp.http import mcp_route

    return re.compile(mcp_route(settings.MCP_PATH))


_MCP_PATH = _mcp_path()


def _handler(scope: dict[str, Any]) -> ASGIHandler:
    """`mcp_app` for `MCP_PATH` (below the script prefix, as Django resolves it), else `django_app`."""
    path, root = scope["path"], scope.get("root_path", "")
    if root and path.startswith(root):
        path = path[len(root) :]
    return mcp_app if _MCP_PATH.match(path.lstrip("/")) else django_app


async def _lifespan(receive: Any, send: Any) -> None:
    from tools.mcp.http import mcp_endpoint
    from tools.tomtom.client import close_shared_clients

    transports = mcp_endpoint().transports
    await receive()  # lifespan.startup
    await transports.start()
    await send({"type": "lifespan.startup.complete"})
    await receive()  # lifespan.shutdown
    await transports.stop()
    await close_shared_clients()
    await send({"type": "lifespan.shutdown.complete"})


async def application(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """Lifespan here, every HTTP request to Django."""
    if scope["type"] == "lifespan":
        await _lifespan(receive, send)
    elif scope["type"] == "http":
        await _handler(scope)(scope, receive, send)
    else:
        await django_app(scope, receive, send)
