"""The ASGI handler builds its own middleware stack (tomtom_mcp/asgi.py), touching no setting
and no Django module, and Django's request path runs every hook of it as documented.

Django offers no public way to build a handler from a list other than `MIDDLEWARE`;
`ASGIHandler.load_middleware` hands Django's request path the stack, its innermost layer and
the hook lists by the private names that path reads (docs/adr/0025-an-edge-without-patches.md).
The hook tests below fail when a Django upgrade renames them; the thread test when asgiref's
per-request executor moves.
"""

from __future__ import annotations

import threading
from typing import Any
from unittest import mock

import django.core.handlers.base
import pytest
from asgiref.sync import markcoroutinefunction
from django.conf import LazySettings, settings
from django.core.exceptions import MiddlewareNotUsed
from django.core.signals import request_finished
from django.http import HttpRequest, HttpResponse
from django.template import engines
from django.template.response import SimpleTemplateResponse
from django.urls import path
from django.utils.deprecation import MiddlewareMixin
from django.utils.module_loading import import_string

from tomtom_mcp import middleware
from tomtom_mcp.asgi import ASGIHandler, django_app, mcp_app

HERE = __name__
CALLS: list[str] = []


def ok(request: HttpRequest) -> HttpResponse:
    CALLS.append("view")
    return HttpResponse("ok")


def fails(request: HttpRequest) -> HttpResponse:
    raise ValueError("the view failed")


def rendered(request: HttpRequest) -> SimpleTemplateResponse:
    return SimpleTemplateResponse(engines["django"].from_string("rendered"))


THREADS: list[tuple[str, int]] = []


def in_a_thread(request: HttpRequest) -> HttpResponse:
    THREADS.append(("view", threading.get_ident()))
    return HttpResponse("threaded")


async def on_the_loop(request: HttpRequest) -> HttpResponse:
    THREADS.append(("view", threading.get_ident()))
    return HttpResponse("on the loop")


urlpatterns = [
    path("ok", ok),
    path("fails", fails),
    path("fails-unanswered", fails),
    path("rendered", rendered),
    path("in-a-thread", in_a_thread),
    path("on-the-loop", on_the_loop),
]


class Recording(MiddlewareMixin):
    """Records every hook Django documents, under its class name; routes to this module."""

    def process_request(self, request: HttpRequest) -> None:
        request.urlconf = HERE
        CALLS.append(f"{type(self).__name__}.request")

    def process_view(self, request: HttpRequest, view: Any, args: Any, kwargs: Any) -> None:
        CALLS.append(f"{type(self).__name__}.view")

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        CALLS.append(f"{type(self).__name__}.exception")
        answers = isinstance(self, Inner) and not request.path.endswith("unanswered")
        return HttpResponse("handled", status=503) if answers else None

    def process_template_response(self, request: HttpRequest, response: Any) -> Any:
        CALLS.append(f"{type(self).__name__}.template")
        return response

    def process_response(self, request: HttpRequest, response: HttpResponse) -> HttpResponse:
        CALLS.append(f"{type(self).__name__}.response")
        return response


class Outer(Recording):
    pass


class Inner(Recording):
    pass


class SyncOnly:
    """A synchronous-only middleware: it gets a synchronous `get_response` and runs in a thread."""

    sync_capable = True
    async_capable = False

    def __init__(self, get_response: Any) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        CALLS.append("SyncOnly")
        response = self.get_response(request)
        response["X-Sync-Only"] = "yes"
        return response


class Routing:
    """Async-only: routes to this module's URLconf, and nothing else."""

    sync_capable = False
    async_capable = True

    def __init__(self, get_response: Any) -> None:
        self.get_response = get_response
        markcoroutinefunction(self)

    async def __call__(self, request: HttpRequest) -> HttpResponse:
        request.urlconf = HERE
        return await self.get_response(request)


class Unused:
    def __init__(self, get_response: Any) -> None:
        raise MiddlewareNotUsed


observed: dict[str, Any] = {}


class Probe:
    """Looks at the settings and Django's loader module while the stack is being built."""

    sync_capable = False
    async_capable = True

    def __init__(self, get_response: Any) -> None:
        observed["MIDDLEWARE"] = list(settings.MIDDLEWARE)
        observed["import_string"] = vars(django.core.handlers.base)["import_string"]
        self.get_response = get_response

    async def __call__(self, request: HttpRequest) -> HttpResponse:
        return await self.get_response(request)


STACK = [f"{HERE}.Outer", f"{HERE}.Unused", f"{HERE}.SyncOnly", f"{HERE}.Inner"]


async def get(handler: ASGIHandler, url: str) -> tuple[int, dict[str, str], bytes]:
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "GET",
        "scheme": "http",
        "path": url,
        "raw_path": url.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": [(b"host", b"127.0.0.1")],
        "client": ("127.0.0.1", 5000),
        "server": ("127.0.0.1", 8000),
    }
    messages = [{"type": "http.request", "body": b"", "more_body": False}]
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        if messages:
            return messages.pop()
        await __import__("asyncio").sleep(3600)
        raise AssertionError("unreachable")

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    await handler(scope, receive, send)
    headers = {k.decode().lower(): v.decode() for k, v in sent[0]["headers"]}
    return sent[0]["status"], headers, b"".join(m.get("body", b"") for m in sent[1:])


