"""File layouts into :class:`~madcluster.data.train_test.Dataset`: the npz benchmark layout (MSL,
SMAP, SMD), the public PSM release, and user folders (``train.*`` / ``test.*`` with labels).

:mod:`madcluster.data.datasets` decides which folder to read; the formats are documented there.
"""

from __future__ import annotations

import csv
import logging
from pathlib import Path

import numpy as np

from madcluster.data.io import read_frame, table_from_frame
from madcluster.data.table import SUPPORTED_SUFFIXES, as_labels, file_format
from madcluster.data.train_test import Dataset, Entity
from madcluster.data.validation import check_series
from madcluster.exceptions import DataError, DatasetNotFoundError

logger = logging.getLogger(__name__)


def read_npz_benchmark(name: str, folder: Path) -> Dataset:
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
                f"{path}: entity {row['entity']!r} rows [{s}, {s + n}) / [{u}, {u + m}) fall "
                f"outside the arrays ({n_train} train, {n_test} test rows)"
            )
        entities.append(Entity(row["entity"], slice(s, s + n), slice(u, u + m)))
    if not entities:
        raise DataError(f"{path} lists no entity with data")
    return entities


def read_psm(folder: Path) -> Dataset:
    train = table_from_frame(
        read_frame(folder / "train.csv"), fill_missing=True, source=str(folder / "train.csv")
    )
    test = table_from_frame(
        read_frame(folder / "test.csv"), fill_missing=True, source=str(folder / "test.csv")
    )
    if test.columns != train.columns:
        raise DataError(
            f"PSM: test.csv columns {test.columns[:5]}... differ from train.csv columns "
            f"{train.columns[:5]}..."
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
    """Labels from a ``test_label`` file: a 1-D (or one-column) ``.npy``, or a table's ``label``
    column."""
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


def read_user_folder(folder: Path) -> Dataset:
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
            f"{folder}: labels given twice, in the 'label' column of {test_path.name} and in "
            f"{label_path.name}"
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
            f"{folder}: {0 if labels is None else len(labels)} labels for {len(test.values)} test "
            "rows"
        )
    if not npy_test and file_format(train_path) != "npy" and test.columns != train.columns:
        only_train = [c for c in train.columns if c not in test.columns]
        only_test = [c for c in test.columns if c not in train.columns]
        raise DataError(
            f"{folder}: train and test feature columns differ (only in train: {only_train[:10]}, "
            f"only in test: {only_test[:10]}"
            f"{', or a different order' if not only_train and not only_test else ''})"
        )
    if test.values.shape[1] != train.values.shape[1]:
        raise DataError(
            f"{folder}: train has {train.values.shape[1]} features but test has "
            f"{test.values.shape[1]}"
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
