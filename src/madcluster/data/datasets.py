"""The benchmark datasets (MSL, SMAP, SMD, PSM) and user dataset folders, as numpy arrays.

``load_dataset(name)`` returns a :class:`Dataset`: ``train`` (T, D) float32, ``test`` (T', D)
float32, ``labels`` (T',) uint8 (1 = anomalous point) and ``entities`` (channels / machines, as
row ranges into the concatenated arrays). Nothing is cached on disk; arrays are loaded with
``allow_pickle=False``.

**Where the data is looked for** (first match wins):

1. the ``data_dir`` argument;
2. the environment variable ``MADCLUSTER_DATA_DIR``;
3. ``../shared/datasets`` relative to the current working directory, if that folder exists.

**Layouts** (inside the data directory):

* ``MSL/``, ``SMAP/``, ``SMD/``: ``train.npz`` (key ``data``), ``test.npz`` (keys ``data``,
  ``label``) and ``entities.csv`` (``entity, train_start, train_len, test_start, test_len`` and,
  for SMD, ``data_available``; rows with ``data_available == 0`` are skipped). This is the format of
  ``shared/datasets`` (see its README for how it was built from the public releases). MSL and SMAP
  are the concatenated channels (the paper's counts); SMD is the machines that have data,
  concatenated in natural order.
* ``PSM/``: the public eBay release, unchanged: ``train.csv`` and ``test.csv`` (first column
  ``timestamp_(min)``, dropped), ``test_label.csv`` (``timestamp_(min),label``). The public
  ``train.csv`` has missing values: they are **forward-filled down each column, and values still
  missing at the start are set to 0** (Anomaly Transformer's loader only does the latter,
  ``np.nan_to_num``; the two differ only on a few points).

**User folders**: ``load_dataset(path)`` with a folder holding ``train.{csv,parquet,npy}`` and
``test.{csv,parquet,npy}`` (read with :func:`madcluster.data.io.read_table`, so timestamp columns
are dropped). Test labels come from a ``label`` column of ``test`` or from a separate
``test_label.{csv,parquet,npy}``; for a ``test.npy`` without a label file, when it has exactly one
more column than ``train.npy``, its last column is the label. A ``label`` column in ``train`` is
ignored (training is unsupervised). An optional ``entities.csv`` in the benchmark format splits
the folder into entities. A bare name that is not a benchmark is also looked up as a folder inside
the data directory.
"""

from __future__ import annotations

import csv
import logging
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from madcluster.data.io import (
    SUPPORTED_SUFFIXES,
    as_labels,
    file_format,
    read_frame,
    table_from_frame,
)
from madcluster.data.validation import check_series
from madcluster.exceptions import DataError, DatasetNotFoundError

logger = logging.getLogger(__name__)

ENV_VAR = "MADCLUSTER_DATA_DIR"
_NPZ_FILES = ("train.npz", "test.npz", "entities.csv")
_PSM_FILES = ("train.csv", "test.csv", "test_label.csv")


@dataclass(frozen=True)
class _Benchmark:
    name: str
    files: tuple[str, ...]
    source: str


BENCHMARKS: dict[str, _Benchmark] = {
    "MSL": _Benchmark(
        "MSL",
        _NPZ_FILES,
        "NASA Mars Science Laboratory telemetry (Hundman et al. KDD'18), from the telemanom release "
        "https://github.com/khundman/telemanom (data.zip + labeled_anomalies.csv)",
    ),
    "SMAP": _Benchmark(
        "SMAP",
        _NPZ_FILES,
        "NASA Soil Moisture Active Passive telemetry (Hundman et al. KDD'18), from the telemanom "
        "release https://github.com/khundman/telemanom (data.zip + labeled_anomalies.csv)",
    ),
    "SMD": _Benchmark(
        "SMD",
        _NPZ_FILES,
        "Server Machine Dataset (Su et al. KDD'19), from NetManAIOps/OmniAnomaly "
        "https://github.com/NetManAIOps/OmniAnomaly (ServerMachineDataset/)",
    ),
    "PSM": _Benchmark(
        "PSM",
        _PSM_FILES,
        "Pooled Server Metrics (Abdulaal et al. KDD'21), from eBay/RANSynCoders "
        "https://github.com/eBay/RANSynCoders (data/train.csv, test.csv, test_label.csv)",
    ),
}


@dataclass(frozen=True)
class Entity:
    """One channel / machine: its rows in the concatenated train and test arrays."""

    name: str
    train_slice: slice
    test_slice: slice


