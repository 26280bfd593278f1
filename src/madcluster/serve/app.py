"""The FastAPI application of ``madcluster serve`` (see the package docstring for endpoints)."""

from __future__ import annotations

import json
import time
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel, Field
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from madcluster.exceptions import MADClusterError
from madcluster.serve.metrics import ServerMetrics
from madcluster.serve.registry import Conflict, NotFound, StreamStore, rows_array

DEFAULT_MAX_BODY_BYTES = 8 * 1024 * 1024


class RowsRequest(BaseModel):
    rows: list[list[float]] = Field(description="rows of the series, oldest first, one number per column")
    columns: list[str] | None = Field(default=None, description="column names of the rows (any order)")


class StreamRequest(RowsRequest):
    model: str | None = Field(default=None, description="model of a new stream (default: the stream's name, or the only model)")


def create_app(store: StreamStore, max_body_bytes: int = DEFAULT_MAX_BODY_BYTES) -> FastAPI:
    """The app for the models and streams in ``store``."""
    app = FastAPI(title="madcluster", docs_url="/docs", redoc_url=None)
    metrics = ServerMetrics()
    metrics.streams.set_function(lambda: len(store))
    _add_error_handlers(app)

    @app.middleware("http")
    async def measure(request: Request, call_next: Any) -> Response:
        start = time.perf_counter()
        response = await call_next(request)
        route = request.scope.get("route")
        endpoint = getattr(route, "path", "unmatched")
        metrics.observe_request(endpoint, request.method, response.status_code, time.perf_counter() - start)
        return response

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
    def stream_update(stream_id: str, body: StreamRequest) -> dict[str, Any]:
        model, result = store.update(stream_id, body.model, body.rows, body.columns)
        metrics.observe_scores(model, len(result.scores), int(result.flags.sum()))
        return {
            "stream": stream_id, "model": model, "steps": result.steps.tolist(),
            "scores": result.scores.tolist(), "flags": result.flags.tolist(),
        }

    @app.get("/streams/{stream_id}")
    def stream_info(stream_id: str) -> dict[str, Any]:
        stream = store.get(stream_id)
        return {"stream": stream_id, "model": stream.model, "steps_seen": stream.scorer.steps_seen}

    @app.delete("/streams/{stream_id}")
    def stream_close(stream_id: str) -> dict[str, Any]:
        store.close(stream_id)
        return {"stream": stream_id, "closed": True}

    @app.get("/metrics")
    def prometheus() -> Response:
        return Response(metrics.exposition(), media_type="text/plain; version=0.0.4; charset=utf-8")

    return BodyLimit(app, max_body_bytes)  # type: ignore[return-value]


def _describe(model: Any) -> dict[str, Any]:
    names = getattr(model, "feature_names_in_", None)
    streams = model.model_.streams  # a causal score without whole-series input terms
    return {
        "n_features": int(model.n_features_in_),
        "columns": None if names is None else [str(n) for n in names],
        "window_size": int(model.window_size),
        "threshold": model.threshold_,
        "embedder": model.embedder if isinstance(model.embedder, str) else "custom",
        "streams": streams,
    }


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


def _add_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
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


class BodyLimit:
    """ASGI middleware: a request body over ``max_bytes`` gets 413 before the app reads it."""

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app, self.max_bytes = app, max_bytes

    def __getattr__(self, name: str) -> Any:  # routes, state... of the wrapped FastAPI app
        return getattr(self.app, name)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope.get("headers") or []).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.max_bytes:
            await self._reject(send)
            return
        chunks, size, more = [], 0, True
        while more:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_bytes:
                await self._reject(send)
                return
            chunks.append(chunk)
            more = message.get("more_body", False)
        body = b"".join(chunks)
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)

    async def _reject(self, send: Send) -> None:
        payload = json.dumps({"error": f"request body over the limit of {self.max_bytes} bytes (--max-body-bytes); send fewer rows per request"}).encode()
        await send({"type": "http.response.start", "status": 413, "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(payload)).encode())]})
        await send({"type": "http.response.body", "body": payload})


__all__ = ["DEFAULT_MAX_BODY_BYTES", "BodyLimit", "create_app"]
