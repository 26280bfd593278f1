"""Reading a data file for fit / score and checking its columns against the model's."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from madcluster.cli.console import _list, _note


def _read_input(path: str, args: argparse.Namespace):
    from madcluster.cli.options import read_options
    from madcluster.data.io import read_table

    return read_table(path, **read_options(args))


def _named(table, path: str) -> bool:
    """Whether the columns carry real names (a CSV header, Parquet), so they are checked by name."""
    from madcluster.data.io import file_format

    return table.has_header and file_format(path) != "npy"


def _features(table, path: str):
    """What the detector sees: a DataFrame when the file named its columns (names are recorded at
    fit and matched at score), else the bare array (columns taken by position)."""
    import pandas as pd

    if _named(table, path):
        return pd.DataFrame(table.values, columns=table.columns, copy=False)
    return table.values


def _label_hint(columns: Sequence[str], args: argparse.Namespace) -> str:
    from madcluster.data.io import label_like_columns

    if args.label_column is not None:
        return ""
    found = label_like_columns(columns)
    if not found:
        return ""
    return (
        f"; the file has a column named {found[0]!r}: if it holds 0/1 labels, "
        f"pass --label-column {found[0]} (or --drop-columns {found[0]})"
    )


def _check_columns(table, path: str, detector, args: argparse.Namespace) -> None:
    """Refuse columns that differ from training, naming them and the option that fixes it."""
    from madcluster.data.io import label_like_columns
    from madcluster.exceptions import DataError

    fitted = getattr(detector, "feature_names_in_", None)
    given = list(table.columns)
    if fitted is not None and _named(table, path):
        fitted = [str(c) for c in fitted]
        missing = [c for c in fitted if c not in given]
        unexpected = [c for c in given if c not in fitted]
        if missing or unexpected:
            parts = []
            if missing:
                parts.append(f"missing {_list(missing, quote=True)}")
            if unexpected:
                parts.append(f"not in the model {_list(unexpected, quote=True)}")
            labels = label_like_columns(unexpected) if args.label_column is None else []
            others = [c for c in unexpected if c not in labels]
            hints = [_label_hint(labels, args).lstrip("; ")] if labels else []
            if missing and len(missing) == len(others):
                hints.append("were columns renamed?")
            elif others and not missing:
                hints.append(f"leave them out with --drop-columns {' '.join(others[:5])}")
            hint = "".join(f"; {h}" for h in hints)
            raise DataError(
                f"{path}: columns do not match the model's ({_list(fitted, quote=True)}): "
                f"{'; '.join(parts)}{hint}"
            )
        if given != fitted:
            _note(args, f"{path}: columns are in another order than at training; matched by name")
        return
    n = detector.n_features_in_
    if len(given) != n:
        hint = _label_hint(given, args) if len(given) == n + 1 else ""
        raise DataError(
            f"{path} has {len(given)} feature columns but the model was trained on {n}{hint}"
        )
    if fitted is not None and not _named(table, path):
        _note(args, f"{path} has no column names: columns taken by position as {_list(fitted)}")
