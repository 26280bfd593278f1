"""The server's limits and options: content types, row and concurrency limits, batched state
saves, range-checked options and a busy port, each refused in one line."""

from __future__ import annotations

import asyncio
import socket
import threading
import time

import numpy as np
import pytest

pytest.importorskip("fastapi")
pytest.importorskip("httpx")

from fastapi.testclient import TestClient

from madcluster import MADCluster
from madcluster.cli import main
from madcluster.estimator.streaming import StreamScorer
from madcluster.serve.app import create_app
from madcluster.serve.middleware import BodyLimit, count_rows
from madcluster.serve.registry import StreamStore
from madcluster.serve.run import PortError, check_port_free

FORM = {"content-type": "application/x-www-form-urlencoded"}  # what `curl -d` sends


def _series(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.sin(np.arange(n)[:, None] / np.array([3.0, 7.0, 11.0])) + 0.1 * rng.standard_normal((n, 3))


@pytest.fixture(scope="module")
def model_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("model") / "model.mcz"
    MADCluster(input_terms=None, window_size=12, epochs=1, random_state=0).fit(_series(300, 0)).save(path)
    return path


def _client(model_file, state_dir=None, **limits) -> TestClient:
    store = StreamStore({"model": MADCluster.load(model_file)}, state_dir)
    return TestClient(create_app(store, **limits))


def test_the_readme_curl_example_works_as_written(model_file):
    # curl -s localhost:8000/streams/pump-1 -d '{"rows": [[0.1, 2.3, 5.0]]}'
    response = _client(model_file).post("/streams/pump-1", content='{"rows": [[0.1, 2.3, 5.0]]}', headers=FORM)
    assert response.status_code == 200, response.text
    assert response.json()["steps"] == [0] and response.json()["model"] == "model"


def test_a_form_body_that_is_not_json_names_the_content_type(model_file):
    response = _client(model_file).post("/streams/pump-1", content="rows=1", headers=FORM)
    assert response.status_code == 415
    assert "application/x-www-form-urlencoded" in response.json()["error"]


def test_too_many_rows_get_413_before_parsing(model_file):
    rows = _series(101, 1).tolist()
    response = _client(model_file, max_rows=100).post("/models/model/score", json={"rows": rows})
    assert response.status_code == 413
    assert "101 rows" in response.json()["error"] and "--max-rows" in response.json()["error"]
    ok = _client(model_file, max_rows=100).post("/models/model/score", json={"rows": rows[:100]})
    assert ok.status_code == 200


def test_count_rows_counts_without_parsing():
    assert count_rows(b'{"rows": [[1, 2], [3, 4], [5, 6]]}') == 3
    assert count_rows(b'{"rows": [[1, 2]], "columns": ["a", "b"]}') == 1
    assert count_rows(b"") == 0


def test_requests_over_the_concurrency_limit_get_503():
    release = asyncio.Event()

    async def slow_app(scope, receive, send):
        await release.wait()
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"{}"})

    limited = BodyLimit(slow_app, max_bytes=10_000, max_rows=10, max_concurrent=2)

    async def request(body: bytes) -> int:
        sent: list = []

        async def receive():
            return {"type": "http.request", "body": body, "more_body": False}

        async def send(message):
            sent.append(message)

        await limited({"type": "http", "method": "POST", "headers": []}, receive, send)
        return sent[0]["status"]

    async def run() -> list[int]:
        first = [asyncio.create_task(request(b'{"rows": [[1]]}')) for _ in range(2)]
        await asyncio.sleep(0.05)
        third = await request(b'{"rows": [[1]]}')  # two in flight: refused at once
        release.set()
        return [third, *await asyncio.gather(*first)]

    statuses = asyncio.run(run())
    assert statuses == [503, 200, 200]
    assert limited.in_flight == 0 and limited.rows_in_flight == 0


def test_an_update_does_not_wait_for_a_state_file_being_written(model_file, tmp_path, monkeypatch):
    started, release = threading.Event(), threading.Event()
    original = StreamScorer.save

    def slow_save(self, path, state=None):  # a slow disk: the write waits until released
        started.set()
        release.wait(10)
        return original(self, path, state)

    monkeypatch.setattr(StreamScorer, "save", slow_save)
    store = StreamStore({"model": MADCluster.load(model_file)}, tmp_path, save_interval=3600)
    x = _series(20, 3)
    store.update("s", None, x[:1].tolist(), None)
    saver = threading.Thread(target=store.flush)
    saver.start()
    try:
        assert started.wait(10)
        assert store.try_update("s", None, x[1:2].tolist(), None) is not None  # not busy: the lock is free
    finally:
        release.set()
        saver.join(10)
    assert (tmp_path / "s.mcs").is_file()


