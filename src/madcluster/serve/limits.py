"""The server's default limits, in a module light enough for the command line to import before
torch and FastAPI load (``madcluster serve --help``, the busy-port check)."""

from __future__ import annotations

DEFAULT_MAX_BODY_BYTES = 8 * 1024 * 1024
# rows per request: 20,000 rows of 8 columns took about 4 s and 170 MB on a busy 2-core machine
DEFAULT_MAX_ROWS = 20_000
DEFAULT_MAX_CONCURRENT = 64  # requests in flight; rows in flight are held to 2 x max rows
DEFAULT_SAVE_INTERVAL = 1.0  # seconds between saves of the streams that changed (--state-dir)
# streams known at once (in memory or expired to --state-dir); a stream of the default model on
# 8 columns holds about 17 KiB new and 93 KiB once it has run a while (docs/serving.md, Memory)
DEFAULT_MAX_STREAMS = 10_000
# bytes the streams in memory may hold (their measured arrays and overhead): past it the least
# recently used are parked to --state-dir, or new streams get 507 without one
DEFAULT_MAX_STREAM_MEMORY = 1 << 30
DEFAULT_IDLE_SECONDS = 3600.0  # a stream not updated for an hour is expired (0: never)
DEFAULT_BODY_SECONDS = 10.0  # a request body not complete after this long gets 408
TOKEN_ENV = "MADCLUSTER_TOKEN"  # the bearer token, when --token is not given

__all__ = [
    "DEFAULT_BODY_SECONDS",
    "DEFAULT_IDLE_SECONDS",
    "DEFAULT_MAX_BODY_BYTES",
    "DEFAULT_MAX_CONCURRENT",
    "DEFAULT_MAX_ROWS",
    "DEFAULT_MAX_STREAMS",
    "DEFAULT_MAX_STREAM_MEMORY",
    "DEFAULT_SAVE_INTERVAL",
    "TOKEN_ENV",
]
