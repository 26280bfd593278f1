"""The ``serve`` and ``export`` commands: deployment paths for a fitted model.

Both import their optional stacks (FastAPI / uvicorn, onnx / onnxruntime) only when run, so the
core install and ``import madcluster`` stay as they are.
"""

from __future__ import annotations

import argparse

from madcluster.cli.arg_types import byte_size, float_in_range, int_in_range, threads_option
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

SERVE_DESCRIPTION = """\
Serve a model file (.mcz) or a fleet folder of them over HTTP (FastAPI + uvicorn; install with
pip install "madcluster[serve]").

Endpoints (JSON in and out; rows oldest first, one number per column):
  GET  /health                   status, models, open streams
  GET  /models                   each model's columns, window size, threshold, whether it streams,
                                 after how many rows its scores are final (final_after_rows)
  POST /models/{model}/score     {"rows": [[...], ...], "columns": [...]}: scores and flags of a
                                 whole series (at least one window of rows)
  POST /streams/{stream}         {"rows": [[...]], "model": "..."}: append rows to a stream (opened
                                 on first use; model defaults to the stream's name in a fleet, or
                                 the only model) and get each new row's score and flag at once;
                                 final_steps / final_scores / final_flags: the rows whose scores
                                 became final (with the default's KMeans term, L rows back; a row's
                                 first score reads rows <= t only, its final one the whole series)
  GET|DELETE /streams/{stream}   a stream's model, rows seen and pending (not yet final) scores /
                                 close it
  POST /models/{model}/refit     {"rows": [[...], ...], "save"?, "wait"?, "force"?}: refit the
                                 model on recent normal rows in a child process and swap it in
                                 (open streams go on with it; rows and model are checked first,
                                 "rejected" with the reasons); GET: the refit's state
  GET  /metrics                  Prometheus: requests, latency, rows scored and flags per model
  GET  /docs                     the OpenAPI page

Flags are score > the model's threshold_. Bad requests get a 4xx JSON {"error": "..."} naming the
problem (a value in rows that is not a JSON number, e.g. "1.5" or true, gets 422 naming it). A
request of more than --max-rows rows gets 413; more than --max-concurrent requests, or rows in
flight over twice --max-rows, get 503 (retry); a body not complete within --body-timeout seconds
gets 408; a new stream past --max-streams gets 429, past --max-stream-memory without --state-dir
507 (with it the least recently used streams are parked there). A stream not updated for
--stream-idle-seconds is expired (with --state-dir saved first and read back on its next use).
With --token (or $MADCLUSTER_TOKEN) every endpoint but /health needs Authorization: Bearer TOKEN
(401 and a log line otherwise). A gzip body (Content-Encoding: gzip) is decompressed. \
SIGTERM finishes requests in flight, saves
the streams and exits. With --state-dir the streams that changed are saved every --state-interval
seconds (a crash loses at most that) and restored at start, so streams survive a restart.
A JSON body is read as JSON whatever its Content-Type (curl -d sends a form type).

Example:
  madcluster serve model.mcz --port 8000 --state-dir streams/
  curl -s localhost:8000/streams/pump-1 -d '{"rows": [[0.1, 2.3, 5.0]]}'
"""


