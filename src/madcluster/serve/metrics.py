"""Prometheus metrics of one server: requests, latency, rows scored and flags per model, and per
stream its latest at-once score and whether an incident is open (what an Alertmanager rule pages
on: ``docs/serving.md``).

Each app gets its own ``CollectorRegistry`` (no module-level state), exposed at ``GET /metrics``.
The per-stream gauges are labelled ``stream`` and ``model`` and bounded: at most
:data:`STREAM_SERIES` streams are exported, those updated last (a closed stream's series leave at
once; an expired stream's stay, with its open incident, until newer streams push them out).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest

#: Streams with exported gauges at most (two series each), the latest updated.
STREAM_SERIES = 1000
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
        self.far_rows = Counter(
            "madcluster_far_rows",
            "Rows whose value in a column was far from training (10 training deviations), per "
            "model and column, counted where most rows of a request were",
            ["model", "column"],
            registry=self.registry,
        )
        self.streams = Gauge("madcluster_streams_open", "Open streams", registry=self.registry)
        self.stream_memory = Gauge(
            "madcluster_stream_memory_bytes",
            "Bytes the streams in memory hold, as measured (--max-stream-memory bounds it)",
            registry=self.registry,
        )
        self.stream_score = Gauge(
            "madcluster_stream_score",
            "The latest at-once score of a stream",
            ["stream", "model"],
            registry=self.registry,
        )
        self.incident_open = Gauge(
            "madcluster_stream_incident_open",
            "1 while a stream has an open incident (docs/incidents.md), else 0",
            ["stream", "model"],
            registry=self.registry,
        )
        self._exported: OrderedDict[str, str] = OrderedDict()  # stream -> model, oldest first
        self._exporting = threading.Lock()  # updates come from the event loop and the thread pool

    def observe_request(self, endpoint: str, method: str, status: int, seconds: float) -> None:
        self.requests.labels(endpoint, method, str(status)).inc()
        self.latency.labels(endpoint).observe(seconds)

    def observe_scores(
        self, model: str, n_rows: int, n_flags: int, far: Sequence[Mapping[str, Any]] = ()
    ) -> None:
        self.rows.labels(model).inc(n_rows)
        self.flags.labels(model).inc(n_flags)
        for column in far:  # estimator.far_columns: columns far from training on most rows
            self.far_rows.labels(model, str(column["column"])).inc(column["rows"])

    def observe_stream(self, stream: str, model: str, result: Any) -> None:
        """A stream update's ``result`` (a StreamResult): the gauges of ``stream``."""
        with self._exporting:
            if self._exported.get(stream, model) != model:
                self._forget(stream)
            self._exported[stream] = model
            self._exported.move_to_end(stream)
            if len(result.scores):
                self.stream_score.labels(stream, model).set(float(result.scores[-1]))
            self.incident_open.labels(stream, model).set(1.0 if result.incident_open else 0.0)
            while len(self._exported) > STREAM_SERIES:
                self._forget(next(iter(self._exported)))

    def forget_stream(self, stream: str) -> None:
        """Drop a stream's gauges (a closed stream's)."""
        with self._exporting:
            self._forget(stream)

    def _forget(self, stream: str) -> None:
        model = self._exported.pop(stream, None)
        if model is not None:
            for gauge in (self.stream_score, self.incident_open):
                try:
                    gauge.remove(stream, model)
                except KeyError:
                    pass

    def exposition(self) -> bytes:
        return generate_latest(self.registry)
