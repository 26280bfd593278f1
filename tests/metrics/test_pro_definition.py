"""PRO against its definition written as a direct loop (regions by a flood fill over the eight
neighbours, each threshold's normal-pixel rate and region overlaps counted pixel by pixel), on
maps with tied scores and diagonal regions; its argument checks."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from madcluster.exceptions import DataError
from madcluster.metrics.image import pixel_auroc, pro_auc


def _regions(mask: np.ndarray) -> list[list[tuple[int, int]]]:
    seen = np.zeros(mask.shape, bool)
    regions = []
    for start in zip(*np.nonzero(mask)):
        if seen[start]:
            continue
        seen[start] = True
        todo, region = [start], []
        while todo:
            i, j = todo.pop()
            region.append((i, j))
            for di in (-1, 0, 1):
                for dj in (-1, 0, 1):
                    a, b = i + di, j + dj
                    inside = 0 <= a < mask.shape[0] and 0 <= b < mask.shape[1]
                    if inside and mask[a, b] and not seen[a, b]:
                        seen[a, b] = True
                        todo.append((a, b))
        regions.append(region)
    return regions


def _pro(maps: np.ndarray, masks: np.ndarray, fpr_limit: float, n_thresholds: int) -> float:
    normal = sorted(maps[masks == 0].tolist())
    regions = [[image[p] for p in r] for image, mask in zip(maps, masks) for r in _regions(mask)]
    points = []
    for fpr in np.linspace(0.0, fpr_limit, n_thresholds + 1):
        if fpr == 0.0:
            threshold = math.nextafter(normal[-1], math.inf)  # nothing normal at or above it
        else:
            threshold = normal[min(math.ceil(len(normal) * (1.0 - fpr)), len(normal) - 1)]
        rate = sum(v >= threshold for v in normal) / len(normal)
        overlap = np.mean([sum(v >= threshold for v in r) / len(r) for r in regions])
        points.append((rate, overlap))
    points.sort(key=lambda p: p[0])
    below = [p for p in points if p[0] < fpr_limit]
    end = np.interp(fpr_limit, [p[0] for p in points], [p[1] for p in points])
    curve = below + [(fpr_limit, end)]
    area = sum((b[0] - a[0]) * (a[1] + b[1]) / 2 for a, b in itertools.pairwise(curve))
    return area / fpr_limit


def _case(seed: int, ties: bool = True) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    masks = np.zeros((3, 9, 9), np.uint8)
    masks[0, 1, 1] = masks[0, 2, 2] = masks[0, 3, 3] = 1  # one region through the diagonals
    masks[0, 6:8, 5:8] = 1
    masks[2, 4:6, 0:2] = 1
    maps = rng.random(masks.shape) + 0.4 * masks
    if ties:
        return np.round(maps, 1), masks
    # defect pixels between the two lowest and the two highest normal ones: the curve's
    # first and last steps show them
    normal = np.sort(maps[masks == 0])
    maps[0, 1, 1], maps[0, 2, 2] = normal[:2].mean(), normal[-2:].mean()
    return maps, masks


@pytest.mark.parametrize("ties", [True, False])
@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize(
    ("fpr_limit", "n_thresholds"), [(0.3, 200), (0.05, 7), (1.0, 10), (0.3, 1000), (0.003, 5)]
)
def test_pro_is_its_definition(seed: int, ties: bool, fpr_limit: float, n_thresholds: int) -> None:
    # 1000 steps, or a limit of 0.003: steps that ask for less than one normal pixel above
    maps, masks = _case(seed, ties)
    expected = _pro(maps, masks, fpr_limit, n_thresholds)
    assert pro_auc(maps, masks, fpr_limit, n_thresholds) == pytest.approx(expected, abs=1e-12)


def test_the_default_curve_has_200_thresholds_up_to_three_tenths() -> None:
    # more normal pixels than the 200 steps: 201 would read other thresholds
    rng = np.random.default_rng(5)
    masks = np.zeros((2, 30, 30), np.uint8)
    masks[0, 3:9, 4:12] = 1
    masks[1, 20:23, 20:29] = 1
    maps = rng.random(masks.shape) + 0.3 * masks
    assert pro_auc(maps, masks) == pytest.approx(_pro(maps, masks, 0.3, 200), abs=1e-12)
    assert pro_auc(maps, masks) != pytest.approx(_pro(maps, masks, 0.3, 201), abs=1e-12)


def test_integer_maps_score_as_their_float_values() -> None:
    maps, masks = _case(6)
    as_int = (maps * 10).astype(np.int64)
    assert pro_auc(as_int, masks) == pytest.approx(pro_auc(as_int / 1.0, masks), abs=1e-12)
    assert pixel_auroc(as_int, masks) == pixel_auroc(as_int / 1.0, masks)


@pytest.mark.parametrize("fpr_limit", [0.0, -0.1, 1.5, math.nan])
def test_a_false_positive_limit_outside_0_1_is_refused(fpr_limit: float) -> None:
    maps, masks = _case(0)
    with pytest.raises(DataError, match=r"fpr_limit must be in \(0, 1\]"):
        pro_auc(maps, masks, fpr_limit=fpr_limit)


def test_every_pixel_anomalous_is_refused() -> None:
    maps, masks = _case(0)
    with pytest.raises(DataError, match="PRO needs both normal and anomalous pixels"):
        pro_auc(maps, np.ones_like(masks))
    with pytest.raises(DataError, match="anomaly maps contain NaN or inf"):
        pro_auc(np.full(maps.shape, np.inf), masks)