def test_state_dir_saves_changed_streams_once_an_interval_and_at_shutdown(model_file, tmp_path, monkeypatch):
    saves: list[str] = []
    original = StreamScorer.save

    def counting_save(self, path, *state):
        saves.append(str(path))
        return original(self, path, *state)

    monkeypatch.setattr(StreamScorer, "save", counting_save)
    model = MADCluster.load(model_file)
    store = StreamStore({"model": model}, tmp_path, save_interval=3600)
    x = _series(60, 2)
    for i in range(50):
        store.update("s", None, x[i : i + 1].tolist(), None)
    assert saves == [], "no write per update"
    store.stop()
    assert len(saves) == 1
    again = StreamStore({"model": model}, tmp_path, save_interval=3600)
    rest = again.update("s", None, x[50:].tolist(), None).result.scores
    again.stop()
    np.testing.assert_allclose(rest, model.decision_function(x)[50:], atol=1e-5, rtol=0)


def test_the_saver_thread_saves_within_its_interval(model_file, tmp_path):
    store = StreamStore({"model": MADCluster.load(model_file)}, tmp_path, save_interval=0.1)
    store.update("s", None, _series(5, 3).tolist(), None)
    deadline = time.monotonic() + 5
    while not (tmp_path / "s.mcs").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    store.stop()
    assert (tmp_path / "s.mcs").exists()


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["serve", "m.mcz", "--port", "-1"], "--port: must be from 1 to 65535"),
        (["serve", "m.mcz", "--port", "99999"], "--port: must be from 1 to 65535"),
        (["serve", "m.mcz", "--max-body-bytes", "-5"], "--max-body-bytes: must be 1024 or more"),
        (["serve", "m.mcz", "--max-rows", "0"], "--max-rows: must be 1 or more"),
        (["serve", "m.mcz", "--max-concurrent", "0"], "--max-concurrent"),
        (["serve", "m.mcz", "--graceful-seconds", "-1"], "--graceful-seconds"),
        (["serve", "m.mcz", "--state-interval", "nan"], "--state-interval"),
        (["fit", "x.csv", "-o", "m.mcz", "--seed", "-5"], "--seed: must be from 0 to 4294967295"),
        (["fit", "x.csv", "-o", "m.mcz", "--lr", "1e9"], "--lr: must be in (0, 1]"),
        (["fit", "x.csv", "-o", "m.mcz", "--lr", "0"], "--lr: must be in (0, 1]"),
        (["fit", "x.csv", "-o", "m.mcz", "--rho", "2"], "--rho"),
        (["fit", "x.csv", "-o", "m.mcz", "--roughness-window", "-1"], "--roughness-window"),
        (["fit", "x.csv", "-o", "m.mcz", "--image-size", "0"], "--image-size: must be from 8 to 4096"),
        (["fit", "x.csv", "-o", "m.mcz", "--threads", "0"], "--threads"),
    ],
)
def test_options_out_of_range_are_refused_at_parse_time_in_one_line(argv, says, capsys):
    start = time.perf_counter()
    with pytest.raises(SystemExit) as stop:
        main(argv)
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert says in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 2  # the message and where to look
    assert time.perf_counter() - start < 5


def test_threads_above_the_cores_are_capped_with_a_warning(capsys):
    from madcluster.cli import build_parser
    from madcluster.threads import available_cores

    args = build_parser({"serve"}).parse_args(["serve", "m.mcz", "--threads", "1000"])
    assert args.threads == available_cores()
    assert "--threads 1000 is more than" in capsys.readouterr().err


def test_a_busy_port_is_one_line_and_exit_2(model_file, capsys):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        with pytest.raises(PortError, match="in use"):
            check_port_free("127.0.0.1", port)
        assert main(["serve", str(model_file), "--port", str(port)]) == 2
    err = capsys.readouterr().err
    assert f"port {port} on 127.0.0.1 is in use" in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize(
    ("body", "says"),
    [
        ({"rows": [[1, 2, 3], [1, 2]]}, "row 0 has 3 values, row 1 has 2"),
        ({"rows": [[1, 2, 3]], "columns": ["a", "a", "b"]}, "columns name 'a' more than once"),
        ({"rows": [[1, float("nan"), 3]], "columns": ["x", "y", "z"]}, "column 'y'"),
    ],
)
def test_request_errors_name_the_real_cause(model_file, body, says):
    import json

    response = _client(model_file).post("/streams/e", content=json.dumps(body), headers={"content-type": "application/json"})
    assert response.status_code == 400, response.text
    assert says in response.json()["error"]
    assert "inhomogeneous" not in response.json()["error"]


def test_every_curl_example_in_the_readme_and_docs_works_as_written(model_file):
    """Each ``curl -s localhost:8000/PATH -d 'BODY'`` line, sent as curl sends it (form type)."""
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    client = _client(model_file)
    found = 0
    docs = (root / "README.md", root / "docs" / "serving.md", root / "docs" / "deployment.md",
            root / "src" / "madcluster" / "cli" / "deploy.py")
    for doc in docs:
        for path, body in re.findall(r"curl -s localhost:8000(/\S+) -d '([^']*)'", doc.read_text()):
            response = client.post(path, content=body, headers=FORM)
            assert response.status_code == 200, (doc.name, path, response.text)
            found += 1
    assert found >= 3
