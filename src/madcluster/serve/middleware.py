"""The server's ASGI middleware, outermost first: the bearer token, the body and concurrency
limits (with gzip bodies and the memory given back after large ones), the request metrics."""

from __future__ import annotations

import asyncio
import hmac
import json
import logging
import time
import zlib
from typing import Any

from starlette.routing import Match
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from madcluster.serve.limits import (
    DEFAULT_BODY_SECONDS,
    DEFAULT_MAX_CONCURRENT,
    DEFAULT_MAX_ROWS,
)
from madcluster.serve.metrics import ServerMetrics

logger = logging.getLogger("madcluster.serve")
JSON_TYPES = (b"application/json",)
TRIM_BYTES = (
    1 << 20
)  # after a body this large, once no request is in flight, free memory back to the system
OPEN_PATHS = ("/health",)  # answered without the bearer token (load balancers' probes)


class Measure:
    """ASGI middleware: each request's count and latency by route template (pure ASGI: the
    ``@app.middleware`` form costs a task and a queue per request)."""

    def __init__(self, app: ASGIApp, metrics: ServerMetrics) -> None:
        self.app, self.metrics = app, metrics

    def __getattr__(self, name: str) -> Any:
        return getattr(self.app, name)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        start, status = time.perf_counter(), 500

        async def sending(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, sending)
        finally:
            endpoint = getattr(scope.get("route"), "path", None) or self._plain_route(scope)
            self.metrics.observe_request(
                endpoint, scope.get("method", ""), status, time.perf_counter() - start
            )

    def _plain_route(self, scope: Scope) -> str:
        """The path of the plain Starlette route a request matched (``/docs``, ``/openapi.json``:
        FastAPI sets ``scope["route"]`` for its API routes only), else ``unmatched`` (a 404)."""
        for route in getattr(self.app, "routes", ()):
            try:
                match, _ = route.matches(scope)
            except (KeyError, TypeError):
                continue
            if match == Match.FULL:
                return getattr(route, "path", "unmatched")
        return "unmatched"


class BodyLimit:
    """ASGI middleware, before the app reads a request: a body over ``max_bytes`` or of more than
    ``max_rows`` rows gets 413; over ``max_concurrent`` requests in flight, or rows in flight over
    twice ``max_rows``, get 503 (so a few large requests cannot take the server's memory); a JSON
    body sent with another content type (``curl -d`` sends a form type) is read as JSON."""

    def __init__(
        self,
        app: ASGIApp,
        max_bytes: int,
        max_rows: int = DEFAULT_MAX_ROWS,
        max_concurrent: int = DEFAULT_MAX_CONCURRENT,
        body_seconds: float = DEFAULT_BODY_SECONDS,
    ) -> None:
        self.app, self.max_bytes, self.max_rows, self.max_concurrent = (
            app,
            max_bytes,
            max_rows,
            max_concurrent,
        )
        self.body_seconds = body_seconds
        self.in_flight = self.rows_in_flight = (
            0  # the event loop runs one coroutine step at a time: no lock
        )

    def __getattr__(self, name: str) -> Any:  # routes, state... of the wrapped FastAPI app
        return getattr(self.app, name)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or [])
        declared = headers.get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.max_bytes:
            await _reply(
                send,
                413,
                f"request body over the limit of {self.max_bytes} bytes (--max-body-bytes); send "
                "fewer rows per request",
            )
            return
        chunks, size, more = [], 0, True
        deadline = asyncio.get_running_loop().time() + self.body_seconds
        while more:
            try:  # a client that declares more than it sends must not hold a worker
                message = await asyncio.wait_for(
                    receive(), max(deadline - asyncio.get_running_loop().time(), 0.001)
                )
            except asyncio.TimeoutError:
                expected = f" of the {declared.decode()} declared" if declared is not None else ""
                logger.warning(
                    "408 for %s %s: %d bytes%s after %g s",
                    scope.get("method"),
                    scope.get("path"),
                    size,
                    expected,
                    self.body_seconds,
                )
                await _reply(
                    send,
                    408,
                    f"request body not complete after {self.body_seconds:g} s (--body-timeout): "
                    f"{size} bytes received{expected}",
                )
                return
            if message["type"] == "http.disconnect":
                return
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_bytes:
                await _reply(
                    send,
                    413,
                    f"request body over the limit of {self.max_bytes} bytes (--max-body-bytes); "
                    "send fewer rows per request",
                )
                return
            chunks.append(chunk)
            more = message.get("more_body", False)
        body = b"".join(chunks)
        if headers.get(b"content-encoding", b"").lower() == b"gzip" or body[:2] == b"\x1f\x8b":
            body, problem = gunzip(body, self.max_bytes)
            if problem is not None:
                await _reply(send, problem[0], problem[1])
                return
            scope = {
                **scope,
                "headers": [(k, v) for k, v in scope["headers"] if k != b"content-encoding"],
            }
            headers = dict(scope["headers"])
        rows = count_rows(body) if scope.get("method") == "POST" else 0
        if rows > self.max_rows:
            await _reply(
                send,
                413,
                f"{rows} rows in one request, over the limit of {self.max_rows} (--max-rows); "
                "send fewer rows per request",
            )
            return
        if self.in_flight >= self.max_concurrent or (
            rows and self.rows_in_flight + rows > 2 * self.max_rows
        ):
            await _reply(
                send,
                503,
                f"server busy: {self.in_flight} requests ({self.rows_in_flight} rows) in flight, "
                "the limit is "
                f"{self.max_concurrent} requests (--max-concurrent) and {2 * self.max_rows} rows "
                "(2 x --max-rows); retry shortly",
                retry_after=1,
            )
            return
        content_type = headers.get(b"content-type", b"")
        if (
            scope.get("method") == "POST"
            and not content_type.startswith(JSON_TYPES)
            and body.lstrip()[:1] in (b"{", b"[")
        ):
            scope = {
                **scope,
                "headers": [(k, v) for k, v in scope["headers"] if k != b"content-type"]
                + [(b"content-type", b"application/json")],
            }
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        self.in_flight += 1
        self.rows_in_flight += rows
        try:
            await self.app(scope, replay, send)
        finally:
            self.in_flight -= 1
            self.rows_in_flight -= rows
            if len(body) >= TRIM_BYTES and self.in_flight == 0:
                # a burst of large requests left freed arrays in the allocator's arenas
                trim_memory()


