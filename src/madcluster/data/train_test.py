"""The in-memory benchmark data: a train/test split with labels and entities (channels / machines).

Loading (where files are, which formats) lives in :mod:`madcluster.data.datasets` and
:mod:`madcluster.data.readers`; this module only holds the result.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np


@dataclass(frozen=True)
class Entity:
    """One channel / machine: its rows in the concatenated train and test arrays."""

    name: str
    train_slice: slice
    test_slice: slice


@dataclass(eq=False)
class Dataset:
    """A train/test split: ``train`` (T, D) float32, ``test`` (T', D) float32, ``labels`` (T',)
    uint8."""

    name: str
    train: np.ndarray
    test: np.ndarray
    labels: np.ndarray
    entities: list[Entity] = field(default_factory=list)
    columns: list[str] | None = None

    def __post_init__(self) -> None:
        if not self.entities:
            self.entities = [Entity(self.name, slice(0, len(self.train)), slice(0, len(self.test)))]

    @property
    def n_features(self) -> int:
        return int(self.train.shape[1])

    @property
    def anomaly_ratio(self) -> float:
        """Fraction of anomalous test points."""
        return float(self.labels.mean()) if len(self.labels) else 0.0

    def entity(self, key: str | int) -> Dataset:
        """The entity with this name (or position in ``entities``) as its own Dataset (array
        views)."""
        if isinstance(key, (int, np.integer)) and not isinstance(key, bool):
            if not -len(self.entities) <= int(key) < len(self.entities):
                raise IndexError(f"{self.name} has {len(self.entities)} entities, no index {key}")
            ent = self.entities[int(key)]
        else:
            matches = [e for e in self.entities if e.name == key] or [
                e for e in self.entities if e.name.lower() == str(key).lower()
            ]
            if not matches:
                names = [e.name for e in self.entities]
                raise KeyError(
                    f"{self.name} has no entity {key!r}; it has {len(names)}: "
                    f"{', '.join(names[:30])}{' ...' if len(names) > 30 else ''}"
                )
            ent = matches[0]
        train, test = self.train[ent.train_slice], self.test[ent.test_slice]
        return Dataset(
            name=f"{self.name}/{ent.name}",
            train=train,
            test=test,
            labels=self.labels[ent.test_slice],
            entities=[Entity(ent.name, slice(0, len(train)), slice(0, len(test)))],
            columns=self.columns,
        )

    def iter_entities(self) -> Iterator[Dataset]:
        """Each entity in order, as its own Dataset."""
        for i in range(len(self.entities)):
            yield self.entity(i)

    def __repr__(self) -> str:
        return (
            f"Dataset({self.name!r}, train={self.train.shape}, test={self.test.shape}, "
            f"anomaly_ratio={self.anomaly_ratio:.4f}, entities={len(self.entities)})"
        )
