"""Start the server: load the models, restore streams, run uvicorn until SIGTERM / Ctrl-C.

uvicorn's shutdown on SIGTERM stops accepting connections and lets requests in flight finish
(up to ``graceful_seconds``); then the streams changed since the last save are saved, so SIGTERM
loses nothing (a crash loses at most the last ``state_interval``).
"""

from __future__ import annotations

import errno
import ipaddress
import os
import socket
import sys
import warnings
from pathlib import Path

from madcluster.exceptions import FarFromTrainingWarning, MADClusterError
from madcluster.serve.limits import (
    DEFAULT_BODY_SECONDS,
    DEFAULT_IDLE_SECONDS,
    DEFAULT_MAX_BODY_BYTES,
    DEFAULT_MAX_CONCURRENT,
    DEFAULT_MAX_ROWS,
    DEFAULT_MAX_STREAM_MEMORY,
    DEFAULT_MAX_STREAMS,
    DEFAULT_SAVE_INTERVAL,
    TOKEN_ENV,
)
from madcluster.threads import resolve_threads


def run_server(
    model_path: str | Path,
    host: str = "127.0.0.1",
    port: int = 8000,
    state_dir: str | Path | None = None,
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
    threads: int = 1,
    graceful_seconds: float = 30.0,
    log_level: str = "info",
    max_rows: int = DEFAULT_MAX_ROWS,
    max_concurrent: int = DEFAULT_MAX_CONCURRENT,
    state_interval: float = DEFAULT_SAVE_INTERVAL,
    max_streams: int = DEFAULT_MAX_STREAMS,
    idle_seconds: float = DEFAULT_IDLE_SECONDS,
    body_seconds: float = DEFAULT_BODY_SECONDS,
    token: str | None = None,
    max_stream_memory: int = DEFAULT_MAX_STREAM_MEMORY,
) -> None:
    check_port_free(
        host, port
    )  # before torch, FastAPI and the models load: a busy port says so at once
    token = token or os.environ.get(TOKEN_ENV) or None
    if token is None and not is_loopback(host):
        print(
            f"warning: serving on {host} without a token: anyone who reaches port {port} can "
            "score and open streams; "
            f"pass --token (or set {TOKEN_ENV}) so requests need Authorization: Bearer <token>",
            file=sys.stderr,
            flush=True,
        )
    import torch
    import uvicorn

    from madcluster.serve.app import create_app
    from madcluster.serve.models import load_models, model_files
    from madcluster.serve.registry import StreamStore

    torch.set_num_threads(resolve_threads(threads))
    # the answers carry far_columns and /metrics counts them: the API's warning would say it again
    # in the log, once per distinct message
    warnings.filterwarnings("ignore", category=FarFromTrainingWarning)
    files = model_files(model_path)
    store = StreamStore(
        load_models(model_path),
        state_dir,
        save_interval=state_interval,
        max_streams=max_streams,
        idle_seconds=idle_seconds,
        max_stream_memory=max_stream_memory,
    )
    guarded = ", bearer token required" if token else ""
    later = [f"{name} v{v}" for name, v in sorted(store.versions.items()) if v > 1]
    resumed = (
        f" (resumed at {', '.join(later)}: see {store.kept.path})" if later and store.kept else ""
    )
    print(
        f"serving {len(store.models)} model(s) from {model_path}{resumed} on "
        f"http://{host}:{port}, {len(store)} stream(s) restored"
        f"{guarded}",
        file=sys.stderr,
        flush=True,
    )
    app = create_app(
        store,
        max_body_bytes,
        max_rows=max_rows,
        max_concurrent=max_concurrent,
        body_seconds=body_seconds,
        token=token,
        model_files=files,
    )
    uvicorn.run(
        app,
        host=host,
        port=port,
        log_level=log_level,
        timeout_graceful_shutdown=graceful_seconds,
        access_log=False,
    )


def is_loopback(host: str) -> bool:
    """Whether ``host`` is this machine only (127.0.0.0/8, ::1, localhost)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class PortError(MADClusterError):
    """The address to listen on is taken or cannot be used."""


def check_port_free(host: str, port: int) -> None:
    """Bind ``host:port`` once, as uvicorn will, and say in one line why it cannot be used."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        raise PortError(
            f"--host {host!r} is not an address of this machine: {exc.strerror}"
        ) from None
    family, kind, proto, _, address = infos[0]
    with socket.socket(family, kind, proto) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(address)
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                raise PortError(
                    f"port {port} on {host} is in use by another program: stop it or pass another "
                    "--port"
                ) from None
            if exc.errno == errno.EACCES:
                raise PortError(
                    f"no permission to listen on port {port} (ports below 1024 need privileges): "
                    "pass --port 1024 or more"
                ) from None
            raise PortError(f"cannot listen on {host}:{port}: {exc.strerror}") from None