@pytest.fixture
def handler() -> ASGIHandler:
    CALLS.clear()
    return ASGIHandler(STACK)


def test_each_handler_stacks_the_non_blocking_classes_of_its_own_list():
    expected = [import_string(middleware.NON_BLOCKING.get(name, name)) for name in settings.MCP_MIDDLEWARE]
    assert [type(layer) for layer in mcp_app.layers] == expected
    assert [type(layer) for layer in mcp_app.layers] == [
        middleware.McpHostMiddleware,
        middleware.SecurityMiddleware,
        middleware.CommonMiddleware,
    ]
    assert [type(layer) for layer in django_app.layers] == [
        import_string(middleware.NON_BLOCKING.get(name, name)) for name in settings.MIDDLEWARE
    ]
    assert all(layer.on_loop for layer in django_app.layers if isinstance(layer, middleware.NonBlocking))


def test_building_a_stack_sets_no_setting_and_patches_no_django_module():
    configured = list(settings.MIDDLEWARE)
    with mock.patch.object(LazySettings, "__setattr__", side_effect=AssertionError("a setting was set")):
        built = ASGIHandler([f"{HERE}.Probe", *settings.MCP_MIDDLEWARE])
    assert observed == {"MIDDLEWARE": configured, "import_string": import_string}
    assert [type(layer).__name__ for layer in built.layers][:2] == ["Probe", "McpHostMiddleware"]


def test_unused_middleware_are_left_out_and_the_others_kept_in_order(handler):
    assert [type(layer) for layer in handler.layers] == [Outer, SyncOnly, Inner]


async def test_request_view_and_response_hooks_run_in_the_documented_order(handler):
    status, headers, body = await get(handler, "/ok")
    assert (status, body, headers["x-sync-only"]) == (200, b"ok", "yes")
    assert CALLS == [
        "Outer.request",
        "SyncOnly",
        "Inner.request",
        "Outer.view",
        "Inner.view",
        "view",
        "Inner.response",
        "Outer.response",
    ]


async def test_exception_hooks_run_innermost_first(handler):
    status, _, body = await get(handler, "/fails")
    assert (status, body) == (503, b"handled")
    assert [c for c in CALLS if c.endswith(".exception")] == ["Inner.exception"]  # Inner answered: Outer not asked


async def test_template_response_hooks_run_innermost_first_before_rendering(handler):
    status, _, body = await get(handler, "/rendered")
    assert (status, body) == (200, b"rendered")
    assert [c for c in CALLS if c.endswith(".template")] == ["Inner.template", "Outer.template"]


async def test_an_exception_no_hook_answers_becomes_djangos_500(handler):
    status, _, _ = await get(handler, "/fails-unanswered")
    assert status == 500
    assert [c for c in CALLS if c.endswith(".exception")] == ["Inner.exception", "Outer.exception"]


def test_a_handler_is_asynchronous_only():
    with pytest.raises(Exception, match="ASGI only"):
        ASGIHandler([]).load_middleware(is_async=False)


async def test_request_finished_runs_in_the_requests_thread_only_when_it_has_one():
    """Django's receivers close the current thread's database connections: a request whose view
    ran in a worker thread is finished there, as Django does; one that never left the event
    loop is finished on it, with no hop (tomtom_mcp.asgi._request_thread_started reads asgiref's
    per-request executor)."""
    handler = ASGIHandler([f"{HERE}.Routing"])

    def finished(**kwargs: Any) -> None:
        THREADS.append(("finished", threading.get_ident()))

    THREADS.clear()
    request_finished.connect(finished)
    try:
        assert (await get(handler, "/in-a-thread"))[2] == b"threaded"
        assert (await get(handler, "/on-the-loop"))[2] == b"on the loop"
    finally:
        request_finished.disconnect(finished)
    loop = threading.get_ident()
    (_, worker), finished_threaded, *on_loop = THREADS
    assert worker != loop
    assert [finished_threaded, *on_loop] == [("finished", worker), ("view", loop), ("finished", loop)]


async def test_each_worker_says_it_started_with_its_version_and_simplifier(caplog):
    """One `Server started` line per worker, at the end of its lifespan startup: an operator sees
    which version serves and whether it runs the compiled kernel or the slower numpy fallback."""
    from tests.support.logs import fields
    from tomtom_mcp.asgi import application

    messages = iter([{"type": "lifespan.startup"}, {"type": "lifespan.shutdown"}])
    sent = []

    async def receive():
        return next(messages)

    async def send(message):
        sent.append(message["type"])

    with caplog.at_level("INFO", logger="tomtom_mcp.server"):
        await application({"type": "lifespan"}, receive, send)
    started = [record for record in caplog.records if record.getMessage() == "Server started"]
    assert sent == ["lifespan.startup.complete", "lifespan.shutdown.complete"]
    assert [fields(record) for record in started] == [
        {"version": "0.1.0", "transport": "http", "simplifier": "compiled kernel"}
    ]
