"""What a served stream holds in memory, and views of large arrays made copies.

A stream's parts keep their trailing rows as slices of the array an update built (the rows so far
and the new chunk, concatenated); a slice keeps that whole array alive. After a 2,000-row first
update, or a handover's replay of 1,024 rows, a stream of the default model on 8 columns held about
0.75 MB, most of it arrays no step reads again, until its next updates replaced them. The scorer
and its parts are the scoring code's (``estimator/streaming.py``, ``score/``); the server, which
holds thousands of them, copies such views after a large update (:func:`compact`): the same
values, so the same scores, in their own small arrays. :func:`held_bytes` counts what a stream's
arrays hold, for the server's stream memory budget.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import torch

#: an update of at least this many rows is followed by :func:`compact`
COMPACT_ROWS = 64
#: what a stream holds besides its arrays (its Python objects, lock, tensors' headers): a stream
#: of one row of the default model on 8 columns grew the process by 13.8 KiB, 4.2 KiB of it arrays
STREAM_OVERHEAD = 10 * 1024
#: a new stream, counted before it holds anything
NEW_STREAM_BYTES = STREAM_OVERHEAD
#: a stream's memory is measured again every this many updates (and after a large one)
MEASURE_EVERY = 16
#: the model objects a stream refers to (shared by every stream of the model): never walked
SHARED = frozenset({"model", "part", "combination", "embedder", "net", "shared"})


def _holders(scorer: Any) -> Iterator[tuple[str, Any]]:
    """The objects of a stream's scorer that hold its own arrays, each with what it is for: the
    scorer, its row stepper, its terms' stream, each part's stream (and its running sums, its
    sliding products, its joins) and each point-wise part's recent values, its incidents' recent
    rows."""
    yield "scorer", scorer
    for name in ("_stepper", "_terms", "_incidents"):
        inner = getattr(scorer, name, None)
        if inner is not None:
            yield name.lstrip("_"), inner
    terms = getattr(scorer, "_terms", None)
    for part, part_stream in getattr(terms, "streams", {}).items():
        yield from _part_holders(part, part_stream)


def _part_holders(label: str, stream: Any) -> Iterator[tuple[str, Any]]:
    yield label, stream
    for joined in getattr(stream, "streams", ()):  # a discord part of several joins
        yield from _part_holders(label, joined)
    kept = getattr(stream, "kept", None)  # a point-wise part's recent values (its KeptStream)
    if kept is not None:
        yield f"{label} reading", kept
        yield from _part_holders(label, stream.inner)
    for name in ("prefix", "products"):  # KMeans' running sums, discord's sliding products
        inner = getattr(stream, name, None)
        if inner is not None and not isinstance(inner, bool):
            yield label, inner


def _root(array: np.ndarray) -> np.ndarray:
    while isinstance(array.base, np.ndarray):
        array = array.base
    return array


def compact(scorer: Any) -> int:
    """Copy each array of ``scorer``'s own state that is a view of an array over twice its size
    (the rest of that array is read by no later step); returns the bytes no longer held."""
    freed = 0
    for _, holder in _holders(scorer):
        for name, value in list(vars(holder).items()):
            if name in SHARED or not isinstance(value, np.ndarray) or value.base is None:
                continue
            root = _root(value)
            if root.nbytes > 2 * value.nbytes and value.flags.writeable:
                setattr(holder, name, value.copy())
                freed += root.nbytes - value.nbytes
    return freed


def held_bytes(scorer: Any, *extra: np.ndarray) -> int:
    """Bytes held by the arrays and tensors of ``scorer``'s own state (and ``extra``), each
    underlying buffer counted once."""
    values: list[Any] = list(extra)
    for _, holder in _holders(scorer):
        values.extend(_values(holder))
    return _bytes(values)


def held_by_part(scorer: Any) -> dict[str, int]:
    """:func:`held_bytes` by what holds it (``scorer``, ``stepper``, ``terms``, ``incidents``, each
    part's stream by its name, each point-wise part's recent values as ``NAME reading``)."""
    values: dict[str, list[Any]] = {}
    for label, holder in _holders(scorer):
        values.setdefault(label, []).extend(_values(holder))
    return {label: _bytes(held) for label, held in values.items()}


def _values(holder: Any) -> list[Any]:
    """The attribute values of ``holder`` that may be its own arrays (lists and tuples opened)."""
    out: list[Any] = []
    for name, value in vars(holder).items():
        if name not in SHARED:
            out.extend(value if isinstance(value, (list, tuple)) else (value,))
    return out


def _bytes(values: list[Any]) -> int:
    """Bytes of the arrays and tensors among ``values``, each underlying buffer counted once (an
    array the stream cannot write, and that is no view, is the model's, shared: not counted)."""
    seen: dict[int, int] = {}
    for value in values:
        if isinstance(value, np.ndarray):
            if value.flags.writeable or value.base is not None:  # shared read-only: the model's
                root = _root(value)
                seen[id(root)] = root.nbytes
        elif isinstance(value, torch.Tensor):
            storage = value.untyped_storage()
            seen[storage.data_ptr()] = storage.nbytes()
    return sum(seen.values())


def stream_bytes(scorer: Any, tail: Any) -> int:
    """What one served stream holds: its scorer's arrays, its tail (``RowTail``) and
    :data:`STREAM_OVERHEAD`."""
    return STREAM_OVERHEAD + held_bytes(scorer) + int(tail.nbytes)


__all__ = [
    "COMPACT_ROWS",
    "MEASURE_EVERY",
    "NEW_STREAM_BYTES",
    "STREAM_OVERHEAD",
    "compact",
    "held_by_part",
    "held_bytes",
    "stream_bytes",
]