@dataclass(eq=False)
class Dataset:
    """A train/test split: ``train`` (T, D) float32, ``test`` (T', D) float32, ``labels`` (T',) uint8."""

    name: str
    train: np.ndarray
    test: np.ndarray
    labels: np.ndarray
    entities: list[Entity] = field(default_factory=list)
    columns: list[str] | None = None

    def __post_init__(self) -> None:
        if not self.entities:
            self.entities = [Entity(self.name, slice(0, len(self.train)), slice(0, len(self.test)))]

    @property
    def n_features(self) -> int:
        return int(self.train.shape[1])

    @property
    def anomaly_ratio(self) -> float:
        """Fraction of anomalous test points."""
        return float(self.labels.mean()) if len(self.labels) else 0.0

    def entity(self, key: str | int) -> Dataset:
        """The entity with this name (or position in ``entities``) as its own Dataset (array views)."""
        if isinstance(key, (int, np.integer)) and not isinstance(key, bool):
            if not -len(self.entities) <= int(key) < len(self.entities):
                raise IndexError(f"{self.name} has {len(self.entities)} entities, no index {key}")
            ent = self.entities[int(key)]
        else:
            matches = [e for e in self.entities if e.name == key] or [
                e for e in self.entities if e.name.lower() == str(key).lower()
            ]
            if not matches:
                names = [e.name for e in self.entities]
                raise KeyError(
                    f"{self.name} has no entity {key!r}; it has {len(names)}: "
                    f"{', '.join(names[:30])}{' ...' if len(names) > 30 else ''}"
                )
            ent = matches[0]
        train, test = self.train[ent.train_slice], self.test[ent.test_slice]
        return Dataset(
            name=f"{self.name}/{ent.name}",
            train=train,
            test=test,
            labels=self.labels[ent.test_slice],
            entities=[Entity(ent.name, slice(0, len(train)), slice(0, len(test)))],
            columns=self.columns,
        )

    def iter_entities(self) -> Iterator[Dataset]:
        """Each entity in order, as its own Dataset."""
        for i in range(len(self.entities)):
            yield self.entity(i)

    def __repr__(self) -> str:
        return (
            f"Dataset({self.name!r}, train={self.train.shape}, test={self.test.shape}, "
            f"anomaly_ratio={self.anomaly_ratio:.4f}, entities={len(self.entities)})"
        )


def resolve_data_dir(data_dir: str | os.PathLike[str] | None = None) -> Path:
    """The data directory: ``data_dir``, else ``$MADCLUSTER_DATA_DIR``, else ``../shared/datasets``."""
    return _resolve_data_dir(data_dir)[0]


def load_dataset(
    name: str | os.PathLike[str], data_dir: str | os.PathLike[str] | None = None
) -> Dataset:
    """Load a benchmark (``"MSL"``, ``"SMAP"``, ``"SMD"``, ``"PSM"``; any case) or a user folder.

    See the module docstring for the data directory search order and the expected files.
    Raises :class:`~madcluster.exceptions.DatasetNotFoundError` (a ``FileNotFoundError`` and a
    ``ValueError``) when files are missing or the name is unknown, ``DataError`` for bad contents.
    """
    if isinstance(name, str) and name.upper() in BENCHMARKS:
        bench = BENCHMARKS[name.upper()]
        folder = _benchmark_folder(bench, data_dir)
        if bench.name == "PSM":
            return _load_psm(folder)
        return _load_npz(bench.name, folder)

    path = Path(name)
    if path.is_dir():
        return _load_user_dir(path)
    looks_like_path = isinstance(name, os.PathLike) or "/" in str(name) or os.sep in str(name)
    if looks_like_path:
        raise DatasetNotFoundError(
            f"dataset folder {str(path)!r} does not exist (absolute: {path.resolve()}); a dataset folder "
            "holds train.{csv,parquet,npy} and test.{csv,parquet,npy}"
        )
    try:
        root, _ = _resolve_data_dir(data_dir)
    except DatasetNotFoundError:
        root = None
    if root is not None and (root / str(name)).is_dir():
        return _load_user_dir(root / str(name))
    raise DatasetNotFoundError(
        f"unknown dataset {str(name)!r}: known names are {', '.join(sorted(BENCHMARKS))} (any case), "
        "or pass the path of a folder holding train.{csv,parquet,npy} and test.{csv,parquet,npy}"
    )


