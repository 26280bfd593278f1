"""A generated texture-defect set in the MVTec AD layout (for tests and benchmarks here).

MVTec AD cannot be downloaded on this machine, so the image table runs on a small stand-in made
deterministically from a seed: three textures (``weave``: a grayscale woven grid, like MVTec's
grid; ``grain``: warped wood-like stripes; ``speckle``: smooth coloured noise, like carpet) and two
objects (``disc``: a coloured pill-like disc; ``ring``: a metal-nut-like ring), each with natural
variation (phase, orientation, position, colour jitter, sensor noise). Test defects: ``scratch``
(a thin dark or bright line), ``hole`` (a small dark disc), ``stain`` (a soft coloured blob) and
``colour`` (a patch whose colour or brightness shifts), each with its pixel mask.

Its numbers are not MVTec AD's: the images are small (64 x 64 by default) and simpler.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
from scipy.ndimage import gaussian_filter

from madcluster.atomic import atomic_path
from madcluster.images.io import GOOD

TEXTURES = ("weave", "grain", "speckle")
OBJECTS = ("disc", "ring")
CLASSES = TEXTURES + OBJECTS
DEFECTS = ("scratch", "hole", "stain", "colour")
GRAYSCALE = ("weave",)


def _grid(size: int) -> tuple[np.ndarray, np.ndarray]:
    ys, xs = np.mgrid[0:size, 0:size].astype(np.float64)
    return ys / size, xs / size


def normal_image(cls: str, size: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """One defect-free image ``[H, W, 3]`` in [0, 1] and the region where defects may go."""
    y, x = _grid(size)
    region = np.ones((size, size), bool)
    if cls == "weave":
        period = rng.uniform(0.11, 0.13)
        phase = rng.uniform(0, 1, 2)
        a = 0.5 + 0.5 * np.sin(2 * np.pi * ((x + phase[0]) / period))
        b = 0.5 + 0.5 * np.sin(2 * np.pi * ((y + phase[1]) / period))
        value = 0.25 + 0.5 * np.maximum(a, b) ** 2
        img = np.repeat(value[..., None], 3, axis=2)
    elif cls == "grain":
        angle = rng.uniform(-0.15, 0.15)
        warp = gaussian_filter(rng.normal(size=(size, size)), size / 8) * 6
        u = np.cos(angle) * x + np.sin(angle) * y + 0.04 * warp
        rings = 0.5 + 0.5 * np.sin(
            2 * np.pi * u / rng.uniform(0.07, 0.09) + rng.uniform(0, 2 * np.pi)
        )
        base = np.array([0.55, 0.36, 0.2]) * rng.uniform(0.9, 1.1)
        img = base * (0.75 + 0.35 * rings[..., None])
    elif cls == "speckle":
        noise = gaussian_filter(rng.normal(size=(size, size, 3)), (1.2, 1.2, 0))
        tint = np.array([0.35, 0.4, 0.6]) + rng.normal(0, 0.02, 3)
        img = tint + 0.12 * noise / noise.std()
    elif cls in OBJECTS:
        cy, cx = 0.5 + rng.normal(0, 0.03, 2)
        r = np.hypot(y - cy, x - cx)
        background = np.array([0.12, 0.12, 0.14])
        if cls == "disc":
            radius = rng.uniform(0.3, 0.33)
            shade = 1.0 - 0.35 * np.clip(r / radius, 0, 1) ** 2
            colour = np.array([0.85, 0.75, 0.3]) + rng.normal(0, 0.02, 3)
            inside = r < radius
        else:
            outer, inner = rng.uniform(0.34, 0.37), rng.uniform(0.14, 0.17)
            theta = np.arctan2(y - cy, x - cx)
            shade = 0.8 + 0.2 * np.cos(6 * theta + rng.uniform(0, 2 * np.pi))  # six-sided sheen
            colour = np.array([0.62, 0.64, 0.68]) + rng.normal(0, 0.02, 3)
            inside = (r < outer) & (r > inner)
        img = np.where(inside[..., None], colour * shade[..., None], background)
        # away from the rim
        region = inside & (gaussian_filter(inside.astype(float), size / 32) > 0.95)
        region = region if region.any() else inside
    else:
        raise ValueError(f"unknown class {cls!r}; choose one of {', '.join(CLASSES)}")
    img = img + rng.normal(0, 0.015, img.shape)  # sensor noise
    return np.clip(img, 0, 1), region


def add_defect(
    img: np.ndarray, region: np.ndarray, defect: str, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """``img`` with one defect of type ``defect`` placed inside ``region``, and its 0/1 mask."""
    size = img.shape[0]
    ys, xs = np.nonzero(region)
    pick = rng.integers(len(ys))
    cy, cx = ys[pick], xs[pick]
    yy, xx = np.mgrid[0:size, 0:size].astype(np.float64)
    if defect == "scratch":
        angle = rng.uniform(0, np.pi)
        length = rng.uniform(0.2, 0.4) * size
        dy, dx = np.sin(angle), np.cos(angle)
        t = np.clip((yy - cy) * dy + (xx - cx) * dx, -length / 2, length / 2)
        dist = np.hypot(yy - cy - t * dy, xx - cx - t * dx)
        mask = dist <= rng.uniform(0.6, 1.1)
        shade = rng.choice([0.08, 0.95])
        out = np.where(mask[..., None], 0.25 * img + 0.75 * shade, img)
    elif defect == "hole":
        mask = np.hypot(yy - cy, xx - cx) <= rng.uniform(2.0, 4.0)
        out = np.where(mask[..., None], 0.04 + 0.1 * img, img)
    elif defect == "stain":
        blob = gaussian_filter(
            (np.hypot(yy - cy, xx - cx) < rng.uniform(3, 6)).astype(float)
            + 0.6 * rng.random((size, size)) * (np.hypot(yy - cy, xx - cx) < 8),
            1.5,
        )
        alpha = np.clip(blob, 0, 1) * rng.uniform(0.5, 0.75)
        mask = alpha > 0.15
        alpha = np.where(mask, alpha, 0.0)  # no faint halo outside the mask
        colour = np.array([0.45, 0.3, 0.12]) if rng.random() < 0.5 else np.array([0.15, 0.3, 0.2])
        out = img * (1 - alpha[..., None]) + colour * alpha[..., None]
    elif defect == "colour":
        ry, rx = rng.uniform(3, 7, 2)
        mask = ((yy - cy) / ry) ** 2 + ((xx - cx) / rx) ** 2 <= 1
        shift = rng.permutation(3) if rng.random() < 0.5 else np.arange(3)
        gain = rng.uniform(0.55, 0.7) if rng.random() < 0.5 else rng.uniform(1.3, 1.5)
        out = np.where(mask[..., None], np.clip(img[..., shift] * gain, 0, 1), img)
    else:
        raise ValueError(f"unknown defect {defect!r}; choose one of {', '.join(DEFECTS)}")
    mask = mask & (np.abs(out - img).max(axis=2) > 0.02)  # only pixels that actually changed
    return np.clip(out, 0, 1), mask.astype(np.uint8)


def _save_png(path: Path, array: np.ndarray) -> None:
    from PIL import Image

    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(path) as tmp:
        Image.fromarray(array).save(tmp, format="PNG")


def _to_uint8(img: np.ndarray, cls: str) -> np.ndarray:
    out = np.round(np.clip(img, 0, 1) * 255).astype(np.uint8)
    return out.mean(axis=2).astype(np.uint8) if cls in GRAYSCALE else out


def make_texture_defects(
    root: str | os.PathLike,
    *,
    seed: int = 0,
    size: int = 64,
    classes: tuple[str, ...] = CLASSES,
    n_train: int = 60,
    n_test_good: int = 12,
    n_test_per_defect: int = 6,
) -> Path:
    """Write the generated set under ``root`` in the MVTec AD layout; the same seed gives the same
    files byte for byte. ``weave`` is grayscale (as MVTec's grid), the others RGB. Returns
    ``root``."""
    root = Path(root)
    for index, cls in enumerate(classes):
        rng = np.random.default_rng([seed, index])
        folder = root / cls
        for i in range(n_train):
            _save_png(
                folder / "train" / GOOD / f"{i:03d}.png",
                _to_uint8(normal_image(cls, size, rng)[0], cls),
            )
        for i in range(n_test_good):
            _save_png(
                folder / "test" / GOOD / f"{i:03d}.png",
                _to_uint8(normal_image(cls, size, rng)[0], cls),
            )
        for defect in DEFECTS:
            for i in range(n_test_per_defect):
                img, region = normal_image(cls, size, rng)
                bad, mask = add_defect(img, region, defect, rng)
                _save_png(folder / "test" / defect / f"{i:03d}.png", _to_uint8(bad, cls))
                _save_png(folder / "ground_truth" / defect / f"{i:03d}_mask.png", mask * 255)
    return root
