"""A TomTom API stand-in on loopback: canned answers by path, every request recorded.

Runs an asyncio HTTP/1.1 server (keep-alive, unless an answer says `Connection: close`; cached
response bytes) in a background thread, so a server under test, in this process or another, can
be pointed at it with TOMTOM_API_BASE_URL. Also used by the benchmarks, which need it to be fast.

    with TomTomStub() as stub:
        stub.route("GET", r"/search/2/geocode/.*", json_body={...})
        ... stub.requests[-1].api_key ...  # the `TomTom-Api-Key` header, or the `key` parameter

A route may also `respond` with a coroutine that writes to the connection itself (slowly,
partly, or not at all); tests/support/faults.py has the faults the client must survive.
"""

from __future__ import annotations

import asyncio
import json
import re
import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, unquote, unquote_plus, urlsplit


@dataclass
class RecordedRequest:
    method: str
    path: str
    """The path percent-decoded; `raw_path` is as it came."""
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: bytes
    raw_path: str = ""

    def param(self, name: str) -> str | None:
        values = self.query.get(name)
        return values[0] if values else None

    @property
    def api_key(self) -> str | None:
        """The key the request carried: its `TomTom-Api-Key` header (Orbis), else its `key` parameter."""
        return self.headers.get("tomtom-api-key") or self.param("key")

    def json(self) -> Any:
        return json.loads(self.body)


Responder = Callable[[asyncio.StreamWriter], Awaitable[None]]
"""Writes a whole answer (or a broken one) to the connection; may close it."""


@dataclass
class Route:
    method: str
    pattern: re.Pattern[str]
    response: bytes | Responder
    times: int | None = None  # answer this many times, then fall through to later routes
    query: re.Pattern[str] | None = None  # also match the query string, percent-decoded (`search`)


def _says_close(answer: bytes) -> bool:
    """Whether a canned answer's head has `Connection: close`."""
    head = answer.partition(b"\r\n\r\n")[0].lower()
    return b"\r\nconnection: close" in head


@dataclass
class TomTomStub:
    host: str = "127.0.0.1"
    port: int = 0
    record: bool = True
    requests: list[RecordedRequest] = field(default_factory=list)
    _routes: list[Route] = field(default_factory=list)
    _connections: set[asyncio.Task[None]] = field(default_factory=set)
    """The task serving each open connection, held here so that it lives until the connection
    ends. A responder that waits forever (a fault) on a connection its client has closed is
    otherwise reachable from nothing: the garbage collector would destroy it from whatever thread
    it runs in, and closing its transport there, outside the stub's loop, can lose another
    connection's read registration (a request that then never gets an answer)."""

    def route(
        self,
        method: str,
        pattern: str,
        *,
        json_body: Any = None,
        body: bytes | None = None,
        status: int = 200,
        headers: dict[str, str] | None = None,
        times: int | None = None,
        respond: Responder | None = None,
        query: str | None = None,
    ) -> None:
        """Answer requests whose path matches `pattern` (newest routes win); with `query`, only
        those whose percent-decoded query string also holds a match for it (`re.search`)."""
        wanted = re.compile(query) if query is not None else None
        if respond is not None:
            self._routes.insert(0, Route(method.upper(), re.compile(pattern), respond, times, wanted))
            return
        payload = body if body is not None else json.dumps(json_body).encode()
        head = [f"HTTP/1.1 {status} X", "Content-Type: application/json", f"Content-Length: {len(payload)}"]
        head += [f"{k}: {v}" for k, v in (headers or {}).items()]
        raw = ("\r\n".join(head) + "\r\n\r\n").encode() + payload
        self._routes.insert(0, Route(method.upper(), re.compile(pattern), raw, times, wanted))

    def clear(self) -> None:
        self.requests.clear()
        self._routes.clear()

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def _answer(self, method: str, path: str, query: str = "") -> bytes | Responder:
        for route in self._routes:
            if route.query is not None and not route.query.search(query):
                continue
            if route.method == method and route.pattern.fullmatch(path):
                if route.times is not None:
                    if route.times <= 0:
                        continue
                    route.times -= 1
                return route.response
        payload = json.dumps({"errorText": f"stub has no route for {method} {path}"}).encode()
        return b"HTTP/1.1 404 X\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s" % (
            len(payload),
            payload,
        )

    async def _serve_connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._connections.add(task)
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                lines = head.decode("latin-1").split("\r\n")
                method, target, _ = lines[0].split(" ", 2)
                headers: dict[str, str] = {}
                for line in lines[1:]:
                    if ":" in line:
                        name, value = line.split(":", 1)
                        name, value = name.strip().lower(), value.strip()
                        # a repeated header reads as HTTP combines one: its values joined by ", "
                        headers[name] = f"{headers[name]}, {value}" if name in headers else value
                length = int(headers.get("content-length", "0") or 0)
                body = await reader.readexactly(length) if length else b""
                parts = urlsplit(target)
                path = unquote(parts.path)
                if self.record:
                    self.requests.append(
                        RecordedRequest(
                            method, path, parse_qs(parts.query, keep_blank_values=True), headers, body, parts.path
                        )
                    )
                answer = self._answer(method, path, unquote_plus(parts.query))
                if isinstance(answer, bytes):
                    writer.write(answer)
                    await writer.drain()
                    if _says_close(answer):  # one request per connection, as the answer told the client
                        break
                else:
                    await answer(writer)
                    if writer.is_closing():
                        break
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.CancelledError):
            pass
        finally:
            writer.close()
            self._connections.discard(task)

    def __enter__(self) -> TomTomStub:
        ready = threading.Event()
        self._loop = asyncio.new_event_loop()

        def run() -> None:
            asyncio.set_event_loop(self._loop)
            server = self._loop.run_until_complete(asyncio.start_server(self._serve_connection, self.host, self.port))
            self.port = server.sockets[0].getsockname()[1]
            self._server = server
            ready.set()
            self._loop.run_forever()

        self._thread = threading.Thread(target=run, name="tomtom-stub", daemon=True)
        self._thread.start()
        ready.wait(5)
        return self

    def __exit__(self, *exc: object) -> None:
        async def shutdown() -> None:
            self._server.close()
            tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

        asyncio.run_coroutine_threadsafe(shutdown(), self._loop).result(5)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(5)
        self._loop.close()


def main() -> None:
    """`python -m tests.support.tomtom_stub PORT FILE.json` for the benchmarks: FILE lists routes,
    each `{"method", "pattern", "body"}` (text) or `"body_base64"` (bytes), optional `"headers"`."""
    import base64
    import sys

    stub = TomTomStub(port=int(sys.argv[1]), record=False)
    with open(sys.argv[2]) as file:
        routes = json.load(file)
    for route in routes:
        body = base64.b64decode(route["body_base64"]) if "body_base64" in route else route["body"].encode()
        stub.route(route["method"], route["pattern"], body=body, headers=route.get("headers"))
    with stub:
        print(f"stub listening on {stub.base_url}", flush=True)
        threading.Event().wait()


if __name__ == "__main__":
    main()
