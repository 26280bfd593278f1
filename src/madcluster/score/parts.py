"""The score's parts behind one protocol (:class:`Part`, :class:`PartStream`) and the registry of
their kinds (:data:`PART_KINDS`).

A part is one per-step reading of a series that the score adds: the network's own score
(``own``, :mod:`madcluster.score.own`), window KMeans (``kmeans``,
:mod:`madcluster.score.window_kmeans`), the ridge next-step error (``ar``,
:mod:`madcluster.score.autoregressive`). Each part

* is fitted on the training rows (:meth:`Part.fit`) and is then a frozen value;
* gives its values on a whole series (:meth:`Part.values`) and its causal reading, from steps
  <= t only (:meth:`Part.at_once`; the same values for a part that reads no later step);
* says how many rows after a step its value is final (:meth:`Part.final_after`);
* streams (:meth:`Part.stream`: rows in, the new rows' causal values out, state to a file and back);
* writes its fitted arrays for a file and reads them back (:meth:`Part.to_arrays`,
  :meth:`Part.from_arrays`).

How the parts combine (training statistics, weights, centred means, the rule) is one object over
them, :class:`~madcluster.score.combination.Combination`. A new part is one module with a
:class:`Part` subclass and one line in :data:`PART_KINDS`.

Like darts' scorers, a part owns its windowing and how window values map back to steps; unlike
them it also owns its stream, so a stream and a whole series give the same bits.
"""

from __future__ import annotations

import importlib
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from madcluster.exceptions import ParameterError

#: The kinds of part, name -> ``"module:Class"`` (imported on first use, so the CLI can list the
#: names without importing scikit-learn) or the class itself. ``own`` is always the score's first
#: part.
PART_KINDS: dict[str, str | type[Part]] = {
    "own": "madcluster.score.own:OwnScore",
    "kmeans": "madcluster.score.window_kmeans:WindowKMeans",
    "ar": "madcluster.score.autoregressive:AutoRegressive",
    "discord": "madcluster.score.discord:Discord",
    "cross": "madcluster.score.cross_residual:CrossResidual",
}
OWN = "own"  # the part of the network's own score (its values arrive with the rows, not from them)
#: Part kinds whose older model files hold an older generation of the part, name ->
#: ``"module:function"`` reading a file's arrays into the part of the generation that wrote them
#: (:mod:`madcluster.score.legacy`); the other kinds read theirs with ``from_arrays``.
PART_UPGRADES: dict[str, str] = {
    "kmeans": "madcluster.score.legacy:kmeans_from_arrays",
    "discord": "madcluster.score.legacy:discord_from_arrays",
}


@dataclass(frozen=True)
class FitContext:
    """What a part's fit may read besides the training rows."""

    window_size: int
    random_state: int | None = None


class Part(ABC):
    """One fitted part of the score; see the module docstring.

    Class attributes: ``name`` (its kind in :data:`PART_KINDS` and its key everywhere: weights,
    statistics, files); ``point_wise`` (its value at step t is read at t alone and is final at
    once: a centred mean may read it, ``part_smoothing``; a combination reads it through
    :class:`~madcluster.score.smoothed.Smoothed`); ``at_once_only`` (it adds to the at-once
    score alone, what incidents page on; the final score leaves it out)."""

    name: ClassVar[str]
    point_wise: ClassVar[bool] = False
    at_once_only: ClassVar[bool] = False

    @classmethod
    @abstractmethod
    def fit(cls, rows: np.ndarray, context: FitContext) -> Part:
        """The part fitted on the training ``rows`` ``(T, D)`` (checked, float32)."""

    def bind(self, own: np.ndarray) -> Part:
        """The part reading rows whose network own scores are ``own`` (the own score arrives with
        the rows: :class:`~madcluster.score.own.OwnScore` reads it; every other part is itself)."""
        return self

    @abstractmethod
    def values(self, rows: np.ndarray) -> np.ndarray:
        """Per-step values ``(T,)`` of a whole series of checked ``rows``."""

    def at_once(self, rows: np.ndarray) -> np.ndarray:
        """Per-step values of ``rows`` read from steps <= t only (default: :meth:`values`)."""
        return self.values(rows)

    def reference_values(self, rows: np.ndarray) -> np.ndarray:
        """:meth:`values` of the training ``rows`` as the part's training statistics read them
        (default: :meth:`values`; a part that would match the rows to themselves leaves that
        out)."""
        return self.values(rows)

    def reference_at_once(self, rows: np.ndarray) -> np.ndarray:
        """:meth:`at_once` of the training ``rows`` for the statistics (default:
        :meth:`at_once`)."""
        return self.at_once(rows)

    def describe(self) -> str:
        """The scales the fit chose from the training rows, for messages ("" for none)."""
        return ""

    @property
    def reads_ahead(self) -> bool:
        """Whether :meth:`values` reads later steps (then :meth:`at_once` differs from it)."""
        return self.final_after() > 0

    def final_after(self) -> int:
        """Rows after a step until its value is final (0: at once)."""
        return 0

    @abstractmethod
    def stream(self) -> PartStream:
        """A new stream of this part (no row seen)."""

    @abstractmethod
    def to_arrays(self) -> dict[str, np.ndarray]:
        """The fitted state as named arrays (no pickle)."""

    @classmethod
    @abstractmethod
    def from_arrays(cls, arrays: dict[str, np.ndarray]) -> Part:
        """The part :meth:`to_arrays` wrote."""


