"""Start the server: load the models, restore streams, run uvicorn until SIGTERM / Ctrl-C.

uvicorn's shutdown on SIGTERM stops accepting connections and lets requests in flight finish
(up to ``graceful_seconds``); stream states are saved after every update, so nothing is lost.
"""

from __future__ import annotations

import logging
from pathlib import Path

import torch

from madcluster.serve.app import DEFAULT_MAX_BODY_BYTES, create_app
from madcluster.serve.registry import StreamStore, load_models

logger = logging.getLogger(__name__)


def run_server(
    model_path: str | Path,
    host: str = "127.0.0.1",
    port: int = 8000,
    state_dir: str | Path | None = None,
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
    threads: int = 1,
    graceful_seconds: float = 30.0,
    log_level: str = "info",
) -> None:
    import uvicorn

    torch.set_num_threads(threads)
    store = StreamStore(load_models(model_path), state_dir)
    logger.warning("serving %d model(s) from %s, %d stream(s) restored", len(store.models), model_path, len(store))
    app = create_app(store, max_body_bytes)
    uvicorn.run(app, host=host, port=port, log_level=log_level, timeout_graceful_shutdown=graceful_seconds, access_log=False)