# ----------------------------------------------------------------------------------------------
def _resolve_data_dir(data_dir: str | os.PathLike[str] | None) -> tuple[Path, str]:
    if data_dir is not None:
        path, how = Path(data_dir), "the data_dir argument"
    elif os.environ.get(ENV_VAR):
        path, how = Path(os.environ[ENV_VAR]), f"${ENV_VAR}"
    else:
        path, how = Path.cwd() / ".." / "shared" / "datasets", "the default ../shared/datasets"
        if not path.is_dir():
            raise DatasetNotFoundError(
                f"no data directory: pass data_dir=..., set ${ENV_VAR}, or put the datasets in "
                f"../shared/datasets relative to the working directory (looked at {path.resolve()})"
            )
    if not path.is_dir():
        raise DatasetNotFoundError(f"data directory {str(path)!r} (from {how}) does not exist")
    return path, how


def _benchmark_folder(bench: _Benchmark, data_dir: str | os.PathLike[str] | None) -> Path:
    expected = ", ".join(bench.files)
    if bench.name == "PSM":
        how_to = "copy the three public files there unchanged"
    else:
        how_to = (
            "see shared/datasets/README.md for how these files are built from the public release"
        )
    help_text = f"{bench.name} is {bench.source}; {how_to}"
    try:
        root, how = _resolve_data_dir(data_dir)
    except DatasetNotFoundError as exc:
        raise DatasetNotFoundError(
            f"{bench.name}: expected {expected} in <data dir>/{bench.name}/, but {exc}. {help_text}"
        ) from None
    folder = root / bench.name
    if not folder.is_dir():  # tolerate another case, e.g. msl/
        same = [p for p in root.iterdir() if p.is_dir() and p.name.lower() == bench.name.lower()]
        folder = same[0] if same else folder
    missing = [f for f in bench.files if not (folder / f).is_file()]
    if missing:
        raise DatasetNotFoundError(
            f"{bench.name} data not found: expected {expected} in {folder.resolve()} (data directory "
            f"from {how}); missing: {', '.join(missing)}. {help_text}"
        )
    return folder


def _load_npz(name: str, folder: Path) -> Dataset:
    train = _npz_array(folder / "train.npz", "data")
    with np.load(folder / "test.npz", allow_pickle=False) as archive:
        _require_keys(archive, ("data", "label"), folder / "test.npz")
        test, raw_labels = archive["data"], archive["label"]
    train = check_series(train, name=f"{name} train")
    test = check_series(test, min_length=1, n_features=train.shape[1], name=f"{name} test")
    labels = as_labels(raw_labels, name=f"{name} test labels")
    if len(labels) != len(test):
        raise DataError(
            f"{name}: {len(labels)} labels for {len(test)} test rows in {folder / 'test.npz'}"
        )
    entities = _read_entities(folder / "entities.csv", len(train), len(test))
    return Dataset(name=name, train=train, test=test, labels=labels, entities=entities)


def _npz_array(path: Path, key: str) -> np.ndarray:
    with np.load(path, allow_pickle=False) as archive:
        _require_keys(archive, (key,), path)
        return archive[key]


def _require_keys(archive: np.lib.npyio.NpzFile, keys: tuple[str, ...], path: Path) -> None:
    missing = [k for k in keys if k not in archive.files]
    if missing:
        raise DataError(f"{path} has no array(s) {missing} (it has {archive.files})")


def _read_entities(path: Path, n_train: int, n_test: int) -> list[Entity]:
    with open(path, newline="") as fh:
        rows = list(csv.DictReader(fh))
    need = ("entity", "train_start", "train_len", "test_start", "test_len")
    if rows and any(k not in rows[0] for k in need):
        raise DataError(f"{path} must have the columns {', '.join(need)}; it has {list(rows[0])}")
    entities = []
    for row in rows:
        if str(row.get("data_available", "1")).strip() == "0":
            continue
        try:
            s, n, u, m = (int(row[k]) for k in need[1:])
        except ValueError:
            raise DataError(
                f"{path}: non-integer offsets in the row for {row['entity']!r}"
            ) from None
        if s < 0 or u < 0 or s + n > n_train or u + m > n_test:
            raise DataError(
                f"{path}: entity {row['entity']!r} rows [{s}, {s + n}) / [{u}, {u + m}) fall outside the "
                f"arrays ({n_train} train, {n_test} test rows)"
            )
        entities.append(Entity(row["entity"], slice(s, s + n), slice(u, u + m)))
    if not entities:
        raise DataError(f"{path} lists no entity with data")
    return entities


