"""Issue 37 items 8 and 14: what a slow, careless or hostile client can no longer do to the server.

A body that never completes gets 408; strings and booleans in rows get 422 naming them; a gzip body
is decompressed (bombs 413, garbage 400); NaN and 1e300 are both named by column; /docs is counted
under its own route; memory goes back to the system after large requests; streams are bounded
(429), idle ones expire (saved first with a state folder and read back on use); a bearer token
guards everything but /health (401 and a log line)."""

from __future__ import annotations

import asyncio
import gzip
import json
import logging

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("fastapi")
pytest.importorskip("httpx")

from fastapi.testclient import TestClient

from madcluster import MADCluster
from madcluster.serve import middleware as app_module
from madcluster.serve.app import create_app
from madcluster.serve.middleware import BodyLimit
from madcluster.serve.registry import StreamStore

COLUMNS = ["a", "b", "c"]


def _series(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.sin(np.arange(n)[:, None] / np.array([3.0, 7.0, 11.0])) + 0.1 * rng.standard_normal((n, 3))


@pytest.fixture(scope="module")
def model():
    return MADCluster(input_terms=None, window_size=12, epochs=1, random_state=0).fit(pd.DataFrame(_series(300, 0), columns=COLUMNS))


def _client(model, state_dir=None, store_options=None, **app_options) -> TestClient:
    store = StreamStore({"m": model}, state_dir, **(store_options or {}))
    return TestClient(create_app(store, **app_options))


@pytest.mark.parametrize("value, shown", [("1.5", '"1.5"'), (True, "true"), (None, "null")])
@pytest.mark.parametrize("path", ["/streams/s1", "/models/m/score"])
def test_non_numbers_in_rows_get_422_naming_them(model, path, value, shown):
    rows = _series(20, 1).tolist()
    rows[0][1] = value
    response = _client(model).post(path, json={"rows": rows})
    assert response.status_code == 422, response.text
    assert "rows.0.1" in response.json()["error"] and f"got {shown}" in response.json()["error"]


def test_gzip_bodies_are_read_and_bombs_and_garbage_refused(model):
    client = _client(model, max_body_bytes=4096)
    body = json.dumps({"rows": _series(3, 1).tolist()}).encode()
    ok = client.post("/streams/g", content=gzip.compress(body), headers={"content-encoding": "gzip", "content-type": "application/json"})
    assert ok.status_code == 200, ok.text
    bomb = gzip.compress(b'{"rows": [' + b" " * 100_000 + b"]}")
    assert len(bomb) < 4096
    too_big = client.post("/streams/g", content=bomb, headers={"content-encoding": "gzip"})
    assert too_big.status_code == 413 and "decompresses to over the limit" in too_big.json()["error"]
    garbage = client.post("/streams/g", content=b"\x1f\x8b\x08\x00garbage", headers={"content-type": "application/json"})
    assert garbage.status_code == 400 and "gzip" in garbage.json()["error"]


@pytest.mark.parametrize("value, words", [(float("nan"), "NaN or infinite"), (1e300, "too large")])
def test_nan_and_huge_values_are_named_by_column(model, value, words):
    rows = _series(20, 1).tolist()
    rows[4][2] = value
    for path in ("/streams/s2", "/models/m/score"):
        response = _client(model).post(path, content=json.dumps({"rows": rows}), headers={"content-type": "application/json"})
        assert response.status_code == 400, response.text
        assert words in response.json()["error"] and "row 4, column 'c'" in response.json()["error"]


def test_docs_are_counted_under_their_route(model):
    client = _client(model)
    assert client.get("/docs").status_code == 200
    client.get("/nowhere")
    text = client.get("/metrics").text
    assert 'endpoint="/docs"' in text and 'endpoint="unmatched",method="GET",status="404"' in text


def test_a_body_that_never_completes_gets_408():
    async def never_called(scope, receive, send):  # pragma: no cover - the body never arrives
        raise AssertionError

    sent: list[dict] = []

    async def run() -> None:
        first = True

        async def receive():
            nonlocal first
            if first:
                first = False
                return {"type": "http.request", "body": b'{"rows": [[1', "more_body": True}
            await asyncio.sleep(60)  # the client declared more and stalls

        async def send(message):
            sent.append(message)

        scope = {"type": "http", "method": "POST", "path": "/streams/x", "headers": [(b"content-length", b"1000")]}
        await asyncio.wait_for(BodyLimit(never_called, 1 << 20, body_seconds=0.2)(scope, receive, send), 5)

    asyncio.run(run())
    assert sent[0]["status"] == 408
    assert b"not complete after 0.2 s" in sent[1]["body"] and b"12 bytes received of the 1000 declared" in sent[1]["body"]


def test_memory_is_given_back_after_a_large_request(model, monkeypatch):
    calls = []
    monkeypatch.setattr(app_module, "trim_memory", lambda: calls.append(1) or True)
    client = _client(model, max_body_bytes=8 << 20)
    client.post("/streams/small", json={"rows": _series(2, 1).tolist()})
    assert calls == []
    rows = _series(20_000, 2).tolist()
    assert client.post("/models/m/score", json={"rows": rows}).status_code == 200
    assert calls == [1]


def test_streams_past_the_limit_get_429_until_one_closes(model):
    client = _client(model, store_options={"max_streams": 2})
    row = {"rows": [[0.1, 0.2, 0.3]]}
    assert client.post("/streams/one", json=row).status_code == 200
    assert client.post("/streams/two", json=row).status_code == 200
    refused = client.post("/streams/three", json=row)
    assert refused.status_code == 429 and "--max-streams" in refused.json()["error"]
    assert client.post("/streams/one", json=row).status_code == 200  # an open stream goes on
    assert client.delete("/streams/two").status_code == 200
    assert client.post("/streams/three", json=row).status_code == 200


def test_idle_streams_expire_and_with_a_state_folder_come_back(model, tmp_path):
    import time

    rows = _series(30, 3)
    closed = StreamStore({"m": model}, idle_seconds=10)
    closed.update("s", None, rows[:5].tolist(), None)
    assert closed.expire_idle(time.monotonic() + 11) == 1 and len(closed) == 0
    closed.stop()

    kept = StreamStore({"m": model}, tmp_path, save_interval=0, idle_seconds=10)
    reference = model.stream()
    expected = reference.update(rows[:5]).scores.tolist() + reference.update(rows[5:]).scores.tolist()
    first = kept.update("s", None, rows[:5].tolist(), None).result.scores.tolist()
    assert kept.expire_idle(time.monotonic() + 11) == 1
    assert len(kept) == 0 and kept.parked == 1 and (tmp_path / "s.mcs").is_file()
    second = kept.update("s", None, rows[5:].tolist(), None).result.scores.tolist()
    assert len(kept) == 1 and kept.parked == 0
    np.testing.assert_allclose(first + second, expected, rtol=0, atol=1e-9)
    kept.stop()


def test_a_token_guards_everything_but_health(model, caplog):
    client = _client(model, token="s3cret")
    assert client.get("/health").status_code == 200
    with caplog.at_level(logging.WARNING, logger="madcluster.serve"):
        refused = client.post("/streams/t", json={"rows": [[0.1, 0.2, 0.3]]})
        wrong = client.get("/models", headers={"authorization": "Bearer nope"})
    assert refused.status_code == 401 and wrong.status_code == 401
    assert refused.headers["www-authenticate"] == "Bearer"
    assert any("401 for POST /streams/t" in r.getMessage() and "no bearer token" in r.getMessage() for r in caplog.records)
    assert any("a wrong bearer token" in r.getMessage() for r in caplog.records)
    ok = client.post("/streams/t", json={"rows": [[0.1, 0.2, 0.3]]}, headers={"authorization": "Bearer s3cret"})
    assert ok.status_code == 200


def test_serving_beyond_localhost_without_a_token_warns(monkeypatch, capsys, model, tmp_path):
    import uvicorn

    from madcluster.serve import run

    model.save(tmp_path / "m.mcz")
    seen = {}
    monkeypatch.setattr(run, "check_port_free", lambda host, port: None)
    monkeypatch.setattr(uvicorn, "run", lambda app, **kwargs: seen.update(app=app))
    monkeypatch.delenv("MADCLUSTER_TOKEN", raising=False)
    run.run_server(tmp_path / "m.mcz", host="0.0.0.0", port=8123)
    assert "without a token" in capsys.readouterr().err
    monkeypatch.setenv("MADCLUSTER_TOKEN", "abc")
    run.run_server(tmp_path / "m.mcz", host="0.0.0.0", port=8123)
    err = capsys.readouterr().err
    assert "without a token" not in err and "bearer token required" in err
    assert type(seen["app"]).__name__ == "BearerToken"


def test_an_empty_folder_names_a_command_that_exists(tmp_path):
    from madcluster.exceptions import ModelFileError
    from madcluster.serve.models import load_models

    with pytest.raises(ModelFileError) as refused:
        load_models(tmp_path)
    assert "--fleet" not in str(refused.value) and "madcluster fit FOLDER -o MODELS/" in str(refused.value)
