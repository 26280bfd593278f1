"""A discord join's nearest training subsequence through a float32 product that only selects
candidates: exact (float64) for every pair float32 rounding could have put first.

Why: a whole series' distances are matrix products of its subsequences with every training one
(:mod:`madcluster.score.discord`), and a float32 product of 512 by 2,048 subsequences of 289
and 121 values took 0.67 and 0.42 of a float64 one's time here; alone, its rounding (6e-8 of
each of hundreds of products) would pass the 1e-10 a refactor keeps.

How: with ``q = (-2 a, 1)`` and ``b = (b, |b|^2)`` the float32 product ``d32 = q . b`` is within
``e = gamma_{K+3} (2 |a| sqrt(D) + D)`` of the float64 one (D values per subsequence, K = D + 1
products; ``|b|^2 <= D`` as it is z-normalised per column, segment means included; Higham's bound
for any summation order, the two roundings to float32 included). A pair can be the nearest only
where ``d32 <= min(its row's least d32 + e, the least exact value so far) + e``; those pairs are
computed again in float64 from the subsequences' values, and the least of them is the exact
nearest. A block where more than ``DENSE_SHARE`` of the pairs are candidates (a flat or perfectly
repeating training series) is computed in float64 as a whole. Below ``MIN_VALUES`` values per
subsequence the float32 product saves less than the candidates' selection costs (a whole series'
scoring time over float64's, both joins picking candidates: 1.01 at 100,000 x 1, 20 and 48 values;
0.74 at 20,000 x 6, 120 and 288), and the blocks stay float64.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

UNIT = float(np.finfo(np.float32).eps) / 2  # float32's unit roundoff
DENSE_SHARE = 1 / 16  # candidates per block above which the block is computed in float64
MIN_VALUES = 64  # values per subsequence from which the float32 product selects candidates


def rounding_bound(norms: np.ndarray, dims: int) -> np.ndarray:
    """Per query of squared norm ``norms``, how far its float32 product with a training row can
    be from the float64 one (with a little slack for the float64 arithmetic itself)."""
    k = dims + 4
    gamma = k * UNIT / (1 - k * UNIT)
    return 1.01 * gamma * (2.0 * np.sqrt(np.maximum(norms, 0.0) * dims) + dims) + 1e-12 * dims


def block_nearest(
    query: np.ndarray,
    query32: np.ndarray,
    block32: np.ndarray,
    rows: tuple[Callable[[np.ndarray], np.ndarray], int],
    bound: np.ndarray,
    best: np.ndarray,
    near: np.ndarray | None = None,
) -> None:
    """Lower ``best`` (per query, the least ``|b|^2 - 2 a.b`` so far, exact) with one training
    block: ``query`` ``(S, D + 1)`` float64 and ``query32`` its float32 copy, ``block32`` the
    block's rows ``(B, D + 1)`` in float32 (in float64: read as they are, no candidates),
    ``rows`` a function giving training rows in float64 and the block's first, ``near`` the
    pairs left out (or None)."""
    training_rows, first_row = rows
    if block32.dtype == np.float64:  # a block kept in float64 (few values): read exactly
        exact = (block32 @ query[0])[None, :] if len(query) == 1 else query @ block32.T
        _leave_out(exact, near)
        np.minimum(best, exact.min(axis=1), out=best)
        return
    d32 = (block32 @ query32[0])[None, :] if len(query32) == 1 else query32 @ block32.T
    _leave_out(d32, near)
    first = d32.argmin(axis=1)  # (an argmin and a flat nonzero: cheaper than a min and nonzero)
    least = np.take_along_axis(d32, first[:, None], axis=1)[:, 0].astype(np.float64)
    limit = np.minimum(least + bound, best) + bound
    upward = np.nextafter(limit.astype(np.float32), np.float32(np.inf))  # never below the limit
    chosen = np.flatnonzero(d32 <= upward[:, None])
    if near is not None:
        chosen = chosen[np.isfinite(d32.ravel()[chosen])]
    if len(chosen) == 0:
        return
    if len(chosen) > DENSE_SHARE * d32.size:  # most pairs near the least: all in float64
        exact = query @ training_rows(first_row + np.arange(block32.shape[0])).T
        _leave_out(exact, near)
        np.minimum(best, exact.min(axis=1), out=best)
        return
    which, where = np.divmod(chosen, d32.shape[1])
    kept, inverse = np.unique(where, return_inverse=True)
    exact = np.einsum("ij,ij->i", query[which], training_rows(first_row + kept)[inverse])
    np.minimum.at(best, which, exact)


def _leave_out(distances: np.ndarray, near: np.ndarray | None) -> None:
    if near is not None:
        distances[near] = np.inf


__all__ = ["DENSE_SHARE", "MIN_VALUES", "UNIT", "block_nearest", "rounding_bound"]
