"""Image and pixel AUROC against scikit-learn on fixed inputs; PRO's fixed points."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import roc_auc_score

from madcluster.exceptions import DataError
from madcluster.metrics.image import image_auroc, pixel_auroc, pro_auc


def _case(seed: int = 0):
    rng = np.random.default_rng(seed)
    masks = np.zeros((6, 12, 12), np.uint8)
    masks[1, 2:5, 2:6] = 1
    masks[3, 7:11, 1:3] = 1
    masks[3, 0:2, 9:12] = 1  # a second region in the same image
    maps = rng.random((6, 12, 12)) + 0.6 * masks
    maps[4, :3, :3] = 0.5  # ties
    return maps, masks


def test_aurocs_equal_sklearn():
    maps, masks = _case()
    assert pixel_auroc(maps, masks) == pytest.approx(roc_auc_score(masks.ravel(), maps.ravel()), abs=1e-12)
    labels = masks.reshape(6, -1).max(1)
    scores = np.round(maps.reshape(6, -1).max(1), 1)  # rounded: ties between images
    assert image_auroc(scores, labels) == pytest.approx(roc_auc_score(labels, scores), abs=1e-12)


def test_pro_fixed_points_and_order():
    maps, masks = _case()
    assert pro_auc(masks.astype(float), masks) == pytest.approx(1.0)
    assert pro_auc(-masks.astype(float), masks) == pytest.approx(0.0)
    random = np.mean([pro_auc(np.random.default_rng(s).random(masks.shape), masks) for s in range(5)])
    assert random == pytest.approx(0.15, abs=0.06)  # chance: overlap ~ FPR, mean over [0, .3] = .15
    assert random < pro_auc(maps, masks) < 1.0


def test_pro_weighs_regions_not_pixels():
    """A map that finds only the big region scores 1/2 on two regions, whatever their sizes."""
    masks = np.zeros((2, 20, 20), np.uint8)
    masks[0, :10, :10] = 1  # 100 pixels
    masks[1, 0, 0] = 1  # 1 pixel
    maps = np.zeros((2, 20, 20))
    maps[0, :10, :10] = 1.0
    maps[1, 0, 0] = -1.0
    assert pro_auc(maps, masks) == pytest.approx(0.5, abs=0.01)


def test_bad_inputs_are_named():
    maps, masks = _case()
    with pytest.raises(DataError, match="same shape"):
        pixel_auroc(maps[:, :5], masks)
    bad = maps.copy()
    bad[0, 0, 0] = np.nan
    with pytest.raises(DataError, match="NaN"):
        pro_auc(bad, masks)
    with pytest.raises(DataError, match="both normal and anomalous"):
        pro_auc(maps, np.zeros_like(masks))
