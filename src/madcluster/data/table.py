"""A data file as the readers give it: the :class:`Table` value, and what both readers share.

:func:`madcluster.data.io.read_table` (with pandas) and :mod:`madcluster.data.plain_table`
(without) both use these: the file's kind from its name (:func:`file_format`), the check that it
exists (:func:`existing_file`), ``.npy`` loading (:func:`load_npy`), a column from a name or a
position (:func:`resolve_column`), the column rules (:func:`choose_columns`,
:func:`check_features`) and 0/1 labels (:func:`as_labels`). Nothing here imports pandas.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from madcluster.data.validation import LABEL_LIKE_NAMES
from madcluster.exceptions import DataError, DatasetNotFoundError

ColumnKey = str | int

#: File name endings read by :func:`~madcluster.data.io.read_table`, and the reader each one uses.
SUPPORTED_SUFFIXES: dict[str, str] = {
    ".csv": "csv",
    ".csv.gz": "csv",
    ".tsv": "csv",  # tab-separated: the separator is detected as in any CSV
    ".tsv.gz": "csv",
    ".parquet": "parquet",
    ".pq": "parquet",
    ".npy": "npy",
}


@dataclass(frozen=True, eq=False)
class Table:
    """One file's contents: ``values`` (T, D) float32, ``labels`` (T,) uint8 or None, ``columns``.

    ``dropped`` maps each column not used as a feature (other than the label column) to why;
    ``timestamp_column`` / ``timestamps`` keep the first timestamp column's raw values so outputs
    can carry them; ``has_header`` is False for a CSV read without a header row.
    """

    values: np.ndarray
    labels: np.ndarray | None
    columns: list[str]
    dropped: dict[str, str] = field(default_factory=dict)
    timestamp_column: str | None = None
    timestamps: np.ndarray | None = None
    has_header: bool = True

    def __len__(self) -> int:
        return int(self.values.shape[0])

    def __repr__(self) -> str:
        labels = (
            "None"
            if self.labels is None
            else f"{int(self.labels.sum())} anomalous of {len(self.labels)}"
        )
        more = "..." if len(self.columns) > 5 else ""
        return (
            f"Table(values={self.values.shape} float32, labels={labels}, "
            f"columns={self.columns[:5]}{more})"
        )


def file_format(path: str | os.PathLike[str]) -> str:
    """``"csv"``, ``"parquet"`` or ``"npy"`` from the file name; ``DataError`` for anything else."""
    name = Path(path).name.lower()
    for suffix, kind in SUPPORTED_SUFFIXES.items():
        if name.endswith(suffix):
            return kind
    raise DataError(
        f"cannot read {str(path)!r}: unknown file type; supported endings are "
        f"{', '.join(SUPPORTED_SUFFIXES)}"
    )


def has_pandas() -> bool:
    """Whether pandas can be imported (the torch-free install has numpy and onnxruntime only)."""
    import importlib.util

    return importlib.util.find_spec("pandas") is not None


def existing_file(path: Path) -> str:
    """The file's kind (:func:`file_format`), or ``DatasetNotFoundError`` when it is not a file."""
    kind = file_format(path)
    if not path.is_file():
        where = "is a directory, not a file" if path.is_dir() else "does not exist"
        raise DatasetNotFoundError(f"cannot read {str(path)!r}: the file {where}")
    return kind


def load_npy(path: Path) -> np.ndarray:
    """One plain 2-D numeric array from a ``.npy`` file (never unpickled), or ``DataError``."""
    try:
        arr = np.load(path, allow_pickle=False)
    except ValueError as exc:
        raise DataError(
            f"{str(path)!r} could not be loaded as a plain numeric .npy array ({exc}); "
            "object/pickled "
            "arrays are refused for safety"
        ) from None
    if not isinstance(arr, np.ndarray):
        raise DataError(f"{str(path)!r} is not a single .npy array")
    if arr.ndim != 2:
        hint = " (for a univariate series save x.reshape(-1, 1))" if arr.ndim == 1 else ""
        raise DataError(
            f"{str(path)!r} must hold a 2-D array (time steps, columns), "
            f"got shape {arr.shape}{hint}"
        )
    if arr.dtype.names is not None or not (
        np.issubdtype(arr.dtype, np.number) or arr.dtype == bool
    ):
        raise DataError(f"{str(path)!r} must hold a numeric array, got dtype {arr.dtype}")
    return arr