def add_deploy_parsers(sub: argparse._SubParsersAction) -> None:
    serve = sub.add_parser(
        "serve",
        help="HTTP scoring service (batch, per-series streams, health, Prometheus metrics)",
        description=SERVE_DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    serve.add_argument(
        "model",
        metavar="MODEL_OR_FLEET_DIR",
        help="a .mcz model file, or a folder of them (one per entity)",
    )
    serve.add_argument(
        "--host",
        default="127.0.0.1",
        help="address to listen on (default: 127.0.0.1, this machine only; 0.0.0.0 for all)",
    )
    serve.add_argument(
        "--port",
        type=int_in_range(1, 65535, " (a TCP port)"),
        default=8000,
        help="TCP port, 1 to 65535 (default: 8000)",
    )
    serve.add_argument(
        "--state-dir",
        default=None,
        help="folder for stream states: streams survive a restart (default: streams live in "
        "memory)",
    )
    serve.add_argument(
        "--state-interval",
        type=float_in_range(0.0),
        default=DEFAULT_SAVE_INTERVAL,
        metavar="SECONDS",
        help="with --state-dir, save the streams that changed every SECONDS; a crash loses at most "
        "that much, SIGTERM loses nothing; 0 saves after every update, at a write per update "
        "(default: 1)",
    )
    serve.add_argument(
        "--max-body-bytes",
        type=int_in_range(1024),
        default=DEFAULT_MAX_BODY_BYTES,
        help="larger request bodies get 413, 1024 or more (default: 8 MiB)",
    )
    serve.add_argument(
        "--max-rows",
        type=int_in_range(1),
        default=DEFAULT_MAX_ROWS,
        help="requests with more rows get 413; rows in flight are held to twice this, beyond it "
        "503 (default: 20000; 50000 rows of 8 columns took 10 s and 250 MB on a busy 2-core "
        "machine)",
    )
    serve.add_argument(
        "--max-concurrent",
        type=int_in_range(1),
        default=DEFAULT_MAX_CONCURRENT,
        help="requests in flight at once; more get 503 with Retry-After (default: 64)",
    )
    serve.add_argument(
        "--threads",
        type=threads_option,
        default=1,
        help="torch threads per request, at most the cores (default: 1; requests run "
        "concurrently in a thread pool)",
    )
    serve.add_argument(
        "--max-streams",
        type=int_in_range(1),
        default=DEFAULT_MAX_STREAMS,
        help="streams open at once (in memory, or expired to --state-dir); a new one past it gets "
        "429 (default: 10000)",
    )
    serve.add_argument(
        "--max-stream-memory",
        type=byte_size,
        default=DEFAULT_MAX_STREAM_MEMORY,
        metavar="SIZE",
        help="memory the streams in memory may hold, as measured (e.g. 512M, 2G; 0: no limit); "
        "past it the least recently used are parked to --state-dir, or without one a new stream "
        "gets 507 (default: 1G; docs/serving.md gives a stream's size)",
    )
    serve.add_argument(
        "--stream-idle-seconds",
        type=float_in_range(0.0),
        default=DEFAULT_IDLE_SECONDS,
        metavar="SECONDS",
        help="expire a stream not updated for this long: closed, or with --state-dir saved and "
        "read back on its next use; 0 never (default: 3600)",
    )
    serve.add_argument(
        "--body-timeout",
        type=float_in_range(0.0, low_open=True),
        default=DEFAULT_BODY_SECONDS,
        metavar="SECONDS",
        help="a request body not complete after this long gets 408, so a slow or broken "
        "client cannot hold a worker (default: 10)",
    )
    serve.add_argument(
        "--token",
        default=None,
        help="bearer token every request but GET /health must send (Authorization: Bearer TOKEN); "
        f"401 and a log line otherwise (default: ${TOKEN_ENV}, else none: set one when --host is "
        "not 127.0.0.1)",
    )
    serve.add_argument(
        "--graceful-seconds",
        type=float_in_range(0.0),
        default=30.0,
        help="on SIGTERM, wait this long for requests in flight (default: 30)",
    )
    serve.add_argument(
        "--log-level",
        default="info",
        choices=["critical", "error", "warning", "info", "debug"],
        help="uvicorn log level",
    )
    serve.set_defaults(func=cmd_serve)

    export = sub.add_parser(
        "export",
        help="export a model to ONNX (a window batch in, per-step scores out)",
        description="Write MODEL.mcz as an ONNX graph (install with pip install "
        '"madcluster[onnx]"). '
        "The graph takes model-input windows [batch, window_size, width] (scaled rows, plus the "
        "roughness channels of the default) and returns the per-step score of every window step, "
        "as the torch model does. The file also holds what turns rows into windows and step "
        "scores into one score per row (scaling, window grid, warm-up calibration, threshold, and "
        "the default's input terms): `madcluster score "
        "MODEL.onnx DATA` and the Python class madcluster.OnnxScorer score rows with onnxruntime "
        "and numpy alone (docs/export.md). The graph computes in float64, as the model scores; the "
        "check compares every step score of 64 probe windows, onnxruntime against torch, within "
        "1e-8 + 1e-8 |score|; a failed export writes no file. Models whose layers do not export "
        "say why.",
    )
    export.add_argument("model", metavar="MODEL.mcz", help="a model file from `madcluster fit`")
    export.add_argument("-o", "--output", required=True, help="the .onnx file to write")
    export.add_argument(
        "--no-check",
        action="store_true",
        help="skip the check that onnxruntime gives the torch scores",
    )
    export.set_defaults(func=cmd_export)


def cmd_serve(args: argparse.Namespace) -> int:
    from madcluster.serve.run import check_port_free

    # in a fraction of a second, before the server stack loads
    check_port_free(args.host, args.port)
    try:
        import fastapi  # noqa: F401 - the serve extra, named in the message below when missing
        import uvicorn  # noqa: F401

        from madcluster.serve.run import run_server
    except ImportError as exc:
        raise ImportError(
            f'`madcluster serve` needs the serve extra: pip install "madcluster[serve]" ({exc})'
        ) from None
    run_server(
        args.model,
        host=args.host,
        port=args.port,
        state_dir=args.state_dir,
        max_body_bytes=args.max_body_bytes,
        threads=args.threads,
        graceful_seconds=args.graceful_seconds,
        log_level=args.log_level,
        max_rows=args.max_rows,
        max_concurrent=args.max_concurrent,
        state_interval=args.state_interval,
        max_streams=args.max_streams,
        max_stream_memory=args.max_stream_memory,
        idle_seconds=args.stream_idle_seconds,
        body_seconds=args.body_timeout,
        token=args.token,
    )
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    from pathlib import Path

    from madcluster.atomic import check_output_path
    from madcluster.exceptions import ModelFileError

    if not Path(args.model).is_file():  # before torch loads (seconds)
        raise ModelFileError(
            f"model file {args.model!r} does not exist: train one with `madcluster fit`"
        )
    check_output_path(args.output, what="ONNX file", not_same_as=[args.model])

    from madcluster.estimator.detector import MADCluster
    from madcluster.estimator.export import export_onnx

    report = export_onnx(MADCluster.load(args.model).model_, args.output, check=not args.no_check)
    checked = ""
    if report.get("max_abs_diff") is not None:
        checked = (
            f"; checked {report['compared']}: max abs diff {report['max_abs_diff']:.2e} "
            f"(tolerance {report['tolerance']})"
        )
    if report.get("rows_max_abs_diff") is not None:
        checked += (
            f"; checked {report['rows_compared']}: max abs diff "
            f"{report['rows_max_abs_diff']:.2e} (tolerance {report['rows_tolerance']})"
        )
    if report.get("why_float32"):
        checked += f"; a float32 graph: {report['why_float32']}"
    print(
        f"wrote {args.output}: input {report['input']} {report['input_shape']}, output "
        f"{report['output']}{checked}"
    )
    print(
        f"score it without torch: madcluster score {args.output} DATA, or madcluster.OnnxScorer "
        "(docs/export.md)"
    )
    return 0


def score_onnx_command(args: argparse.Namespace, outputs: tuple[str, str | None]) -> int:
    """``madcluster score model.onnx DATA``: scores with onnxruntime and numpy alone (no torch:
    :class:`madcluster.OnnxScorer`), the same CSV and plot as a ``.mcz`` model gives, without
    the per-channel attribution (it needs the torch model). Imports no torch, pandas or
    matplotlib, so the torch-free install runs it (docs/export.md: "The torch-free install");
    without matplotlib the plot is skipped with a note."""
    from madcluster import OnnxScorer
    from madcluster.cli.console import print_note
    from madcluster.cli.input_options import check_input_columns, read_input
    from madcluster.cli.score_outputs import write_score_outputs
    from madcluster.data.columns import model_ordered_values
    from madcluster.exceptions import OutputPathError

    output, plot = outputs
    if args.figures:
        raise OutputPathError(
            "--figures needs the .mcz model (the figures read the torch network's features)"
        )
    if args.device not in (None, "cpu"):
        print_note(
            args, f"--device {args.device} ignored: ONNX files score with onnxruntime on the CPU"
        )
    scorer = OnnxScorer(args.model)
    table = read_input(args.data, args)
    check_input_columns(table, args, scorer)
    scores = scorer.decision_function(model_ordered_values(table, args.data, scorer))
    threshold = scorer.threshold_ if args.threshold is None else args.threshold
    write_score_outputs(
        table,
        args.data,
        scores,
        threshold,
        output,
        plot,
        engine="onnxruntime",
        plot_tag="ONNX",
        plot_args=args,
    )
    return 0
