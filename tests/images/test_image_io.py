"""The MVTec-layout reader: shapes, labels, masks, and a clear DataError for each bad input."""

from __future__ import annotations

import shutil

import numpy as np
import pytest
from PIL import Image

from madcluster.exceptions import DataError
from madcluster.images.io import (
    mvtec_classes,
    read_image_folder,
    read_images_or_folder,
    read_mvtec_class,
)
from madcluster.images.synthetic import DEFECTS


def test_reads_a_class_with_labels_and_masks(tiny_root):
    train, test = read_mvtec_class(tiny_root / "disc")
    assert train.images.shape == (6, 3, 32, 32) and train.images.dtype == np.float32
    assert 0.0 <= train.images.min() and train.images.max() <= 1.0
    assert len(test) == 2 + len(DEFECTS)
    assert test.labels.sum() == len(DEFECTS) and set(test.defects) == {"good", *DEFECTS}
    assert (test.masks[test.labels == 0] == 0).all()
    assert all(m.sum() > 0 for m in test.masks[test.labels == 1]), "every defect has a non-empty mask"


def test_grayscale_class_has_one_channel_and_resizing_works(tiny_root):
    train, test = read_mvtec_class(tiny_root / "weave", size=16)
    assert train.images.shape == (6, 1, 16, 16) and test.masks.shape[1:] == (16, 16)
    assert set(np.unique(test.masks)) <= {0, 1}


def test_folder_forms(tiny_root):
    assert read_images_or_folder(tiny_root / "disc").shape == (6, 3, 32, 32)  # a class folder: train/good
    assert read_images_or_folder(tiny_root / "disc" / "test" / "hole" / "000.png").shape == (1, 3, 32, 32)
    assert mvtec_classes(tiny_root) == ["disc", "weave"]


def test_missing_mask_is_named(tiny_root, tmp_path):
    root = shutil.copytree(tiny_root / "disc", tmp_path / "disc")
    (root / "ground_truth" / "hole" / "000_mask.png").unlink()
    with pytest.raises(DataError, match="000.png.*has no mask"):
        read_mvtec_class(root)


def test_unreadable_image_is_named(tmp_path):
    (tmp_path / "a.png").write_bytes(b"not a png")
    with pytest.raises(DataError, match="cannot read image .*a.png"):
        read_image_folder(tmp_path)


def test_mixed_sizes_and_mixed_colour_are_refused(tmp_path):
    Image.fromarray(np.zeros((8, 8, 3), np.uint8)).save(tmp_path / "a.png")
    Image.fromarray(np.zeros((9, 8, 3), np.uint8)).save(tmp_path / "b.png")
    with pytest.raises(DataError, match="b.png.*pass a size"):
        read_image_folder(tmp_path)
    assert read_image_folder(tmp_path, size=8).shape == (2, 3, 8, 8)
    Image.fromarray(np.zeros((8, 8), np.uint8)).save(tmp_path / "b.png")
    with pytest.raises(DataError, match="b.png.* is grayscale but .*a.png.* is RGB"):
        read_image_folder(tmp_path)


def test_not_a_class_folder_and_empty_folder(tmp_path):
    with pytest.raises(DataError, match="not an MVTec AD class folder"):
        read_mvtec_class(tmp_path)
    with pytest.raises(DataError, match="no image files"):
        read_image_folder(tmp_path)
    with pytest.raises(DataError, match="does not exist"):
        read_image_folder(tmp_path / "nope")