def resolve_column(key: ColumnKey, names: list[str], source: str, *, what: str) -> str:
    """A column name from a name or an integer position."""
    if isinstance(key, (int, np.integer)) and not isinstance(key, bool):
        idx = int(key)
        if not -len(names) <= idx < len(names):
            raise DataError(
                f"{source}: {what} index {idx} is out of range for {len(names)} columns"
            )
        return names[idx]
    if str(key) in names:
        return str(key)
    lower = {n.lower(): n for n in names}
    near = f" (did you mean {lower[str(key).lower()]!r}?)" if str(key).lower() in lower else ""
    raise DataError(
        f"{source} has no {what} {str(key)!r}{near}; its columns are "
        f"{names[:20]}{' ...' if len(names) > 20 else ''}"
    )


@dataclass(frozen=True)
class ColumnChoice:
    """What each column of a file is: the ``label`` column (or None), the ``features`` in order,
    why each other column is left out (``dropped``), and the first timestamp column (``stamp``)."""

    label: str | None
    features: list[str]
    dropped: dict[str, str]
    stamp: str | None


def choose_columns(
    names: list[str],
    source: str,
    is_timestamp: Callable[[str], bool],
    *,
    label_column: ColumnKey | None = None,
    columns: Sequence[ColumnKey] | None = None,
    drop_columns: Sequence[ColumnKey] | None = None,
) -> ColumnChoice:
    """The readers' column rules on the file's column ``names``: the label, the dropped columns,
    then ``columns`` if given, else every other column that ``is_timestamp`` (by name) refuses."""
    label = (
        None
        if label_column is None
        else resolve_column(label_column, names, source, what="label column")
    )
    dropped = {resolve_column(c, names, source, what="column to drop") for c in drop_columns or ()}
    if columns is not None:
        features = [resolve_column(c, names, source, what="column") for c in columns]
        clash = [c for c in features if c == label or c in dropped]
        if clash:
            raise DataError(
                f"{source}: column(s) {clash} are both selected as features and used as label / "
                "dropped"
            )
    else:
        features = [c for c in names if c != label and c not in dropped and not is_timestamp(c)]
    reasons = {c: "dropped as asked" for c in names if c in dropped}
    for c in names:
        if c not in features and c != label and c not in reasons:
            reasons[c] = "timestamp" if is_timestamp(c) else "not selected"
    stamp = next((c for c, why in reasons.items() if why == "timestamp"), None)
    return ColumnChoice(label, features, reasons, stamp)


def check_features(
    features: list[str], non_numeric: list[str], names: list[str], source: str
) -> None:
    """Refuse ``non_numeric`` feature columns by name, and a file with no feature left."""
    if non_numeric:
        raise DataError(
            f"{source} has non-numeric column(s) {non_numeric[:10]}: convert them to numbers, or "
            "leave them out (--drop-columns / drop_columns=..., or choose the features with "
            "--columns / columns=...)"
        )
    if not features:
        raise DataError(f"{source} has no feature columns left (columns: {names[:10]})")


def label_like_columns(columns: Sequence[str]) -> list[str]:
    """Columns whose name says they probably hold 0/1 labels (``label``, ``anomaly``, ...)."""
    return [c for c in columns if str(c).lower() in LABEL_LIKE_NAMES]


def as_labels(raw: Any, *, name: str = "labels") -> np.ndarray:
    """0/1 labels as a 1-D ``uint8`` array, or ``DataError`` naming the values that are not 0/1."""
    arr = np.asarray(raw)
    if arr.ndim != 1:
        arr = arr.reshape(-1) if arr.ndim == 2 and 1 in arr.shape else arr
    if arr.ndim != 1:
        raise DataError(f"{name} must be one column of 0/1 values, got shape {arr.shape}")
    if arr.dtype == bool:
        return arr.astype(np.uint8)
    if not np.issubdtype(arr.dtype, np.number):
        raise DataError(
            f"{name} must be 0/1 numbers, got dtype {arr.dtype} (e.g. {arr[:3].tolist()})"
        )
    if np.issubdtype(arr.dtype, np.floating) and np.isnan(arr).any():
        raise DataError(
            f"{name} has {int(np.isnan(arr).sum())} missing value(s): every point needs a 0/1 label"
        )
    ok = (arr == 0) | (arr == 1)
    if not ok.all():
        others = np.unique(arr[~ok])
        raise DataError(
            f"{name} must contain only 0 (normal) and 1 (anomalous), found {others[:10].tolist()}"
            f"{' ...' if len(others) > 10 else ''}"
        )
    return arr.astype(np.uint8)
