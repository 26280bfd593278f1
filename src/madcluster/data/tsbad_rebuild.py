"""Rebuild TSB-AD-M's MSL, SMAP and SMD series from the benchmark arrays (``shared/datasets``).

TSB-AD cut each of those series from one entity's test set; it does not publish the files in a
form this project can fetch, but its per-series table (``multi_mergedTable_VUS-PR.csv``, kept in
``benchmarks/results/tsbad/published_vus_pr.csv``) gives each file's name (N and F, the first
anomaly), length and anomaly counts. A series is matched to the entity whose test set has the
same length and whose first anomalous point is F, then its labels are checked against the table's
anomaly length and anomaly count. Nothing is matched by hand.
"""

from __future__ import annotations

import csv
import io
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from madcluster.atomic import atomic_write_text
from madcluster.data.datasets import load_dataset
from madcluster.data.train_test import Dataset
from madcluster.data.tsbad import TsbadName, parse_tsbad_name
from madcluster.exceptions import DataError

SOURCE_DATASETS = ("MSL", "SMAP", "SMD")


@dataclass(frozen=True)
class PublishedSeries:
    """One row of TSB-AD's published table: the file and what the table says about its labels."""

    name: TsbadName
    length: int
    anomaly_points: int
    anomaly_events: int
    vus_pr: dict[str, float]  # published VUS-PR per detector


@dataclass(frozen=True)
class RebuiltSeries:
    """A TSB-AD series rebuilt from an entity's test set (``data.train`` = its first N points)."""

    published: PublishedSeries
    entity: str
    data: Dataset


def read_published_table(path: str | os.PathLike[str]) -> list[PublishedSeries]:
    """The published VUS-PR table (``file``, one column per detector, ``ts_len``, ``anomaly_len``,
    ...)."""
    with open(path, newline="") as fh:
        rows = list(csv.DictReader(fh))
    meta = {
        "file",
        "ts_len",
        "anomaly_len",
        "num_anomaly",
        "avg_anomaly_len",
        "anomaly_ratio",
        "point_anomaly",
        "seq_anomaly",
    }
    if not rows or "file" not in rows[0]:
        raise DataError(f"{path} is not TSB-AD's per-series table (no 'file' column)")
    detectors = [c for c in rows[0] if c not in meta]
    return [
        PublishedSeries(
            name=parse_tsbad_name(r["file"]),
            length=int(r["ts_len"]),
            anomaly_points=int(r["anomaly_len"]),
            anomaly_events=int(r["num_anomaly"]),
            vus_pr={d: float(r[d]) for d in detectors if r[d] != ""},
        )
        for r in rows
    ]


def _events(labels: np.ndarray) -> int:
    padded = np.concatenate([[0], labels.astype(np.int8), [0]])
    return int(np.count_nonzero(np.diff(padded) == 1))


def rebuild_series(
    published: list[PublishedSeries], data_dir: str | os.PathLike[str] | None = None
) -> tuple[list[RebuiltSeries], list[str]]:
    """Match every published MSL / SMAP / SMD series to an entity; ``(rebuilt, unmatched notes)``.

    Raises ``DataError`` when a match's labels disagree with the table (the data differs) and
    ``DatasetNotFoundError`` (from :func:`load_dataset`) when a source dataset is missing.
    """
    rebuilt: list[RebuiltSeries] = []
    unmatched: list[str] = []
    by_source: dict[str, Dataset] = {}
    for row in published:
        source = row.name.dataset
        if source not in SOURCE_DATASETS:
            continue
        if source not in by_source:
            by_source[source] = load_dataset(source, data_dir)
        full = by_source[source]
        hits = []
        for entity in full.iter_entities():
            labels = entity.labels
            if (
                len(labels) == row.length
                and labels.any()
                and int(np.argmax(labels)) == row.name.first_anomaly
            ):
                hits.append(entity)
        if len(hits) != 1:
            unmatched.append(
                f"{row.name.file_name}: {len(hits)} entities of {source} match "
                f"(test length {row.length}, first anomaly {row.name.first_anomaly})"
            )
            continue
        entity = hits[0]
        points, events = int(entity.labels.sum()), _events(entity.labels)
        if (points, events) != (row.anomaly_points, row.anomaly_events):
            raise DataError(
                f"{row.name.file_name} matches {entity.name} by length and first anomaly, but its "
                f"labels have {points} anomalous points in {events} events where TSB-AD's table "
                f"says {row.anomaly_points} in {row.anomaly_events}"
            )
        n = row.name.train_length
        series = Dataset(
            name=row.name.stem,
            train=entity.test[:n],
            test=entity.test,
            labels=entity.labels,
            columns=entity.columns,
        )
        rebuilt.append(RebuiltSeries(row, entity.entities[0].name, series))
    return rebuilt, unmatched


def write_tsbad_csv(series: Dataset, path: str | os.PathLike[str]) -> None:
    """Write a series in TSB-AD's format: feature columns, then ``Label`` (atomic)."""
    names = series.columns or [f"{i}" for i in range(series.n_features)]
    buffer = io.StringIO()
    # 9 significant digits round-trip float32 exactly.
    fmt = ["%.9g"] * series.n_features + ["%d"]
    table = np.column_stack([series.test.astype(np.float64), series.labels])
    np.savetxt(
        buffer, table, fmt=fmt, delimiter=",", header=",".join([*names, "Label"]), comments=""
    )
    atomic_write_text(Path(path), buffer.getvalue())


__all__ = [
    "SOURCE_DATASETS",
    "PublishedSeries",
    "RebuiltSeries",
    "read_published_table",
    "rebuild_series",
    "write_tsbad_csv",
]
