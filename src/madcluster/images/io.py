"""Reading images and the MVTec AD folder layout.

One class of MVTec AD (Bergmann et al., CVPR 2019) is a folder::

    <class>/train/good/*.png                      normal training images
    <class>/test/good/*.png                       normal test images
    <class>/test/<defect>/*.png                   anomalous test images, one folder per defect type
    <class>/ground_truth/<defect>/<stem>_mask.png their pixel masks (white = anomalous)

Images become float32 arrays ``[N, C, H, W]`` in [0, 1], resized to ``size x size`` (bilinear;
masks nearest). Every problem (unreadable file, mixed sizes without ``size``, grayscale mixed with
RGB, a defect image without its mask) is a ``DataError`` that names the file.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from madcluster.exceptions import DataError

IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".bmp", ".tif", ".tiff")
GOOD = "good"


@dataclass
class ImageSet:
    """Images ``[N, C, H, W]`` (float32, [0, 1]) with, for test sets, labels and pixel masks.

    labels: 0 normal / 1 anomalous per image; masks: ``[N, H, W]`` uint8 0/1 (all 0 for normal
    images); defects: the defect folder of each image (``good`` for normal ones); paths: the files.
    """

    images: np.ndarray
    labels: np.ndarray
    masks: np.ndarray
    defects: list[str]
    paths: list[str]

    def __len__(self) -> int:
        return len(self.images)


def _pil():
    try:
        from PIL import Image
    except ImportError:  # pragma: no cover - Pillow comes with matplotlib
        raise DataError("reading images needs Pillow: pip install pillow") from None
    return Image


def list_images(folder: str | os.PathLike) -> list[Path]:
    """Image files directly in ``folder``, sorted by name; ``DataError`` if there are none."""
    path = Path(folder)
    if not path.is_dir():
        raise DataError(f"image folder {os.fspath(folder)!r} does not exist")
    files = sorted(p for p in path.iterdir() if p.suffix.lower() in IMAGE_SUFFIXES and p.is_file())
    if not files:
        raise DataError(f"no image files ({', '.join(IMAGE_SUFFIXES)}) in {os.fspath(folder)!r}")
    return files


def read_image(
    path: str | os.PathLike, size: int | None = None, *, mask: bool = False
) -> np.ndarray:
    """One image as float32 ``[C, H, W]`` in [0, 1] (C = 1 grayscale, 3 colour), or a mask as
    uint8 ``[H, W]`` 0/1. ``size`` resizes to ``size x size`` (bilinear; nearest for masks)."""
    image_module = _pil()
    try:
        with image_module.open(path) as img:
            img.load()
            if mask:
                img = img.convert("L")
            elif img.mode not in ("L", "RGB"):
                img = img.convert("RGB" if img.mode in ("RGBA", "P", "CMYK", "YCbCr") else "L")
            if size is not None and img.size != (size, size):
                resample = (
                    image_module.Resampling.NEAREST if mask else image_module.Resampling.BILINEAR
                )
                img = img.resize((size, size), resample)
            arr = np.asarray(img)
    except (OSError, ValueError, SyntaxError) as exc:
        raise DataError(f"cannot read image {os.fspath(path)!r}: {exc}") from None
    if mask:
        return (arr > 127).astype(np.uint8)
    arr = arr.astype(np.float32) / 255.0
    return arr[None] if arr.ndim == 2 else np.ascontiguousarray(arr.transpose(2, 0, 1))


def stack_images(arrays: Sequence[np.ndarray], paths: Sequence[Path | str]) -> np.ndarray:
    """Stack ``[C, H, W]`` arrays; ``DataError`` naming the first file that differs in shape."""
    first = arrays[0].shape
    for arr, path in zip(arrays, paths):
        if arr.shape[0] != first[0]:
            kinds = {1: "grayscale", 3: "RGB"}
            raise DataError(
                f"{os.fspath(path)!r} is {kinds.get(arr.shape[0], arr.shape[0])} but "
                f"{os.fspath(paths[0])!r} is {kinds.get(first[0], first[0])}: a folder must be all "
                "grayscale or all RGB"
            )
        if arr.shape != first:
            raise DataError(
                f"{os.fspath(path)!r} is {arr.shape[2]}x{arr.shape[1]} but {os.fspath(paths[0])!r} "
                f"is {first[2]}x{first[1]}: pass a size to resize every image"
            )
    return np.stack(arrays).astype(np.float32)


def read_image_folder(folder: str | os.PathLike, size: int | None = None) -> np.ndarray:
    """Every image directly in ``folder`` as ``[N, C, H, W]`` float32 in [0, 1]."""
    files = list_images(folder)
    return stack_images([read_image(p, size) for p in files], files)


def read_images_or_folder(source: str | os.PathLike, size: int | None = None) -> np.ndarray:
    """An image folder, an MVTec class folder (its ``train/good``) or a single image file."""
    path = Path(source)
    if path.is_file():
        return read_image(path, size)[None]
    if (path / "train" / GOOD).is_dir():
        return read_image_folder(path / "train" / GOOD, size)
    return read_image_folder(path, size)


def read_mvtec_class(
    class_dir: str | os.PathLike, size: int | None = None
) -> tuple[ImageSet, ImageSet]:
    """The training set (``train/good``) and the labelled test set of one MVTec-layout class."""
    root = Path(class_dir)
    if not (root / "train" / GOOD).is_dir() or not (root / "test").is_dir():
        raise DataError(
            f"{os.fspath(class_dir)!r} is not an MVTec AD class folder: it needs train/good/ and "
            "test/<defect>/ (and ground_truth/<defect>/<name>_mask.png for each defect image)"
        )
    train_files = list_images(root / "train" / GOOD)
    train_images = stack_images([read_image(p, size) for p in train_files], train_files)
    n, _, h, w = train_images.shape
    train = ImageSet(
        train_images,
        np.zeros(n, np.int64),
        np.zeros((n, h, w), np.uint8),
        [GOOD] * n,
        [os.fspath(p) for p in train_files],
    )

    images, masks, labels, defects, paths = [], [], [], [], []
    for defect_dir in sorted(p for p in (root / "test").iterdir() if p.is_dir()):
        for file in list_images(defect_dir):
            image = read_image(file, size)
            if defect_dir.name == GOOD:
                mask = np.zeros(image.shape[1:], np.uint8)
            else:
                mask_file = root / "ground_truth" / defect_dir.name / f"{file.stem}_mask.png"
                if not mask_file.is_file():
                    raise DataError(
                        f"the defect image {os.fspath(file)!r} has no mask {os.fspath(mask_file)!r}"
                    )
                mask = read_image(mask_file, size, mask=True)
                if mask.shape != image.shape[1:]:
                    raise DataError(
                        f"mask {os.fspath(mask_file)!r} is {mask.shape[1]}x{mask.shape[0]} but its "
                        f"image is {image.shape[2]}x{image.shape[1]}"
                    )
            images.append(image)
            masks.append(mask)
            labels.append(int(defect_dir.name != GOOD))
            defects.append(defect_dir.name)
            paths.append(file)
    if not images:
        raise DataError(f"{os.fspath(root / 'test')!r} has no defect folders with images")
    test_images = stack_images(images + [train_images[0]], paths + [train_files[0]])[:-1]
    test = ImageSet(
        test_images,
        np.asarray(labels, np.int64),
        np.stack(masks),
        defects,
        [os.fspath(p) for p in paths],
    )
    return train, test


def mvtec_classes(root: str | os.PathLike) -> list[str]:
    """Class folders (those with ``train/good``) under an MVTec AD root, sorted."""
    path = Path(root)
    if not path.is_dir():
        raise DataError(f"dataset folder {os.fspath(root)!r} does not exist")
    names = sorted(p.name for p in path.iterdir() if (p / "train" / GOOD).is_dir())
    if not names:
        raise DataError(f"no MVTec AD class folders (<class>/train/good) under {os.fspath(root)!r}")
    return names
