"""The body limit middleware on its own, the app behind it recorded: a body past the limit sent
in chunks with no length declared, a JSON body sent with another content type, and the attributes
the middleware chain passes through (the fifth mutation run's survivors: the tests declared the
length, or sent JSON as JSON)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

pytest.importorskip("starlette")

from madcluster.serve.metrics import ServerMetrics
from madcluster.serve.middleware import BodyLimit, Measure


class App:
    """The app behind: records each request's headers and body, answers 299."""

    def __init__(self) -> None:
        self.seen: list[tuple[list, bytes]] = []
        self.tag = "the app's own attribute"

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        self.seen.append((scope["headers"], (await receive())["body"]))
        await send({"type": "http.response.start", "status": 299, "headers": []})
        await send({"type": "http.response.body", "body": b""})


def _send(limit: BodyLimit, chunks: list[bytes], headers: list) -> tuple[int, bytes]:
    sent: list[dict] = []
    messages = [
        {"type": "http.request", "body": c, "more_body": i < len(chunks) - 1}
        for i, c in enumerate(chunks)
    ]

    async def receive() -> dict:
        return messages.pop(0)

    async def send(message: dict) -> None:
        sent.append(message)

    scope = {"type": "http", "method": "POST", "path": "/streams/s", "headers": headers}
    asyncio.run(limit(scope, receive, send))
    return sent[0]["status"], b"".join(m.get("body", b"") for m in sent[1:])


def test_a_body_sent_past_the_limit_without_a_length_is_413():
    app = App()
    limit = BodyLimit(app, 100, 1000, 4, 5.0)
    status, payload = _send(limit, [b"x" * 60, b"x" * 60], [])
    assert status == 413 and app.seen == []
    assert json.loads(payload) == {
        "error": "request body over the limit of 100 bytes (--max-body-bytes); send fewer rows "
        "per request"
    }


def test_a_json_body_with_another_content_type_is_passed_on_as_json():
    app = App()
    body = b'{"rows": [[1.0, 2.0]]}'
    status, _ = _send(
        BodyLimit(app, 1000, 1000, 4, 5.0), [body], [(b"content-type", b"text/plain")]
    )
    assert status == 299
    assert app.seen == [([(b"content-type", b"application/json")], body)]


def test_the_measured_app_passes_its_attributes_through():
    app = App()
    assert Measure(app, ServerMetrics()).tag == "the app's own attribute"
    assert BodyLimit(Measure(app, ServerMetrics()), 1000, 1000, 4, 5.0).tag == app.tag


def test_a_body_declared_gzip_that_is_not_is_400():
    app = App()
    status, payload = _send(
        BodyLimit(app, 1000, 1000, 4, 5.0), [b'{"rows": [[1.0]]}'], [(b"content-encoding", b"gzip")]
    )
    assert status == 400 and app.seen == []
    assert json.loads(payload)["error"].startswith(
        "the request body is gzip-compressed (Content-Encoding: gzip or its magic bytes) but does "
        "not decompress: "
    )
