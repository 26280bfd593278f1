"""``run_server`` without a socket: uvicorn, the port check and ``create_app`` recorded, its lines on
stderr read whole (the fifth mutation run's survivors: only a slow subprocess test started a
server, and the token test looked for two phrases)."""

from __future__ import annotations

import warnings

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")

from series_helpers import three_channels

from madcluster import MADCluster
from madcluster.exceptions import FarFromTrainingWarning
from madcluster.serve import app as app_module
from madcluster.serve import run
from madcluster.serve.kept import KeptModels, fingerprint


@pytest.fixture(scope="module")
def model():
    return MADCluster(input_terms=None, window_size=12, epochs=1, random_state=0).fit(
        three_channels(200, 0)
    )


@pytest.fixture
def started(monkeypatch):
    """What ``run_server`` passed on: the port checked, ``create_app``'s and uvicorn's arguments,
    the torch threads."""
    import torch
    import uvicorn

    seen: dict = {}
    make = app_module.create_app

    def create_app(store, *args, **kwargs):
        seen["store"], seen["app_args"], seen["app_kwargs"] = store, args, kwargs
        return make(store, *args, **kwargs)

    monkeypatch.setattr(run, "check_port_free", lambda host, port: seen.update(port=(host, port)))
    monkeypatch.setattr(app_module, "create_app", create_app)
    monkeypatch.setattr(uvicorn, "run", lambda app, **kwargs: seen.update(app=app, uvicorn=kwargs))
    monkeypatch.setattr(torch, "set_num_threads", lambda n: seen.update(threads=n))
    monkeypatch.delenv("MADCLUSTER_TOKEN", raising=False)
    return seen


def test_every_option_reaches_the_store_the_app_and_uvicorn(model, tmp_path, started, capsys):
    model.save(tmp_path / "m.mcz")
    with warnings.catch_warnings():
        run.run_server(
            tmp_path / "m.mcz",
            host="0.0.0.0",
            port=8123,
            state_dir=tmp_path / "state",
            max_body_bytes=5000,
            threads=2,
            graceful_seconds=7.0,
            log_level="warning",
            max_rows=300,
            max_concurrent=3,
            state_interval=0,
            max_streams=40,
            idle_seconds=0,
            body_seconds=9.0,
            max_stream_memory=1 << 20,
        )
        ignored = warnings.filters[0]
    assert ignored[0] == "ignore" and ignored[2] is FarFromTrainingWarning
    assert started["port"] == ("0.0.0.0", 8123) and started["threads"] == 2
    store = started["store"]
    assert (store.save_interval, store.max_streams, store.idle_seconds) == (0, 40, 0)
    assert store.max_stream_memory == 1 << 20 and store.state_dir == tmp_path / "state"
    assert started["app_args"] == (5000,)
    assert started["app_kwargs"] == {
        "max_rows": 300,
        "max_concurrent": 3,
        "body_seconds": 9.0,
        "token": None,
        "model_files": {"m": tmp_path / "m.mcz"},
    }
    assert started["uvicorn"] == {
        "host": "0.0.0.0",
        "port": 8123,
        "log_level": "warning",
        "timeout_graceful_shutdown": 7.0,
        "access_log": False,
    }
    assert capsys.readouterr().err == (
        "warning: serving on 0.0.0.0 without a token: anyone who reaches port 8123 can score and "
        "open streams; pass --token (or set MADCLUSTER_TOKEN) so requests need Authorization: "
        "Bearer <token>\n"
        f"serving 1 model(s) from {tmp_path / 'm.mcz'} on http://0.0.0.0:8123, 0 stream(s) "
        "restored\n"
    )


def test_a_token_given_is_used_and_said(model, tmp_path, started, capsys):
    model.save(tmp_path / "m.mcz")
    run.run_server(tmp_path / "m.mcz", host="0.0.0.0", port=8123, token="given")
    assert started["app_kwargs"]["token"] == "given"
    assert capsys.readouterr().err == (
        f"serving 1 model(s) from {tmp_path / 'm.mcz'} on http://0.0.0.0:8123, 0 stream(s) "
        "restored, bearer token required\n"
    )


def test_on_localhost_no_token_is_asked_for(model, tmp_path, started, capsys):
    model.save(tmp_path / "m.mcz")
    run.run_server(tmp_path / "m.mcz", host="127.0.0.1", port=8123)
    assert started["app_kwargs"]["token"] is None
    assert "warning" not in capsys.readouterr().err


def test_a_restart_on_a_kept_refit_says_which_version(model, tmp_path, started, capsys):
    model.save(tmp_path / "m.mcz")
    state = tmp_path / "state"
    refit = MADCluster(input_terms=None, window_size=12, epochs=1, random_state=1).fit(
        three_channels(200, 1, 0.5)
    )
    KeptModels(state).keep("m", 2, refit, fingerprint(model))
    run.run_server(tmp_path / "m.mcz", port=8123, state_dir=state)
    assert capsys.readouterr().err == (
        f"serving 1 model(s) from {tmp_path / 'm.mcz'} (resumed at m v2: see {state / 'models'}) "
        "on http://127.0.0.1:8123, 0 stream(s) restored\n"
    )
