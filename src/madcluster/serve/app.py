"""The FastAPI application of ``madcluster serve`` (see the package docstring for endpoints)."""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel, Field
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from madcluster.exceptions import MADClusterError
from madcluster.serve.fast_updates import FastStreamUpdates, update_answer
from madcluster.serve.limits import DEFAULT_MAX_BODY_BYTES, DEFAULT_MAX_CONCURRENT, DEFAULT_MAX_ROWS
from madcluster.serve.metrics import ServerMetrics
from madcluster.serve.registry import Conflict, NotFound, StreamStore, rows_array

JSON_TYPES = (b"application/json",)
INLINE_ROWS = 16  # stream updates of at most this many rows run on the event loop


class RowsRequest(BaseModel):
    rows: list[list[float]] = Field(description="rows of the series, oldest first, one number per column")
    columns: list[str] | None = Field(default=None, description="column names of the rows (any order)")


class StreamRequest(RowsRequest):
    model: str | None = Field(default=None, description="model of a new stream (default: the stream's name, or the only model)")


def create_app(
    store: StreamStore, max_body_bytes: int = DEFAULT_MAX_BODY_BYTES, max_rows: int = DEFAULT_MAX_ROWS,
    max_concurrent: int = DEFAULT_MAX_CONCURRENT,
) -> FastAPI:
    """The app for the models and streams in ``store``, behind :class:`BodyLimit`'s limits."""
    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        yield
        store.stop()  # --state-dir: save what changed since the last save, before the process exits

    app = FastAPI(title="madcluster", docs_url="/docs", redoc_url=None, lifespan=lifespan)
    metrics = ServerMetrics()
    metrics.streams.set_function(lambda: len(store))
    _add_error_handlers(app)

    @app.get("/health")
    def health() -> dict[str, Any]:
        return {"status": "ok", "models": sorted(store.models), "streams": len(store)}

    @app.get("/models")
    def models() -> dict[str, Any]:
        return {"models": {name: _describe(model) for name, model in store.models.items()}}

    @app.post("/models/{model}/score")
    def score(model: str, body: RowsRequest) -> dict[str, Any]:
        detector = store.model(model)
        scores = detector.decision_function(rows_array(detector, body.rows, body.columns))
        flags = scores > detector.threshold_
        metrics.observe_scores(model, len(scores), int(flags.sum()))
        return {"model": model, "threshold": detector.threshold_, "scores": scores.tolist(), "flags": flags.tolist()}

    @app.post("/streams/{stream_id}")
    async def stream_update(stream_id: str, body: StreamRequest) -> JSONResponse:
        # a few rows cost ~1 ms: scored on the event loop, which saves the thread pool's hand-offs
        # (most of a one-row update's time under load); larger chunks go to the pool
        update = store.try_update if len(body.rows) <= INLINE_ROWS else None
        outcome = update(stream_id, body.model, body.rows, body.columns) if update is not None else None
        if outcome is None:
            outcome = await run_in_threadpool(store.update, stream_id, body.model, body.rows, body.columns)
        model, result = outcome
        metrics.observe_scores(model, len(result.scores), int(result.flags.sum()))
        # built directly: FastAPI's generic encoder costs more than the scoring
        return JSONResponse(update_answer(stream_id, model, result))

    @app.get("/streams/{stream_id}")
    def stream_info(stream_id: str) -> dict[str, Any]:
        stream = store.get(stream_id)
        with stream.lock:
            pending = stream.scorer.pending()
            steps_seen = stream.scorer.steps_seen
        # the steps not final yet, scored on the rows so far: with the final scores given, the
        # scores decision_function gives the whole stream
        return {"stream": stream_id, "model": stream.model, "steps_seen": steps_seen,
                "pending_steps": pending.steps.tolist(), "pending_scores": pending.scores.tolist()}

    @app.delete("/streams/{stream_id}")
    def stream_close(stream_id: str) -> dict[str, Any]:
        store.close(stream_id)
        return {"stream": stream_id, "closed": True}

    @app.get("/metrics")
    def prometheus() -> Response:
        return Response(metrics.exposition(), media_type="text/plain; version=0.0.4; charset=utf-8")

    route = next(r for r in app.routes if getattr(r, "path", None) == "/streams/{stream_id}" and "POST" in getattr(r, "methods", ()))
    fast = FastStreamUpdates(app, store, metrics, route, INLINE_ROWS)  # the one-row update without FastAPI's layers
    return BodyLimit(Measure(fast, metrics), max_body_bytes, max_rows, max_concurrent)  # type: ignore[return-value]


def _describe(model: Any) -> dict[str, Any]:
    names = getattr(model, "feature_names_in_", None)
    streams = model.model_.streams  # a causal own score (the input terms' scores are final L rows later)
    return {
        "n_features": int(model.n_features_in_),
        "columns": None if names is None else [str(n) for n in names],
        "window_size": int(model.window_size),
        "threshold": model.threshold_,
        "embedder": model.embedder if isinstance(model.embedder, str) else "custom",
        "streams": streams,
        "final_after_rows": model.model_.parts.combination.final_after() if streams else 0,
    }


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


