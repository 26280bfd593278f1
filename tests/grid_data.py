"""Tiny data for the grid, executor and fleet tests (a fit takes well under a second)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

N_FEATURES = 3
# smallest settings that still train the D-RNN for one epoch
TINY = {
    "epochs": 1,
    "stride": 10,
    "window_size": 20,
    "hidden_size": 8,
    "layers": 2,
    "batch_size": 32,
    "metric_window": 20,
    "threads": 1,
    "verbose": False,
}


def series(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    t = np.arange(n)[:, None]
    return np.sin(2 * np.pi * t / 25 + np.arange(N_FEATURES)) + 0.05 * rng.normal(
        size=(n, N_FEATURES)
    )


def write_dataset(
    folder: Path,
    *,
    n_train: int = 400,
    n_test: int = 300,
    anomalies: tuple[int, ...] = (40, 200),
    length: int = 12,
    entities: bool = True,
) -> Path:
    """``train.csv`` / ``test.csv`` (with labels) and, with ``entities``, two entities ``a``, ``b``.

    The entities split train and test in halves; the default anomalies put one in each half.
    """
    folder.mkdir(parents=True, exist_ok=True)
    train, test = series(n_train, 0), series(n_test, 1)
    labels = np.zeros(n_test, dtype=int)
    for start in anomalies:
        test[start : start + length] += 3.0
        labels[start : start + length] = 1
    header = ",".join(f"x{i}" for i in range(N_FEATURES))
    np.savetxt(folder / "train.csv", train, delimiter=",", header=header, comments="")
    np.savetxt(
        folder / "test.csv",
        np.column_stack([test, labels]),
        delimiter=",",
        header=header + ",label",
        comments="",
        fmt=["%.6f"] * N_FEATURES + ["%d"],
    )
    if entities:
        half_train, half_test = n_train // 2, n_test // 2
        (folder / "entities.csv").write_text(
            "entity,train_start,train_len,test_start,test_len\n"
            f"a,0,{half_train},0,{half_test}\n"
            f"b,{half_train},{n_train - half_train},{half_test},{n_test - half_test}\n"
        )
    return folder


def write_fleet(folder: Path, n: int = 3, *, bad: bool = False) -> Path:
    """``srv<i>.csv`` per entity (columns a, b, c); with ``bad`` also an unreadable ``bad.csv``."""
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(n):
        np.savetxt(
            folder / f"srv{i}.csv", series(200, i), delimiter=",", header="a,b,c", comments=""
        )
    if bad:
        (folder / "bad.csv").write_text("a,b,c\n1,2,x\n3,4,y\n")
    return folder
