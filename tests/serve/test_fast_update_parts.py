"""The fast stream update middleware called on its own, the app behind it recorded: which requests
it answers itself, its 500 and its log line, and its bytes beside ``JSONResponse``'s (the fifth
mutation run's survivors: through the app the fast path and the app give the same answers)."""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

import pytest

pytest.importorskip("prometheus_client")

from series_helpers import three_channels

from madcluster import MADCluster
from madcluster.serve.fast_updates import FastStreamUpdates
from madcluster.serve.metrics import ServerMetrics
from madcluster.serve.registry import StreamStore

ROW = [0.1, 0.2, 0.3]


class App:
    """The app behind the middleware: records each call and answers 299."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, bytes]] = []

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        self.calls.append((scope["method"], (await receive())["body"]))
        await send({"type": "http.response.start", "status": 299, "headers": []})
        await send({"type": "http.response.body", "body": b"app"})


@pytest.fixture(scope="module")
def model():
    return MADCluster(input_terms=None, window_size=12, epochs=1, random_state=0).fit(
        three_channels(200, 0)
    )


def _call(middleware: FastStreamUpdates, method: str, body: dict) -> tuple[int, dict, bytes]:
    sent: list[dict] = []

    async def receive() -> dict:
        return {"type": "http.request", "body": json.dumps(body).encode(), "more_body": False}

    async def send(message: dict) -> None:
        sent.append(message)

    scope = {"type": "http", "method": method, "path": "/streams/s", "headers": []}
    asyncio.run(middleware(scope, receive, send))
    return sent[0]["status"], dict(sent[0]["headers"]), b"".join(m["body"] for m in sent[1:])


def _middleware(store: StreamStore, app: App) -> FastStreamUpdates:
    return FastStreamUpdates(app, store, ServerMetrics(), "the route", 64)


def test_a_small_post_is_answered_here_and_anything_else_goes_on(model):
    app = App()
    middleware = _middleware(StreamStore({"m": model}), app)
    status, headers, payload = _call(middleware, "POST", {"rows": [ROW]})
    assert status == 200 and app.calls == []
    assert json.loads(payload)["steps"] == [0]
    assert headers[b"content-length"] == str(len(payload)).encode()
    status, _, payload = _call(middleware, "GET", {"rows": [ROW]})  # a body on a GET: the app's
    assert (status, payload) == (299, b"app")
    assert app.calls == [("GET", json.dumps({"rows": [ROW]}).encode())]


def test_an_unexpected_failure_is_500_and_logged_with_the_stream(model, monkeypatch, caplog):
    store = StreamStore({"m": model})

    def broken(*args: object) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(store, "try_update", broken)
    with caplog.at_level(logging.ERROR, logger="madcluster.serve.fast_updates"):
        status, _, payload = _call(_middleware(store, App()), "POST", {"rows": [ROW]})
    assert status == 500
    assert json.loads(payload) == {
        "error": "internal error (RuntimeError); the server log has the details"
    }
    assert [r.getMessage() for r in caplog.records] == ["stream update of 's' failed"]


def test_its_bytes_are_utf8_as_the_apps(model):
    """A message naming a model outside ASCII is written as JSONResponse writes it."""
    status, headers, payload = _call(
        _middleware(StreamStore({"m": model}), App()), "POST", {"rows": [ROW], "model": "pompé"}
    )
    assert status == 404
    assert payload == '{"error":"unknown model \'pompé\'; this server has m"}'.encode()
    assert headers[b"content-type"] == b"application/json"