class PartStream(ABC):
    """A part over a growing series. :meth:`append` returns the new rows' causal values; a part
    that reads ahead (not ``point_wise``) also gives its values on the rows so far
    (:meth:`values`), the first step they do not fix (:meth:`final_before`) and forgets what no
    pending step reads (:meth:`forget_before`). A point-wise part's values are final at once;
    its :class:`~madcluster.score.smoothed.KeptStream` keeps those pending steps still read."""

    @abstractmethod
    def append(self, rows: np.ndarray, given: np.ndarray | None = None) -> np.ndarray:
        """Add checked ``rows`` (``given``: the rows' network own scores, which the own score's
        stream reads and every other ignores); return their causal values."""

    def values(self, steps: np.ndarray) -> np.ndarray:
        """The values of ``steps`` on the rows so far, as :meth:`Part.values` gives them there
        (NaN where there is none yet)."""
        raise NotImplementedError(
            f"{type(self).__name__}: a point-wise part's values are kept by its KeptStream"
        )

    def final_before(self, n_steps: int) -> int:
        """The first step whose value ``n_steps`` rows do not fix yet."""
        return n_steps

    def forget_before(self, step: int) -> None:
        """Drop what no step from ``step`` on reads, now or later."""

    @abstractmethod
    def state(self) -> dict[str, np.ndarray]:
        """The stream's state as named arrays."""

    @abstractmethod
    def load(self, arrays: dict[str, np.ndarray]) -> None:
        """Go on from a :meth:`state`."""


def part_class(name: str) -> type[Part]:
    """The class of part kind ``name`` (:data:`PART_KINDS`), or a ``ParameterError``."""
    try:
        entry = PART_KINDS[name]
    except KeyError:
        raise ParameterError(
            f"unknown part {name!r}; the parts are {', '.join(PART_KINDS)}"
        ) from None
    return _resolve(entry) if isinstance(entry, str) else entry


def _resolve(entry: str) -> Any:
    """The object ``"module:attribute"`` names (imported on first use)."""
    module, _, attribute = entry.partition(":")
    return getattr(importlib.import_module(module), attribute)


def term_names() -> tuple[str, ...]:
    """The kinds a model may add to its own score (``input_terms``): every kind but ``own``."""
    return tuple(n for n in PART_KINDS if n != OWN)


def fit_parts(names: tuple[str, ...], rows: np.ndarray, context: FitContext) -> list[Part]:
    """The named parts fitted on the training ``rows``, in ``names`` order."""
    return [part_class(n).fit(rows, context) for n in names]


def parts_to_arrays(parts: list[Part], prefix: str = "input_terms/") -> dict[str, np.ndarray]:
    """The parts' arrays under ``<prefix><name>/`` (the parts with no arrays write none)."""
    return {f"{prefix}{p.name}/{k}": v for p in parts for k, v in p.to_arrays().items()}


def parts_from_arrays(
    names: tuple[str, ...], arrays: dict[str, np.ndarray], prefix: str = "input_terms/"
) -> list[Part]:
    """The parts :func:`parts_to_arrays` wrote, in ``names`` order (a name with no arrays: not
    fitted, as a base-only model's)."""
    out = []
    for name in names:
        head = f"{prefix}{name}/"
        mine = {k[len(head) :]: v for k, v in arrays.items() if k.startswith(head)}
        if mine:
            upgrade = PART_UPGRADES.get(name)
            out.append(_resolve(upgrade)(mine) if upgrade else part_class(name).from_arrays(mine))
    return out


__all__ = [
    "OWN",
    "PART_KINDS",
    "PART_UPGRADES",
    "FitContext",
    "Part",
    "PartStream",
    "fit_parts",
    "part_class",
    "parts_from_arrays",
    "parts_to_arrays",
    "term_names",
]
