"""Checking a data file's columns against the model's, and what the detector sees of the file.

Shared by single-file commands and fleets (:mod:`madcluster.fleet`), so both give the same
hints, naming the command-line flags that fix the problem.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Sequence
from typing import Any

from madcluster.data.table import file_format, label_like_columns
from madcluster.exceptions import DataError


def name_list(names: Sequence[str], limit: int = 12, *, quote: bool = False) -> str:
    """``a, b, c, ... (N more)``: column lists short enough for one line."""
    names = [repr(str(n)) if quote else str(n) for n in names]
    more = f", ... ({len(names) - limit} more)" if len(names) > limit else ""
    return ", ".join(names[:limit]) + more


def shell_words(names: Sequence[Any]) -> str:
    """Column names as a hint's command-line words, each quoted where the shell needs it
    (``'Unnamed: 0'``), so the hint works when pasted."""
    return " ".join(shlex.quote(str(n)) for n in names)


def _named(table, path: str) -> bool:
    """Whether the columns carry real names (a CSV header, Parquet), so they are checked by name."""
    return table.has_header and file_format(path) != "npy"


def feature_values(table, path: str) -> Any:
    """What the detector sees: a DataFrame when the file named its columns (names are recorded at
    fit and matched at score), else the bare array (columns taken by position)."""
    import pandas as pd

    if _named(table, path):
        return pd.DataFrame(table.values, columns=table.columns, copy=False)
    return table.values


def model_ordered_values(table, path: str, detector) -> Any:
    """The table's values as an array in the model's column order (named files are matched by
    name, after :func:`check_columns`), without pandas: the torch-free ONNX scoring path."""
    fitted = getattr(detector, "feature_names_in_", None)
    if fitted is None or not _named(table, path):
        return table.values
    order = [list(table.columns).index(str(c)) for c in fitted]
    return table.values[:, order]


def label_hint(columns: Sequence[str], label_column: Any) -> str:
    """``; the file has a column named 'label': ... pass --label-column label`` (or "")."""
    if label_column is not None:
        return ""
    found = label_like_columns(columns)
    if not found:
        return ""
    word = shell_words(found[:1])
    return (
        f"; the file has a column named {found[0]!r}: if it holds 0/1 labels, "
        f"pass --label-column {word} (or --drop-columns {word})"
    )


def check_columns(
    table,
    path: str,
    detector,
    *,
    label_column: Any = None,
    note: Callable[[str], None] | None = None,
) -> None:
    """Refuse columns that differ from training, naming them and the flag that fixes it;
    ``note`` receives what is worth saying but not refusing (reordered or unnamed columns)."""
    note = note or (lambda message: None)
    fitted = getattr(detector, "feature_names_in_", None)
    given = list(table.columns)
    if fitted is not None and _named(table, path):
        fitted = [str(c) for c in fitted]
        missing = [c for c in fitted if c not in given]
        unexpected = [c for c in given if c not in fitted]
        if missing or unexpected:
            parts = []
            if missing:
                parts.append(f"missing {name_list(missing, quote=True)}")
            if unexpected:
                parts.append(f"not in the model {name_list(unexpected, quote=True)}")
            labels = label_like_columns(unexpected) if label_column is None else []
            others = [c for c in unexpected if c not in labels]
            hints = [label_hint(labels, label_column).lstrip("; ")] if labels else []
            if missing and len(missing) == len(others):
                hints.append("were columns renamed?")
            elif others and not missing:
                hints.append(f"leave them out with --drop-columns {shell_words(others[:5])}")
            hint = "".join(f"; {h}" for h in hints)
            raise DataError(
                f"{path}: columns do not match the model's ({name_list(fitted, quote=True)}): "
                f"{'; '.join(parts)}{hint}"
            )
        if given != fitted:
            note(f"{path}: columns are in another order than at training; matched by name")
        return
    n = detector.n_features_in_
    if len(given) != n:
        hint = label_hint(given, label_column) if len(given) == n + 1 else ""
        raise DataError(
            f"{path} has {len(given)} feature columns but the model was trained on {n}{hint}"
        )
    if fitted is not None and not _named(table, path):
        note(f"{path} has no column names: columns taken by position as {name_list(fitted)}")