def _add_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        content_type = request.headers.get("content-type", "")
        if request.method == "POST" and not content_type.startswith("application/json"):
            return _error(415, f"the request body must be JSON (Content-Type: application/json), got Content-Type "
                               f"{content_type or 'none'!r} and a body that is not JSON")
        problems = []
        for err in exc.errors():
            if err.get("type") == "json_invalid":
                return _error(400, f"the request body is not valid JSON: {err.get('ctx', {}).get('error', err.get('msg'))}")
            where = ".".join(str(p) for p in err.get("loc", ()) if p != "body") or "body"
            problems.append(f"{where}: {err.get('msg')}")
        return _error(422, "invalid request: " + "; ".join(problems[:5]))

    @app.exception_handler(NotFound)
    async def not_found(request: Request, exc: NotFound) -> JSONResponse:
        return _error(404, str(exc))

    @app.exception_handler(Conflict)
    async def conflict(request: Request, exc: Conflict) -> JSONResponse:
        return _error(409, str(exc))

    @app.exception_handler(MADClusterError)
    async def bad_input(request: Request, exc: MADClusterError) -> JSONResponse:
        return _error(400, str(exc))

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        message = {404: f"no endpoint {request.url.path}", 405: f"{request.method} not allowed on {request.url.path}"}
        return _error(exc.status_code, message.get(exc.status_code, str(exc.detail)))

    @app.exception_handler(Exception)
    async def unexpected(request: Request, exc: Exception) -> JSONResponse:
        return _error(500, f"internal error ({type(exc).__name__}); the server log has the details")


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
            endpoint = getattr(scope.get("route"), "path", "unmatched")
            self.metrics.observe_request(endpoint, scope.get("method", ""), status, time.perf_counter() - start)


class BodyLimit:
    """ASGI middleware, before the app reads a request: a body over ``max_bytes`` or of more than
    ``max_rows`` rows gets 413; over ``max_concurrent`` requests in flight, or rows in flight over
    twice ``max_rows``, get 503 (so a few large requests cannot take the server's memory); a JSON
    body sent with another content type (``curl -d`` sends a form type) is read as JSON."""

    def __init__(self, app: ASGIApp, max_bytes: int, max_rows: int = DEFAULT_MAX_ROWS,
                 max_concurrent: int = DEFAULT_MAX_CONCURRENT) -> None:
        self.app, self.max_bytes, self.max_rows, self.max_concurrent = app, max_bytes, max_rows, max_concurrent
        self.in_flight = self.rows_in_flight = 0  # the event loop runs one coroutine step at a time: no lock

    def __getattr__(self, name: str) -> Any:  # routes, state... of the wrapped FastAPI app
        return getattr(self.app, name)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or [])
        declared = headers.get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.max_bytes:
            await _reply(send, 413, f"request body over the limit of {self.max_bytes} bytes (--max-body-bytes); send fewer rows per request")
            return
        chunks, size, more = [], 0, True
        while more:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_bytes:
                await _reply(send, 413, f"request body over the limit of {self.max_bytes} bytes (--max-body-bytes); send fewer rows per request")
                return
            chunks.append(chunk)
            more = message.get("more_body", False)
        body = b"".join(chunks)
        rows = count_rows(body) if scope.get("method") == "POST" else 0
        if rows > self.max_rows:
            await _reply(send, 413, f"{rows} rows in one request, over the limit of {self.max_rows} (--max-rows); send fewer rows per request")
            return
        if self.in_flight >= self.max_concurrent or (rows and self.rows_in_flight + rows > 2 * self.max_rows):
            await _reply(send, 503, f"server busy: {self.in_flight} requests ({self.rows_in_flight} rows) in flight, the limit is "
                                    f"{self.max_concurrent} requests (--max-concurrent) and {2 * self.max_rows} rows (2 x --max-rows); retry shortly",
                         retry_after=1)
            return
        content_type = headers.get(b"content-type", b"")
        if scope.get("method") == "POST" and not content_type.startswith(JSON_TYPES) and body.lstrip()[:1] in (b"{", b"["):
            scope = {**scope, "headers": [(k, v) for k, v in scope["headers"] if k != b"content-type"] + [(b"content-type", b"application/json")]}
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


def count_rows(body: bytes) -> int:
    """Rows in a ``{"rows": [[...], ...], "columns": [...]}`` body without parsing it: its ``[``
    less the outer list's and the columns' (column names holding ``[`` count too: an upper bound)."""
    brackets = body.count(b"[")
    return max(0, brackets - 1 - (b'"columns"' in body))


async def _reply(send: Send, status: int, message: str, retry_after: int | None = None) -> None:
    payload = json.dumps({"error": message}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(payload)).encode())]
    if retry_after is not None:
        headers.append((b"retry-after", str(retry_after).encode()))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": payload})


__all__ = ["DEFAULT_MAX_BODY_BYTES", "DEFAULT_MAX_CONCURRENT", "DEFAULT_MAX_ROWS", "BodyLimit", "count_rows", "create_app"]
