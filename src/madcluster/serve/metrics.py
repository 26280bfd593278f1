"""Prometheus metrics of one server: requests, latency, rows scored and flags per model.

Each app gets its own ``CollectorRegistry`` (no module-level state), exposed at ``GET /metrics``.
"""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest

LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)


class ServerMetrics:
    """The server's counters; ``endpoint`` labels are route templates, never raw paths."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.requests = Counter(
            "madcluster_requests",
            "HTTP requests by route, method and status code",
            ["endpoint", "method", "status"],
            registry=self.registry,
        )
        self.latency = Histogram(
            "madcluster_request_seconds",
            "Request latency in seconds by route",
            ["endpoint"],
            buckets=LATENCY_BUCKETS,
            registry=self.registry,
        )
        self.rows = Counter(
            "madcluster_rows_scored", "Rows scored per model", ["model"], registry=self.registry
        )
        self.flags = Counter(
            "madcluster_flags",
            "Rows flagged (score > threshold) per model",
            ["model"],
            registry=self.registry,
        )
        self.streams = Gauge("madcluster_streams_open", "Open streams", registry=self.registry)

    def observe_request(self, endpoint: str, method: str, status: int, seconds: float) -> None:
        self.requests.labels(endpoint, method, str(status)).inc()
        self.latency.labels(endpoint).observe(seconds)

    def observe_scores(self, model: str, n_rows: int, n_flags: int) -> None:
        self.rows.labels(model).inc(n_rows)
        self.flags.labels(model).inc(n_flags)

    def exposition(self) -> bytes:
        return generate_latest(self.registry)
