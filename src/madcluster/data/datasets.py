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

**TSB-AD folders**: a folder of TSB-AD files (``[i]_[dataset]_id_[k]_[domain]_tr_[N]_1st_[F].csv``,
feature columns then ``Label``) and no ``train.*`` file loads under TSB-AD's protocol: one entity
per file, trained on its first N points, tested on the whole series (:mod:`madcluster.data.tsbad`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from madcluster.data.readers import read_npz_benchmark, read_psm, read_user_folder
from madcluster.data.train_test import Dataset, Entity
from madcluster.data.tsbad import is_tsbad_folder, read_tsbad_dataset
from madcluster.exceptions import DatasetNotFoundError

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
        "NASA Mars Science Laboratory telemetry (Hundman et al. KDD'18), from the telemanom "
        "release https://github.com/khundman/telemanom (data.zip + labeled_anomalies.csv)",
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


def resolve_data_dir(data_dir: str | os.PathLike[str] | None = None) -> Path:
    """The data directory: ``data_dir``, else ``$MADCLUSTER_DATA_DIR``, else
    ``../shared/datasets``."""
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
            return read_psm(folder)
        return read_npz_benchmark(bench.name, folder)

    path = Path(name)
    if path.is_dir():
        return _read_folder(path)
    looks_like_path = isinstance(name, os.PathLike) or "/" in str(name) or os.sep in str(name)
    if looks_like_path:
        raise DatasetNotFoundError(
            f"dataset folder {str(path)!r} does not exist (absolute: {path.resolve()}); a dataset "
            "folder holds train.{csv,parquet,npy} and test.{csv,parquet,npy}"
        )
    try:
        root, _ = _resolve_data_dir(data_dir)
    except DatasetNotFoundError:
        root = None
    if root is not None and (root / str(name)).is_dir():
        return _read_folder(root / str(name))
    raise DatasetNotFoundError(
        f"unknown dataset {str(name)!r}: known names are {', '.join(sorted(BENCHMARKS))} (any "
        "case), or pass the path of a folder holding train.{csv,parquet,npy} and "
        "test.{csv,parquet,npy}"
    )


# ----------------------------------------------------------------------------------------------
def _read_folder(folder: Path) -> Dataset:
    if is_tsbad_folder(folder):
        return read_tsbad_dataset(folder)
    return read_user_folder(folder)


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
            f"{bench.name} data not found: expected {expected} in {folder.resolve()} (data "
            f"directory from {how}); missing: {', '.join(missing)}. {help_text}"
        )
    return folder


__all__ = ["BENCHMARKS", "ENV_VAR", "Dataset", "Entity", "load_dataset", "resolve_data_dir"]
