"""The middleware's parts on their own, without a model: a gzip body at and past the limit, the
refusals' statuses and words, the memory a bomb may take while it is refused, the route a request
is counted under when the app is not FastAPI's, the token middleware passing attributes through,
and giving memory back. The serve tests reach these only through a fitted app, where a gzip body
one byte over the limit, or a zlib body sent as gzip, never came up (the mutation run's
survivors)."""

from __future__ import annotations

import gzip
import tracemalloc
import zlib
from types import SimpleNamespace

import pytest

pytest.importorskip("starlette")

from starlette.routing import Match

from madcluster.serve import middleware
from madcluster.serve.middleware import BearerToken, Measure, gunzip, trim_memory

LIMIT = 1000


def test_a_gzip_body_at_the_limit_is_read_and_one_byte_more_is_413():
    at = bytes(range(256)) * 3 + b"x" * (LIMIT - 768)
    assert len(at) == LIMIT
    assert gunzip(gzip.compress(at), LIMIT) == (at, None)
    out, problem = gunzip(gzip.compress(at + b"y"), LIMIT)
    assert out == b""
    assert problem == (
        413,
        f"the gzip body decompresses to over the limit of {LIMIT} bytes (--max-body-bytes)",
    )
    out, problem = gunzip(gzip.compress(at * 50), LIMIT)
    assert out == b"" and problem is not None and problem[0] == 413


def test_a_body_that_is_not_gzip_is_400_and_says_why():
    for body in (b"\x1f\x8bnot gzip at all", zlib.compress(b'{"rows": [[1.0]]}')):
        out, problem = gunzip(body, LIMIT)
        assert out == b"" and problem is not None
        status, why = problem
        assert status == 400
        assert why.startswith(
            "the request body is gzip-compressed (Content-Encoding: gzip or its magic bytes) "
            "but does not decompress: "
        ), why


def test_a_truncated_gzip_body_is_400_and_says_so():
    whole = gzip.compress(b'{"rows": [[1.0, 2.0]]}' * 10)
    assert gunzip(whole[:-12], LIMIT) == (
        b"",
        (400, "the request body is gzip-compressed but ends early (a truncated gzip stream)"),
    )


def test_a_bomb_is_refused_without_inflating_it():
    bomb = gzip.compress(b"0" * 20_000_000)  # 20 MB of zeros in about 20 KB
    tracemalloc.start()
    try:
        out, problem = gunzip(bomb, LIMIT)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert out == b"" and problem is not None and problem[0] == 413
    assert peak < 1_000_000, peak  # the limit and the compressed body, not the 20 MB


class _Route:
    def __init__(self, result, path: str | None = None) -> None:
        self.result = result
        if path is not None:
            self.path = path

    def matches(self, scope):
        if isinstance(self.result, Exception):
            raise self.result
        return self.result, {}


def _plain_route(app) -> str:
    return Measure(app, metrics=None)._plain_route({"type": "http", "path": "/x"})


def test_a_request_is_counted_under_the_route_that_matched_it():
    none, full = (Match.NONE, {}), (Match.FULL, {})
    routes = [_Route(KeyError("path")), _Route(TypeError("scope")), _Route(none[0], "/a")]
    app = SimpleNamespace(routes=[*routes, _Route(full[0], "/docs"), _Route(full[0], "/later")])
    assert _plain_route(app) == "/docs"  # a route that cannot read the scope is passed over
    assert _plain_route(SimpleNamespace(routes=[_Route(Match.FULL)])) == "unmatched"  # no path
    assert _plain_route(SimpleNamespace(routes=routes)) == "unmatched"
    assert _plain_route(object()) == "unmatched"  # an app without routes


def test_the_token_middleware_passes_the_apps_attributes_through():
    app = SimpleNamespace(routes=["r"], state="s")
    guarded = BearerToken(app, "secret")  # type: ignore[arg-type]
    assert guarded.routes == ["r"] and guarded.state == "s"
    with pytest.raises(AttributeError):
        guarded.missing  # noqa: B018


def test_memory_is_given_back_through_libc_once_looked_up(monkeypatch):
    monkeypatch.setattr(middleware, "_TRIM", [])
    calls = []
    fake = SimpleNamespace(malloc_trim=lambda pad: calls.append(pad))
    looked_up = []

    def cdll(name):
        looked_up.append(name)
        return fake

    monkeypatch.setattr("ctypes.CDLL", cdll)
    found = {"c": "libc-found.so"}
    monkeypatch.setattr("ctypes.util.find_library", found.get)
    assert trim_memory() is True and trim_memory() is True
    assert looked_up == ["libc-found.so"] and calls == [0, 0]  # looked up once, no padding kept
    monkeypatch.setattr(middleware, "_TRIM", [])
    monkeypatch.setattr("ctypes.util.find_library", lambda name: None)
    assert trim_memory() is True and looked_up[-1] == "libc.so.6"  # the fallback name


def test_without_a_libc_trimming_says_so(monkeypatch):
    monkeypatch.setattr(middleware, "_TRIM", [])

    def no_libc(name):
        raise OSError(f"{name}: cannot open shared object file")

    monkeypatch.setattr("ctypes.CDLL", no_libc)
    assert trim_memory() is False and trim_memory() is False
    assert middleware._TRIM == [None]


def _refused(scope: dict) -> list[dict]:
    """The messages BearerToken sends for ``scope`` (an app that must not be reached behind it)."""
    import asyncio

    async def app(scope, receive, send):
        raise AssertionError("reached the app without the token")

    async def receive():
        return {"type": "http.request", "body": b"", "more_body": False}

    sent: list[dict] = []

    async def send(message):
        sent.append(message)

    asyncio.run(BearerToken(app, "s3cret")(scope, receive, send))
    return sent


def test_a_refusal_names_the_client_and_why_and_asks_for_the_token(caplog):
    import json
    import logging

    scope = {"type": "http", "method": "POST", "path": "/streams/t", "headers": []}
    wrong = {**scope, "headers": [(b"authorization", b"Bearer nope")], "client": ("10.0.0.7", 5123)}
    with caplog.at_level(logging.WARNING, logger="madcluster.serve"):
        start, body = _refused(scope)
        _refused(wrong)
    assert [r.getMessage() for r in caplog.records] == [
        "401 for POST /streams/t from ?:0: no bearer token",
        "401 for POST /streams/t from 10.0.0.7:5123: a wrong bearer token",
    ]
    assert start["status"] == 401
    assert (b"www-authenticate", b"Bearer") in start["headers"]
    assert json.loads(body["body"]) == {
        "error": "no bearer token: send Authorization: Bearer <token> (the server's --token or "
        "$MADCLUSTER_TOKEN)"
    }


def _reply_messages(*args, **kwargs) -> list[dict]:
    import asyncio

    sent: list[dict] = []

    async def send(message):
        sent.append(message)

    asyncio.run(middleware._reply(send, *args, **kwargs))
    return sent


def test_a_refusal_is_json_with_its_length_and_a_retry_time_when_busy():
    import json

    start, body = _reply_messages(503, "busy", retry_after=1, extra=[(b"x-why", b"test")])
    payload = json.dumps({"error": "busy"}).encode()
    assert start == {
        "type": "http.response.start",
        "status": 503,
        "headers": [
            (b"content-type", b"application/json"),
            (b"content-length", str(len(payload)).encode()),
            (b"retry-after", b"1"),
            (b"x-why", b"test"),
        ],
    }
    assert body == {"type": "http.response.body", "body": payload}
    start, _ = _reply_messages(413, "too large")
    assert [name for name, _ in start["headers"]] == [b"content-type", b"content-length"]
