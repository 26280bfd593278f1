"""The server's Prometheus metrics on their own: every metric's name and help text as exposed,
and a request's latency in its buckets (the fifth mutation run's survivors: the tests looked
for a few names in ``/metrics``)."""

from __future__ import annotations

import pytest

pytest.importorskip("prometheus_client")

from madcluster.serve.metrics import ServerMetrics


def _lines(metrics: ServerMetrics) -> list[str]:
    return metrics.exposition().decode().splitlines()


def test_every_metric_is_exposed_with_its_help():
    helps = [line for line in _lines(ServerMetrics()) if line.startswith("# HELP")]
    assert [h for h in helps if "_created " not in h] == [
        "# HELP madcluster_requests_total HTTP requests by route, method and status code",
        "# HELP madcluster_request_seconds Request latency in seconds by route",
        "# HELP madcluster_rows_scored_total Rows scored per model",
        "# HELP madcluster_flags_total Rows flagged (score > threshold) per model",
        (
            "# HELP madcluster_far_rows_total Rows whose value in a column was far from training (10 "
            "training deviations), per model and column, counted where most rows of a request were"
        ),
        "# HELP madcluster_streams_open Open streams",
        (
            "# HELP madcluster_stream_memory_bytes Bytes the streams in memory hold, as measured "
            "(--max-stream-memory bounds it)"
        ),
        "# HELP madcluster_stream_score The latest at-once score of a stream",
        (
            "# HELP madcluster_stream_incident_open 1 while a stream has an open incident "
            "(docs/incidents.md), else 0"
        ),
    ]


def test_a_requests_latency_lands_in_its_buckets():
    metrics = ServerMetrics()
    metrics.observe_request("/models", "GET", 200, 0.003)
    lines = _lines(metrics)
    assert 'madcluster_requests_total{endpoint="/models",method="GET",status="200"} 1.0' in lines
    buckets = [line for line in lines if line.startswith("madcluster_request_seconds_bucket")]
    assert buckets[:3] == [
        'madcluster_request_seconds_bucket{endpoint="/models",le="0.001"} 0.0',
        'madcluster_request_seconds_bucket{endpoint="/models",le="0.0025"} 0.0',
        'madcluster_request_seconds_bucket{endpoint="/models",le="0.005"} 1.0',
    ]
    assert len(buckets) == 14 and buckets[-1].endswith('le="+Inf"} 1.0')
