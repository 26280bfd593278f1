"""The server's default limits, in a module light enough for the command line to import before
torch and FastAPI load (``madcluster serve --help``, the busy-port check)."""

from __future__ import annotations

DEFAULT_MAX_BODY_BYTES = 8 * 1024 * 1024
# rows per request: 20,000 rows of 8 columns took about 4 s and 170 MB on a busy 2-core machine
DEFAULT_MAX_ROWS = 20_000
DEFAULT_MAX_CONCURRENT = 64  # requests in flight; rows in flight are held to 2 x max rows
DEFAULT_SAVE_INTERVAL = 1.0  # seconds between saves of the streams that changed (--state-dir)

__all__ = ["DEFAULT_MAX_BODY_BYTES", "DEFAULT_MAX_CONCURRENT", "DEFAULT_MAX_ROWS", "DEFAULT_SAVE_INTERVAL"]
