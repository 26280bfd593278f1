"""TSB-AD's CSV series (Liu & Paparrizos, "The Elephant in the Room: Towards A Reliable Time-Series
Anomaly Detection Benchmark", NeurIPS 2024 Datasets & Benchmarks).

Each TSB-AD file is one series: feature columns, then a ``Label`` column (1 = anomalous point). The
file name ``[i]_[dataset]_id_[k]_[domain]_tr_[N]_1st_[F].csv`` carries N, the number of leading
points a semi-supervised detector may train on, and F, the index of the first anomalous point.
TSB-AD's protocol trains on ``series[:N]`` and scores the **whole** series (training part
included), so here a series becomes a :class:`Dataset` with ``train = series[:N]`` and
``test = series`` (labels for every point). Rows with a missing value are dropped, as TSB-AD's
runner does (``pd.read_csv(path).dropna()``), with a warning.

A folder of such files loads as one :class:`Dataset` with one entity per file when every file has
the same number of features (e.g. one source dataset); :func:`read_tsbad_folder` returns the series
one by one for mixed folders.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from madcluster.data.io import read_frame
from madcluster.data.table import as_labels
from madcluster.data.train_test import Dataset, Entity
from madcluster.data.validation import check_series
from madcluster.exceptions import DataError, DatasetNotFoundError

logger = logging.getLogger(__name__)

LABEL_COLUMN = "Label"
FILE_NAME = re.compile(
    r"^(?P<index>\d+)_(?P<dataset>.+?)_id_(?P<id>\d+)_(?P<domain>.+?)_tr_(?P<train>\d+)"
    r"_1st_(?P<first>\d+)\.csv$"
)


@dataclass(frozen=True)
class TsbadName:
    """What a TSB-AD file name says about its series."""

    file_name: str
    index: int
    dataset: str
    series_id: int
    domain: str
    train_length: int
    first_anomaly: int

    @property
    def stem(self) -> str:
        return self.file_name[: -len(".csv")]


def parse_tsbad_name(file_name: str) -> TsbadName:
    """Parse ``[i]_[dataset]_id_[k]_[domain]_tr_[N]_1st_[F].csv``; ``DataError`` if it does not
    fit."""
    m = FILE_NAME.match(Path(file_name).name)
    if m is None:
        raise DataError(
            f"{file_name!r} is not a TSB-AD file name: expected "
            "[i]_[dataset]_id_[k]_[domain]_tr_[N]_1st_[F].csv, e.g. "
            "002_MSL_id_1_Sensor_tr_500_1st_900.csv"
        )
    return TsbadName(
        file_name=Path(file_name).name,
        index=int(m["index"]),
        dataset=m["dataset"],
        series_id=int(m["id"]),
        domain=m["domain"],
        train_length=int(m["train"]),
        first_anomaly=int(m["first"]),
    )


def is_tsbad_folder(folder: Path) -> bool:
    """True when ``folder`` holds TSB-AD series files and no ``train.*`` file of a user folder."""
    if any(folder.glob("train.*")):
        return False
    return any(FILE_NAME.match(p.name) for p in folder.glob("*.csv"))


def read_tsbad_series(path: str | Path) -> Dataset:
    """One TSB-AD file as a Dataset: ``train`` its first N rows, ``test`` all rows, ``labels``
    all."""
    path = Path(path)
    name = parse_tsbad_name(path.name)
    frame = read_frame(path, header=True)
    frame.columns = [str(c) for c in frame.columns]
    if LABEL_COLUMN not in frame.columns:
        raise DataError(
            f"{path} has no {LABEL_COLUMN!r} column (TSB-AD files end with one); columns: "
            f"{list(frame.columns)[:8]}"
        )
    n_rows = len(frame)
    frame = frame.dropna()
    if len(frame) < n_rows:
        logger.warning(
            "%s: dropped %d rows with missing values (as TSB-AD does)", path, n_rows - len(frame)
        )
    features = frame.drop(columns=[LABEL_COLUMN])
    series = check_series(features.to_numpy(dtype=np.float64), name=str(path))
    labels = as_labels(frame[LABEL_COLUMN].to_numpy(), name=f"{path} column {LABEL_COLUMN!r}")
    n_train = name.train_length
    if not 0 < n_train <= len(series):
        raise DataError(
            f"{path}: the file name says to train on the first {n_train} points but the series has "
            f"{len(series)}"
        )
    return Dataset(
        name=name.stem,
        train=series[:n_train],
        test=series,
        labels=labels,
        columns=[str(c) for c in features.columns],
    )


def read_tsbad_folder(folder: str | Path) -> list[Dataset]:
    """Every TSB-AD file in ``folder`` (sorted by name), each as its own Dataset."""
    folder = Path(folder)
    files = sorted(p for p in folder.glob("*.csv") if FILE_NAME.match(p.name))
    if not files:
        raise DatasetNotFoundError(
            f"{folder} holds no TSB-AD file ([i]_[dataset]_id_[k]_[domain]_tr_[N]_1st_[F].csv)"
        )
    return [read_tsbad_series(p) for p in files]


def concatenate_series(series: list[Dataset], name: str) -> Dataset:
    """Series with the same number of features as one Dataset with one entity per series."""
    widths = sorted({s.n_features for s in series})
    if len(widths) > 1:
        counts = {w: [s.name for s in series if s.n_features == w][:2] for w in widths}
        raise DataError(
            f"{name}: the TSB-AD files have different numbers of features ({counts}); put each "
            "source dataset in its own folder, or read them one by one with "
            "madcluster.data.tsbad.read_tsbad_folder"
        )
    entities, t0, u0 = [], 0, 0
    for s in series:
        entities.append(Entity(s.name, slice(t0, t0 + len(s.train)), slice(u0, u0 + len(s.test))))
        t0, u0 = t0 + len(s.train), u0 + len(s.test)
    return Dataset(
        name=name,
        train=np.concatenate([s.train for s in series]),
        test=np.concatenate([s.test for s in series]),
        labels=np.concatenate([s.labels for s in series]),
        entities=entities,
        columns=series[0].columns,
    )


def read_tsbad_dataset(folder: str | Path) -> Dataset:
    """A folder of TSB-AD files with one feature count as one Dataset, one entity per file."""
    folder = Path(folder)
    return concatenate_series(read_tsbad_folder(folder), folder.name)


__all__ = [
    "LABEL_COLUMN",
    "TsbadName",
    "concatenate_series",
    "is_tsbad_folder",
    "parse_tsbad_name",
    "read_tsbad_dataset",
    "read_tsbad_folder",
    "read_tsbad_series",
]
