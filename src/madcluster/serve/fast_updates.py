"""The one-row stream update without FastAPI: ASGI middleware for ``POST /streams/{stream_id}``.

A one-row update costs about a millisecond of scoring, and FastAPI's route matching, dependency
solving, pydantic validation of the body and exception middleware cost about as much again
(profiled under 16 closed-loop clients). :class:`FastStreamUpdates` answers the common request
itself: a JSON object whose ``rows`` is a list of at most ``INLINE_ROWS`` lists of numbers,
``model`` a string or absent, ``columns`` a list of strings or absent, for a stream that is not
busy. It calls the same :meth:`StreamStore.try_update` and answers the same JSON and the same
errors (404 / 409 / 429 / 400 with the store's message). Anything else (another shape, a busy
stream, a larger chunk) goes on to the FastAPI app unchanged, which validates it and says what
is wrong.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from madcluster.exceptions import MADClusterError
from madcluster.incidents.policy import incident_record
from madcluster.serve.metrics import ServerMetrics
from madcluster.serve.registry import StreamStore
from madcluster.serve.streams import Conflict, NotFound, StreamMemoryFull, TooManyStreams, Update

logger = logging.getLogger(__name__)
PREFIX = "/streams/"
EXACT_INT = 2**53  # larger ints (and bools, and anything else) are left to pydantic


class FastStreamUpdates:
    """ASGI middleware: small stream updates answered here (module docstring), all else to ``app``;
    ``route``: the app's ``/streams/{stream_id}`` route, set on the scope for the request
    metrics."""

    def __init__(
        self, app: ASGIApp, store: StreamStore, metrics: ServerMetrics, route: Any, max_rows: int
    ) -> None:
        self.app, self.store, self.metrics, self.route, self.max_rows = (
            app,
            store,
            metrics,
            route,
            max_rows,
        )

    def __getattr__(self, name: str) -> Any:
        return getattr(self.app, name)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "")
        if (
            scope["type"] != "http"
            or scope.get("method") != "POST"
            or not path.startswith(PREFIX)
            or "/" in path[len(PREFIX) :]
        ):
            await self.app(scope, receive, send)
            return
        message = await receive()  # BodyLimit has read the whole body: one message
        body = message.get("body", b"")
        request = None if message.get("more_body") else parse_update(body, self.max_rows)
        if request is not None:
            stream_id = path[len(PREFIX) :]
            try:
                outcome = self.store.try_update(stream_id, request[1], request[0], request[2])
            except MADClusterError as exc:  # the app's error handlers' statuses and messages
                status = {
                    NotFound: 404,
                    Conflict: 409,
                    TooManyStreams: 429,
                    StreamMemoryFull: 507,
                }.get(type(exc), 400)
                await self._answer(scope, send, status, {"error": str(exc)})
                return
            except Exception as exc:  # as the app's handler: 500, the details in the log
                logger.exception("stream update of %r failed", stream_id)
                await self._answer(
                    scope,
                    send,
                    500,
                    {
                        "error": f"internal error ({type(exc).__name__}); "
                        "the server log has the details"
                    },
                )
                return
            if outcome is not None:  # None: the stream is busy, the app's thread pool waits for it
                result = outcome.result
                self.metrics.observe_scores(
                    outcome.model, len(result.scores), int(result.flags.sum()), outcome.far
                )
                self.metrics.observe_stream(stream_id, outcome.model, result)
                await self._answer(scope, send, 200, update_answer(stream_id, outcome))
                return
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return message
            return await receive()

        await self.app(scope, replay, send)

    async def _answer(self, scope: Scope, send: Send, status: int, content: dict[str, Any]) -> None:
        scope["route"] = self.route  # the request metrics count it under the route's template
        payload = json.dumps(
            content, ensure_ascii=False, allow_nan=False, separators=(",", ":")
        ).encode("utf-8")  # as JSONResponse
        headers = [
            (b"content-type", b"application/json"),
            (b"content-length", str(len(payload)).encode()),
        ]
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": payload})


def update_answer(stream_id: str, outcome: Update) -> dict[str, Any]:
    """The JSON answer to a stream update (both paths): the new rows' scores and the steps whose
    scores became final, and the version of the model that gave them."""
    result = outcome.result
    answer = {
        "stream": stream_id,
        "model": outcome.model,
        "model_version": outcome.version,
        "steps": result.steps.tolist(),
        "scores": result.scores.tolist(),
        "flags": result.flags.tolist(),
        "final_steps": result.final_steps.tolist(),
        "final_scores": result.final_scores.tolist(),
        "final_flags": result.final_flags.tolist(),
        "incidents_opened": [incident_record(i) for i in result.incidents_opened],
        "incidents_closed": [incident_record(i) for i in result.incidents_closed],
        "incidents_confirmed": [incident_record(i) for i in result.incidents_confirmed],
        "incident_open": result.incident_open,
    }
    if outcome.far:  # columns far from training on most of the rows (estimator.far_columns)
        answer["far_columns"] = list(outcome.far)
    return answer


def parse_update(
    body: bytes, max_rows: int
) -> tuple[list[list[float]], str | None, list[str] | None] | None:
    """``(rows, model, columns)`` of a plain small update body, or None for anything else."""
    try:
        data = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        return None
    if not isinstance(data, dict):
        return None
    rows, model, columns = data.get("rows"), data.get("model"), data.get("columns")
    if not isinstance(rows, list) or len(rows) > max_rows:
        return None
    for row in rows:
        if not isinstance(row, list) or not all(_number(v) for v in row):
            return None
    if model is not None and not isinstance(model, str):
        return None
    if columns is not None and not (
        isinstance(columns, list) and all(isinstance(c, str) for c in columns)
    ):
        return None
    return rows, model, columns


def _number(value: Any) -> bool:
    return type(value) is float or (type(value) is int and -EXACT_INT <= value <= EXACT_INT)
