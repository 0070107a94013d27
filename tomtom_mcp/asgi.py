"""The ASGI entry point: every HTTP request goes to Django, `/mcp` included.

`application` adds the ASGI lifespan, which Django's handler refuses: startup starts the MCP
transport's task group on the worker's event loop and freezes what the worker built (`gc.freeze`,
docs/adr/0033-geocode-cpu.md), shutdown stops it and closes the shared TomTom connections
(docs/adr/0025-an-edge-without-patches.md). Requests for `MCP_PATH` go to a Django handler whose
middleware are `MCP_MIDDLEWARE` (a subsequence of `MIDDLEWARE`: Host, security headers, the
common rules); every other path to the handler of the whole `MIDDLEWARE`. Both resolve the same
URLconf.
"""

from __future__ import annotations

import asyncio
import gc
import os
import re
from collections.abc import Callable, Sequence
from contextlib import closing
from typing import Any

import django
from asgiref.sync import SyncToAsync, async_to_sync, iscoroutinefunction, sync_to_async
from django.apps import apps
from django.conf import settings
from django.core import signals
from django.core.exceptions import ImproperlyConfigured, MiddlewareNotUsed, RequestAborted
from django.core.handlers.asgi import ASGIHandler as DjangoASGIHandler
from django.core.handlers.asgi import get_script_prefix
from django.core.handlers.exception import convert_exception_to_response
from django.urls import set_script_prefix
from django.utils.module_loading import import_string

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tomtom_mcp.settings")
if not apps.ready:
    # Set up once per process. The console script's `serve` has set Django up before uvicorn
    # imports this module, and a second `django.setup()` would configure logging again,
    # dropping the handlers the apps added when they became ready (analytics' live ingestion).
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
    the request's worker thread when one was started, as Django does.

    Its middleware are the ones named in `middleware` (`MIDDLEWARE`, or `MCP_MIDDLEWARE` for
    `MCP_PATH`), each Django class replaced by its non-blocking subclass
    (tomtom_mcp/middleware.py), stacked by `load_middleware` without touching any setting or
    Django module. Everything else, the URLconf, the middleware's behaviour and the views, is
    Django's own.
    """

    def __init__(self, middleware: Sequence[str]) -> None:
        self.middleware = tuple(middleware)
        self.layers: list[Any] = []
        """The middleware instances, outermost first (what `load_middleware` built)."""
        super().__init__()

    def load_middleware(self, is_async: bool = False) -> None:
        """The stack of `self.middleware` (names as in `MIDDLEWARE`), each class replaced by its
        non-blocking subclass, built as Django's middleware documentation describes a stack.

        Every factory is called once with the next layer inwards (a coroutine function unless
        the factory is sync-only, which then gets a synchronous one and runs in the request's
        thread); `MiddlewareNotUsed` leaves a factory out; exceptions become responses between
        layers; `process_view` hooks run outermost first, `process_template_response` and
        `process_exception` innermost first. Django's own loader reads `settings.MIDDLEWARE`, the
        one list it knows; this one reads `self.middleware` and nothing global. What it hands
        Django's request path (the stack, its innermost layer and the hook lists, which that path
        reads by private names) is pinned by tests/test_asgi_handler.py
        (docs/adr/0025-an-edge-without-patches.md).
        """
        from tomtom_mcp.middleware import NON_BLOCKING  # needs the app registry: imported once set up

        if not is_async:
            raise ImproperlyConfigured("tomtom_mcp.asgi.ASGIHandler serves ASGI only (its stack is asynchronous).")
        view_hooks: list[Any] = []
        template_hooks: list[Any] = []
        exception_hooks: list[Any] = []
        layers: list[Any] = []
        # The innermost layer is Django's: resolve the URL, run the view hooks and the view.
        inner = self._get_response_async  # type: ignore[attr-defined]  # not in django-stubs
        get_response: Callable[[Any], Any] = convert_exception_to_response(inner)
        for name in reversed(self.middleware):
            factory = import_string(NON_BLOCKING.get(name, name))
            on_loop = getattr(factory, "async_capable", False)
            if not on_loop and not getattr(factory, "sync_capable", True):
                raise ImproperlyConfigured(f"Middleware {name} is neither sync_capable nor async_capable.")
            try:
                middleware = factory(get_response if on_loop else async_to_sync(get_response))
            except MiddlewareNotUsed:
                continue
            if middleware is None:
                raise ImproperlyConfigured(f"Middleware factory {name} returned None.")
            if hasattr(middleware, "process_view"):
                view_hooks.insert(0, _awaitable(middleware.process_view))
            if hasattr(middleware, "process_template_response"):
                template_hooks.append(_awaitable(middleware.process_template_response))
            if hasattr(middleware, "process_exception"):  # Django runs these in the request's thread
                exception_hooks.append(_synchronous(middleware.process_exception))
            get_response = convert_exception_to_response(middleware)
            if not on_loop:
                get_response = sync_to_async(get_response, thread_sensitive=True)
            layers.insert(0, middleware)
        self._view_middleware = view_hooks
        self._template_response_middleware = template_hooks
        self._exception_middleware = exception_hooks
        self.layers = layers
        self._middleware_chain = get_response  # set last: Django reads it as "loaded"

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


def _awaitable(hook: Callable[..., Any]) -> Callable[..., Any]:
    """`hook` as a coroutine function: itself when it is one, else run in the request's thread."""
    return hook if iscoroutinefunction(hook) else sync_to_async(hook, thread_sensitive=True)


def _synchronous(hook: Callable[..., Any]) -> Callable[..., Any]:
    """`hook` as a plain function (Django calls exception hooks from the request's thread)."""
    return async_to_sync(hook) if iscoroutinefunction(hook) else hook


django_app = ASGIHandler(settings.MIDDLEWARE)
mcp_app = ASGIHandler(settings.MCP_MIDDLEWARE)


def _mcp_path() -> re.Pattern[str]:
    from protocol.http import mcp_route

    return re.compile(mcp_route(settings.MCP_PATH))


_MCP_PATH = _mcp_path()


def _handler(scope: dict[str, Any]) -> ASGIHandler:
    """`mcp_app` for `MCP_PATH` (below the script prefix, as Django resolves it), else `django_app`."""
    path, root = scope["path"], scope.get("root_path", "")
    if root and path.startswith(root):
        path = path[len(root) :]
    return mcp_app if _MCP_PATH.match(path.lstrip("/")) else django_app


async def _lifespan(receive: Any, send: Any) -> None:
    from protocol.http import mcp_endpoint
    from protocol.server import log_server_started
    from tools.tomtom.client import close_shared_clients

    transports = mcp_endpoint().transports
    await receive()  # lifespan.startup
    await transports.start()
    # What the worker built to serve (Django, the tools, the SDK's models) lives as long as it
    # does: moved out of the collector's generations, a full collection no longer walks it.
    gc.collect()
    gc.freeze()
    await send({"type": "lifespan.startup.complete"})
    log_server_started("http")
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
