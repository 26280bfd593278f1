"""A point-wise part as the score reads it: :class:`Smoothed`, a part of its own.

Why: a point-wise part (the network's own score, the next-step error) is read through a centred
mean of ``width`` steps (:mod:`madcluster.score.smoothing`; 1: as it is) and, at once, through a
trailing mean of ``at_once_width`` steps. As a part wrapping the point-wise one, that reading has
the interface of every other part (values, at once, training readings, how late it is final, a
stream), so the combination and its stream treat every part alike, with no branch on what a part
can do. Every point-wise part of a combination is wrapped (:func:`wrap_point_wise`), smoothed or
not: its stream (:class:`KeptStream`) keeps the values its pending steps still read.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import ClassVar

import numpy as np

from madcluster.score.parts import FitContext, Part, PartStream
from madcluster.score.smoothing import (
    SmoothedStream,
    causal_width,
    centred_means,
    trailing_means,
)


def smoothing_delay(width: int) -> int:
    """Rows after a step until its centred mean of ``width`` steps is final."""
    return width - (width - 1) // 2 - 1 if width > 1 else 0


@dataclass(frozen=True)
class Smoothed(Part):
    """The point-wise part ``inner`` read through a centred mean of ``width`` steps, and at once
    through a trailing mean of ``at_once_width`` (1: its value at t)."""

    inner: Part
    width: int = 1
    at_once_width: int = 1

    #: the reading of a point-wise part's step values (a stream keeps them for its pending steps)
    point_wise: ClassVar[bool] = True

    @property  # type: ignore[override]
    def name(self) -> str:  # the inner part's: every table keys it so
        return self.inner.name

    @property  # type: ignore[override]
    def at_once_only(self) -> bool:  # the inner part's
        return self.inner.at_once_only

    @classmethod
    def fit(cls, rows: np.ndarray, context: FitContext) -> Part:
        raise TypeError("a Smoothed part wraps a fitted point-wise part: Smoothed(part, width)")

    def bind(self, own: np.ndarray) -> Smoothed:
        inner = self.inner.bind(own)
        return self if inner is self.inner else replace(self, inner=inner)

    def values(self, rows: np.ndarray) -> np.ndarray:
        return self._centred(self.inner.values(rows))

    def at_once(self, rows: np.ndarray) -> np.ndarray:
        return self._trailing(self.inner.values(rows))

    def reference_values(self, rows: np.ndarray) -> np.ndarray:
        return self._centred(self.inner.reference_values(rows))

    def reference_at_once(self, rows: np.ndarray) -> np.ndarray:
        return self._trailing(self.inner.reference_values(rows))

    def _centred(self, values: np.ndarray) -> np.ndarray:
        return centred_means(values, self.width) if self.width > 1 else values

    def _trailing(self, values: np.ndarray) -> np.ndarray:
        return trailing_means(values, self.at_once_width) if self.at_once_width > 1 else values

    def describe(self) -> str:
        mean = f"mean of {self.width}" if self.width > 1 else ""
        return ", ".join(d for d in (mean, self.inner.describe()) if d)

    def final_after(self) -> int:
        return smoothing_delay(self.width)

    def stream(self) -> KeptStream:
        return KeptStream(self.inner.stream(), SmoothedStream(self.width), self.at_once_width)

    def to_arrays(self) -> dict[str, np.ndarray]:
        return self.inner.to_arrays()

    @classmethod
    def from_arrays(cls, arrays: dict[str, np.ndarray]) -> Part:
        raise TypeError("a Smoothed part is rebuilt from its combination's smoothing table")


@dataclass
class KeptStream(PartStream):
    """A :class:`Smoothed` part over a growing series: the point-wise part's stream, and the
    values of it that pending steps still read (their centred means, their trailing means at
    once)."""

    inner: PartStream
    kept: SmoothedStream
    at_once_width: int = 1
    # state files from before the parts kept their own values named them apart (CombinationStream)
    KEPT: ClassVar[str] = "kept/"

    def append(self, rows: np.ndarray, given: np.ndarray | None = None) -> np.ndarray:
        values = self.inner.append(rows, given)
        seen = self.kept.steps_seen
        self.kept.append(values)
        if self.at_once_width > 1:
            return self.kept.trailing(np.arange(seen, seen + len(rows)), self.at_once_width)
        return values

    def values(self, steps: np.ndarray) -> np.ndarray:
        return self.kept.means(steps)

    def final_before(self, n_steps: int) -> int:
        return self.kept.final_before()

    def forget_before(self, step: int) -> None:
        self.kept.forget_before(step)
        self.inner.forget_before(step)

    def state(self) -> dict[str, np.ndarray]:
        kept = {f"{self.KEPT}{k}": v for k, v in self.kept.state().items()}
        return {**self.inner.state(), **kept}

    def load(self, arrays: dict[str, np.ndarray]) -> None:
        n = len(self.KEPT)
        self.kept.load({k[n:]: v for k, v in arrays.items() if k.startswith(self.KEPT)})
        self.inner.load({k: v for k, v in arrays.items() if not k.startswith(self.KEPT)})


def wrap_point_wise(
    parts: tuple[Part, ...], smoothing: Mapping[str, int], at_once_widths: Mapping[str, int]
) -> tuple[Part, ...]:
    """``parts`` with each point-wise one as :class:`Smoothed` (a part already wrapped: rewrapped
    from its inner part): a centred mean of ``smoothing[name]`` steps (1 where missing) and at
    once a trailing mean of ``at_once_widths[name]`` (where missing: the centred block cut at t,
    as files from before it read it)."""
    out = []
    for part in parts:
        inner = part.inner if isinstance(part, Smoothed) else part
        if not inner.point_wise:
            out.append(inner)
            continue
        width = int(smoothing.get(inner.name, 1))
        at_once = int(at_once_widths.get(inner.name, causal_width(width)))
        out.append(Smoothed(inner, width, at_once))
    return tuple(out)


__all__ = ["KeptStream", "Smoothed", "smoothing_delay", "wrap_point_wise"]