def gunzip(body: bytes, max_bytes: int) -> tuple[bytes, tuple[int, str] | None]:
    """A gzip body decompressed, refused past ``max_bytes`` decompressed (413) or when it is not
    valid gzip (400): ``(body, None)`` or ``(b"", (status, message))``."""
    inflate = zlib.decompressobj(16 + zlib.MAX_WBITS)
    try:
        out = inflate.decompress(body, max_bytes + 1)
    except zlib.error as exc:
        why = (
            "the request body is gzip-compressed (Content-Encoding: gzip or its magic bytes) "
            f"but does not decompress: {exc}"
        )
        return b"", (400, why)
    if len(out) > max_bytes or inflate.unconsumed_tail:
        return b"", (
            413,
            f"the gzip body decompresses to over the limit of {max_bytes} bytes (--max-body-bytes)",
        )
    if not inflate.eof:
        return b"", (
            400,
            "the request body is gzip-compressed but ends early (a truncated gzip stream)",
        )
    return out, None


_TRIM: list[Any] = []  # libc's malloc_trim, looked up once (None where there is no glibc)


def trim_memory() -> bool:
    """Give freed heap memory back to the system (glibc's ``malloc_trim``): after bursts of large
    requests the server's RSS stayed at 1.1 GB with 0.4 GB in use (docs/serving.md). False where
    unavailable."""
    if not _TRIM:
        import ctypes
        import ctypes.util

        try:
            _TRIM.append(ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").malloc_trim)
        except (OSError, AttributeError):
            _TRIM.append(None)
    if _TRIM[0] is None:
        return False
    _TRIM[0](0)
    return True


class BearerToken:
    """ASGI middleware, outermost: every request but ``GET /health`` needs ``Authorization:
    Bearer TOKEN`` (``--token`` or ``$MADCLUSTER_TOKEN``); others get 401 and a log line naming the
    client. Checked before the body is read, so a client without the token holds nothing."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app, self.expected = app, f"Bearer {token}".encode()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.app, name)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("path") in OPEN_PATHS:
            await self.app(scope, receive, send)
            return
        given = dict(scope.get("headers") or []).get(b"authorization")
        if given is not None and hmac.compare_digest(given, self.expected):
            await self.app(scope, receive, send)
            return
        client = scope.get("client") or ("?", 0)
        why = "no bearer token" if given is None else "a wrong bearer token"
        logger.warning(
            "401 for %s %s from %s:%s: %s",
            scope.get("method"),
            scope.get("path"),
            client[0],
            client[1],
            why,
        )
        await _reply(
            send,
            401,
            f"{why}: send Authorization: Bearer <token> (the server's --token or "
            "$MADCLUSTER_TOKEN)",
            extra=[(b"www-authenticate", b"Bearer")],
        )


def count_rows(body: bytes) -> int:
    """Rows in a ``{"rows": [[...], ...], "columns": [...]}`` body without parsing it: its ``[``
    less the outer list's and the columns' (column names holding ``[`` count too: an upper
    bound)."""
    brackets = body.count(b"[")
    return max(0, brackets - 1 - (b'"columns"' in body))


async def _reply(
    send: Send,
    status: int,
    message: str,
    retry_after: int | None = None,
    extra: list[tuple[bytes, bytes]] | None = None,
) -> None:
    payload = json.dumps({"error": message}).encode()
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(payload)).encode()),
    ]
    if retry_after is not None:
        headers.append((b"retry-after", str(retry_after).encode()))
    headers += extra or []
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": payload})


__all__ = ["BearerToken", "BodyLimit", "Measure", "count_rows", "gunzip", "trim_memory"]
