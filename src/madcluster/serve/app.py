"""The FastAPI application of ``madcluster serve`` (see the package docstring for endpoints)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Annotated, Any

from fastapi import FastAPI, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel, Field, Strict
from starlette.exceptions import HTTPException as StarletteHTTPException

from madcluster.estimator.far_columns import far_columns
from madcluster.estimator.incident_scoring import default_incident_policy
from madcluster.exceptions import MADClusterError
from madcluster.incidents.policy import incident_record
from madcluster.serve.fast_updates import FastStreamUpdates, update_answer
from madcluster.serve.limits import (
    DEFAULT_BODY_SECONDS,
    DEFAULT_MAX_BODY_BYTES,
    DEFAULT_MAX_CONCURRENT,
    DEFAULT_MAX_ROWS,
)
from madcluster.serve.metrics import ServerMetrics
from madcluster.serve.middleware import BearerToken, BodyLimit, Measure
from madcluster.serve.registry import StreamStore
from madcluster.serve.rows import rows_array
from madcluster.serve.streams import Conflict, NotFound, StreamMemoryFull, TooManyStreams
from madcluster.serve.swap import Refits

INLINE_ROWS = 16  # stream updates of at most this many rows run on the event loop
#: A number in ``rows``: JSON numbers only; "1.5" and true are refused (422 naming them), not
#: coerced.
Number = Annotated[float, Strict()]


class RowsRequest(BaseModel):
    rows: list[list[Number]] = Field(
        description="rows of the series, oldest first, one number per column"
    )
    columns: list[str] | None = Field(
        default=None, description="column names of the rows (any order)"
    )


class StreamRequest(RowsRequest):
    model: str | None = Field(
        default=None,
        description="model of a new stream (default: the stream's name, or the only model)",
    )


class RefitRequest(RowsRequest):
    epochs: int | None = Field(
        default=None, ge=1, description="epochs of the warm-started refit (default 1)"
    )
    from_scratch: bool = Field(default=False, description="a fresh network, the model's epochs")
    save: bool = Field(
        default=False, description="write the refitted model over its file (a restart serves it)"
    )
    wait: bool = Field(
        default=False, description="answer once the refit is done (else 202 at once)"
    )
    force: bool = Field(
        default=False, description="refit and swap in whatever the rows' and model's checks say"
    )


def create_app(
    store: StreamStore,
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
    max_rows: int = DEFAULT_MAX_ROWS,
    max_concurrent: int = DEFAULT_MAX_CONCURRENT,
    body_seconds: float = DEFAULT_BODY_SECONDS,
    token: str | None = None,
    model_files: dict[str, Path] | None = None,
) -> FastAPI:
    """The app for the models and streams in ``store``, behind :class:`BodyLimit`'s limits and,
    with ``token``, :class:`BearerToken`; ``model_files``: where each model was read from (a
    refit with ``"save": true`` writes over it)."""

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        yield
        store.stop()  # --state-dir: save what changed since the last save, before the process exits

    app = FastAPI(title="madcluster", docs_url="/docs", redoc_url=None, lifespan=lifespan)
    metrics = ServerMetrics()
    metrics.streams.set_function(lambda: len(store))
    metrics.stream_memory.set_function(lambda: store.stream_memory)
    refits = Refits(store, model_files)
    _add_error_handlers(app)

    @app.get("/health")
    def health() -> dict[str, Any]:
        return {
            "status": "ok",
            "models": sorted(store.models),
            "streams": len(store),
            "expired_streams": store.parked,
            "max_streams": store.max_streams,
            "stream_memory_bytes": store.stream_memory,
            "max_stream_memory": store.max_stream_memory,
        }

    @app.get("/models")
    def models() -> dict[str, Any]:
        described = {}
        for name, model in store.models.items():
            job = refits.status(name)
            described[name] = {
                **_describe(model),
                "version": store.versions[name],
                "refit": None if job is None else job.state,
            }
        return {"models": described}

    @app.post("/models/{model}/score")
    def score(model: str, body: RowsRequest) -> dict[str, Any]:
        detector = store.model(model)
        data = rows_array(detector, body.rows, body.columns)
        scores = detector.decision_function(data)
        flags = scores > detector.threshold_
        far = far_columns(detector.model_.inputs, detector.scaling, data)
        metrics.observe_scores(model, len(scores), int(flags.sum()), far)
        answer = {
            "model": model,
            "threshold": detector.threshold_,
            "scores": scores.tolist(),
            "flags": flags.tolist(),
        }
        return {**answer, "far_columns": far} if far else answer

    @app.post("/streams/{stream_id}")
    async def stream_update(stream_id: str, body: StreamRequest) -> JSONResponse:
        # a few rows cost ~1 ms: scored on the event loop, which saves the thread pool's hand-offs
        # (most of a one-row update's time under load); larger chunks go to the pool
        update = store.try_update if len(body.rows) <= INLINE_ROWS else None
        outcome = (
            update(stream_id, body.model, body.rows, body.columns) if update is not None else None
        )
        if outcome is None:
            outcome = await run_in_threadpool(
                store.update, stream_id, body.model, body.rows, body.columns
            )
        result = outcome.result
        metrics.observe_scores(
            outcome.model, len(result.scores), int(result.flags.sum()), outcome.far
        )
        metrics.observe_stream(stream_id, outcome.model, result)
        # built directly: FastAPI's generic encoder costs more than the scoring
        return JSONResponse(update_answer(stream_id, outcome))

    @app.get("/streams/{stream_id}")
    def stream_info(stream_id: str) -> dict[str, Any]:
        stream = store.get(stream_id)
        with stream.lock:
            pending = stream.shifted(stream.scorer.pending())
            steps_seen, version, offset = stream.steps_seen, stream.version, stream.offset
        # the steps not final yet, scored on the rows so far: with the final scores given, the
        # scores decision_function gives the whole stream (since a handover: from the replayed
        # rows on, ``scored_from``)
        return {
            "stream": stream_id,
            "model": stream.model,
            "model_version": version,
            "steps_seen": steps_seen,
            "scored_from": offset,
            "pending_steps": pending.steps.tolist(),
            "pending_scores": pending.scores.tolist(),
        }

    @app.get("/streams/{stream_id}/incidents")
    def stream_incidents(stream_id: str) -> dict[str, Any]:
        stream = store.get(stream_id)
        with stream.lock:
            incidents = [i.shifted(stream.offset) for i in stream.scorer.incidents]
        return {  # docs/incidents.md: what each field means
            "stream": stream_id,
            "model": stream.model,
            "incident_open": bool(incidents) and incidents[-1].end is None,
            "incidents": [incident_record(i) for i in incidents],
        }

    @app.delete("/streams/{stream_id}")
    def stream_close(stream_id: str) -> dict[str, Any]:
        store.close(stream_id)
        metrics.forget_stream(stream_id)
        return {"stream": stream_id, "closed": True}

    @app.post("/models/{model}/refit")
    async def refit(model: str, body: RefitRequest) -> JSONResponse:
        detector = store.model(model)
        rows = await run_in_threadpool(rows_array, detector, body.rows, body.columns)
        job = refits.start(model, rows, body.epochs, body.from_scratch, body.save, body.force)
        if not body.wait:
            return JSONResponse({"refit": job.describe()}, status_code=202)
        await run_in_threadpool(job.done.wait)
        if job.state in ("failed", "rejected"):  # rejected: the refitted model failed its checks
            status = 400 if job.state == "failed" else 422
            return JSONResponse(
                {"error": f"refit {job.state}: {job.error}", "refit": job.describe()}, status
            )
        return JSONResponse({"refit": job.describe()})

    @app.get("/models/{model}/refit")
    def refit_status(model: str) -> dict[str, Any]:
        job = refits.status(model)
        return {"model": model, "version": store.versions[model],
                "refit": None if job is None else job.describe()}  # fmt: skip

    @app.get("/metrics")
    def prometheus() -> Response:
        return Response(metrics.exposition(), media_type="text/plain; version=0.0.4; charset=utf-8")

    route = next(
        r
        for r in app.routes
        if getattr(r, "path", None) == "/streams/{stream_id}"
        and "POST" in getattr(r, "methods", ())
    )
    fast = FastStreamUpdates(
        app, store, metrics, route, INLINE_ROWS
    )  # the one-row update without FastAPI's layers
    measured = Measure(fast, metrics)
    limited = BodyLimit(measured, max_body_bytes, max_rows, max_concurrent, body_seconds)
    return limited if not token else BearerToken(limited, token)  # type: ignore[return-value]


def _describe(model: Any) -> dict[str, Any]:
    names = getattr(model, "feature_names_in_", None)
    streams = (
        model.model_.grid.causal
    )  # a causal own score (the input terms' scores are final L rows later)
    return {
        "n_features": int(model.n_features_in_),
        "columns": None if names is None else [str(n) for n in names],
        "window_size": int(model.window_size),
        "threshold": model.threshold_,
        "embedder": model.embedder if isinstance(model.embedder, str) else "custom",
        "streams": streams,
        "final_after_rows": model.model_.combination.final_after() if streams else 0,
        # no score of a stream is final before its first series_scale_rows steps all are
        "series_scale_rows": model.model_.combination.scale_rows,
        "incidents": _incident_budget(model.model_),
    }


def _incident_budget(fitted: Any) -> dict[str, Any]:
    """Where a model's streams open incidents and what that costs, so an on-call engineer reads
    the budget the fit measured (docs/incidents.md) without the model file: the open level, the
    false incidents per 10,000 normal rows its calibration expects there (None without one, or
    where its rows fit no tail) and the rows that measured it."""
    calibration = fitted.incident_calibration
    level = default_incident_policy(fitted).open_level
    expected, measured = None, None
    if calibration is not None:
        expected = calibration.expected(level) if calibration.fits_tail else None
        kind = "training rows, in sample" if calibration.in_sample else "validation rows"
        measured = f"{calibration.rows} {kind}"
    return {
        "open_level": level,
        "expected_false_per_10000": expected,
        "measured_on": measured,
    }


def _short(value: Any) -> bool:
    """Whether a rejected input is small enough to quote (a value, not the whole body)."""
    return isinstance(value, (str, int, float, bool)) or value is None


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


def _add_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        content_type = request.headers.get("content-type", "")
        if request.method == "POST" and not content_type.startswith("application/json"):
            return _error(
                415,
                f"the request body must be JSON (Content-Type: application/json), got Content-Type "
                f"{content_type or 'none'!r} and a body that is not JSON",
            )
        problems = []
        for err in exc.errors():
            if err.get("type") == "json_invalid":
                return _error(
                    400,
                    "the request body is not valid JSON: "
                    f"{err.get('ctx', {}).get('error', err.get('msg'))}",
                )
            where = ".".join(str(p) for p in err.get("loc", ()) if p != "body") or "body"
            got = (
                f", got {json.dumps(err['input'])}"
                if "input" in err and _short(err["input"])
                else ""
            )
            problems.append(f"{where}: {err.get('msg')}{got}")
        return _error(422, "invalid request: " + "; ".join(problems[:5]))

    @app.exception_handler(NotFound)
    async def not_found(request: Request, exc: NotFound) -> JSONResponse:
        return _error(404, str(exc))

    @app.exception_handler(Conflict)
    async def conflict(request: Request, exc: Conflict) -> JSONResponse:
        return _error(409, str(exc))

    @app.exception_handler(TooManyStreams)
    async def too_many(request: Request, exc: TooManyStreams) -> JSONResponse:
        return _error(429, str(exc))

    @app.exception_handler(StreamMemoryFull)
    async def memory_full(request: Request, exc: StreamMemoryFull) -> JSONResponse:
        return _error(507, str(exc))

    @app.exception_handler(MADClusterError)
    async def bad_input(request: Request, exc: MADClusterError) -> JSONResponse:
        return _error(400, str(exc))

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        message = {
            404: f"no endpoint {request.url.path}",
            405: f"{request.method} not allowed on {request.url.path}",
        }
        return _error(exc.status_code, message.get(exc.status_code, str(exc.detail)))

    @app.exception_handler(Exception)
    async def unexpected(request: Request, exc: Exception) -> JSONResponse:
        return _error(500, f"internal error ({type(exc).__name__}); the server log has the details")


__all__ = ["INLINE_ROWS", "create_app"]