def _load_psm(folder: Path) -> Dataset:
    train = table_from_frame(
        read_frame(folder / "train.csv"), fill_missing=True, source=str(folder / "train.csv")
    )
    test = table_from_frame(
        read_frame(folder / "test.csv"), fill_missing=True, source=str(folder / "test.csv")
    )
    if test.columns != train.columns:
        raise DataError(
            f"PSM: test.csv columns {test.columns[:5]}... differ from train.csv columns {train.columns[:5]}..."
        )
    labels = _read_label_file(folder / "test_label.csv")
    if len(labels) != len(test.values):
        raise DataError(
            f"PSM: test_label.csv has {len(labels)} rows but test.csv has {len(test.values)}"
        )
    return Dataset(
        name="PSM", train=train.values, test=test.values, labels=labels, columns=train.columns
    )


def _find_file(folder: Path, stem: str, *, required: bool) -> Path | None:
    found = [
        folder / f"{stem}{suffix}"
        for suffix in SUPPORTED_SUFFIXES
        if (folder / f"{stem}{suffix}").is_file()
    ]
    if len(found) > 1:
        raise DataError(
            f"{folder} has several {stem} files ({', '.join(p.name for p in found)}): keep one"
        )
    if not found:
        if required:
            raise DatasetNotFoundError(
                f"dataset folder {str(folder)!r} has no {stem} file: expected one of "
                f"{', '.join(stem + s for s in SUPPORTED_SUFFIXES)}"
            )
        return None
    return found[0]


def _read_label_file(path: Path) -> np.ndarray:
    """Labels from a ``test_label`` file: a 1-D (or one-column) ``.npy``, or a table's ``label`` column."""
    if file_format(path) == "npy":
        try:
            raw = np.load(path, allow_pickle=False)
        except ValueError as exc:
            raise DataError(f"{path} is not a plain numeric .npy array: {exc}") from None
        return as_labels(raw, name=str(path))
    frame = read_frame(path)
    frame.columns = [str(c) for c in frame.columns]
    col = "label" if "label" in frame.columns else frame.columns[-1]
    return as_labels(frame[col].to_numpy(), name=f"{path} column {col!r}")


def _load_user_dir(folder: Path) -> Dataset:
    train_path = _find_file(folder, "train", required=True)
    test_path = _find_file(folder, "test", required=True)
    label_path = _find_file(folder, "test_label", required=False)

    train_frame = read_frame(train_path)
    train_frame.columns = [str(c) for c in train_frame.columns]
    has_train_labels = file_format(train_path) != "npy" and "label" in train_frame.columns
    if has_train_labels:
        logger.info("%s: ignoring its 'label' column (training is unsupervised)", train_path)
    train = table_from_frame(
        train_frame, drop_columns=["label"] if has_train_labels else None, source=str(train_path)
    )

    test_frame = read_frame(test_path)
    test_frame.columns = [str(c) for c in test_frame.columns]
    npy_test = file_format(test_path) == "npy"
    label_in_test = not npy_test and "label" in test_frame.columns
    if label_in_test and label_path is not None:
        raise DataError(
            f"{folder}: labels given twice, in the 'label' column of {test_path.name} and in {label_path.name}"
        )
    if label_in_test:
        test = table_from_frame(test_frame, label_column="label", source=str(test_path))
        labels = test.labels
    elif label_path is not None:
        test = table_from_frame(test_frame, source=str(test_path))
        labels = _read_label_file(label_path)
    elif npy_test and test_frame.shape[1] == len(train.columns) + 1:
        test = table_from_frame(test_frame, label_column=-1, source=str(test_path))
        labels = test.labels
    else:
        where = (
            f"as the last column of {test_path.name} (one more column than train)"
            if npy_test
            else f"as a 'label' column of {test_path.name}"
        )
        raise DataError(
            f"{folder}: no test labels: give them {where} or in test_label.{{csv,parquet,npy}}"
        )

    if labels is None or len(labels) != len(test.values):
        raise DataError(
            f"{folder}: {0 if labels is None else len(labels)} labels for {len(test.values)} test rows"
        )
    if not npy_test and file_format(train_path) != "npy" and test.columns != train.columns:
        only_train = [c for c in train.columns if c not in test.columns]
        only_test = [c for c in test.columns if c not in train.columns]
        raise DataError(
            f"{folder}: train and test feature columns differ (only in train: {only_train[:10]}, only in "
            f"test: {only_test[:10]}{', or a different order' if not only_train and not only_test else ''})"
        )
    if test.values.shape[1] != train.values.shape[1]:
        raise DataError(
            f"{folder}: train has {train.values.shape[1]} features but test has {test.values.shape[1]}"
        )

    entities_path = folder / "entities.csv"
    entities = (
        _read_entities(entities_path, len(train.values), len(test.values))
        if entities_path.is_file()
        else []
    )
    return Dataset(
        name=folder.resolve().name,
        train=train.values,
        test=test.values,
        labels=labels,
        entities=entities,
        columns=train.columns,
    )
