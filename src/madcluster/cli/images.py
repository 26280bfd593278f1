"""``madcluster fit`` / ``score`` on images: an image folder or an MVTec AD class folder.

``madcluster fit bottle/ --embedder rd4ad -o bottle.mcz`` trains on ``bottle/train/good`` (or on
every image of a plain folder); ``madcluster score bottle.mcz bottle/test/crack`` writes one score
per image (CSV) and, with ``--maps DIR``, each anomaly map as a PNG. Used when ``--embedder`` names
an image model (fit) or the model file is an image model (score).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from madcluster.cli.arg_types import float_in_range, int_in_range
from madcluster.cli.console import say


def add_image_arguments(parser: argparse.ArgumentParser) -> None:
    """The image detector's own flags; their defaults and allowed values are its parameter table's
    (``IMAGE_PARAMS``: shown in help, checked when the model is built)."""
    group = parser.add_argument_group("images (with --embedder rd4ad or pyramidflow)")
    for flag, kwargs, text in (
        (
            "--image-size",
            {"type": int_in_range(8, 4096)},
            "images are resized to this side, 8 to 4096 pixels",
        ),
        (
            "--layout",
            {"choices": ("channels", "pixels")},
            (
                "how MADCluster reads the feature map: channels "
                "(the paper) or pixels (one h per position, adds a pixel map)"
            ),
        ),
        (
            "--head-weight",
            {"type": float_in_range(0.0)},
            (
                "weight of MADCluster's standardised score and map "
                "beside the base model's (the paper's literal reading: "
                "--layout channels --head-weight 1)"
            ),
        ),
    ):
        action = group.add_argument(flag, default=None, help=text, **kwargs)
        action.estimator_param = "image." + action.dest


def is_image_embedder(name: str | None) -> bool:
    from madcluster.embedders import IMAGE_EMBEDDERS

    return name is not None and name.lower() in IMAGE_EMBEDDERS


IMAGE_KIND = "image"  # madcluster.images.detector.KIND, here without importing torch


def is_image_model(path: str) -> bool:
    """Whether ``path`` is an image model, from its config alone (no torch: a bad data file
    given with a time-series model is then refused in a fraction of a second)."""
    import json
    import zipfile

    if not Path(path).is_file():
        return False
    try:
        with zipfile.ZipFile(path) as archive:
            return json.loads(archive.read("config.json").decode("utf-8")).get("kind") == IMAGE_KIND
    except (zipfile.BadZipFile, KeyError, ValueError, OSError):
        return False  # not a model file: the loader says why


def image_detector_from_args(args: argparse.Namespace):
    """The ImageMADCluster the flags describe; time-series-only flags given are refused by name."""
    import inspect

    from madcluster.cli.options import detector_params_from_args
    from madcluster.exceptions import MADClusterError
    from madcluster.images.detector import ImageMADCluster

    params = detector_params_from_args(args)
    # --threads: set for the whole process by apply_runtime, as for series
    params.pop("n_jobs", None)
    accepted = inspect.signature(ImageMADCluster).parameters
    foreign = sorted(k for k in params if k not in accepted)
    if foreign:
        raise MADClusterError(
            f"{', '.join(foreign)} do(es) not apply to image models ({args.embedder})"
        )
    for name in ("image_size", "layout", "head_weight"):
        if getattr(args, name) is not None:
            params[name] = getattr(args, name)
    return ImageMADCluster(**params)


def fit_images_command(args: argparse.Namespace) -> int:
    from madcluster.atomic import check_output_path
    from madcluster.cli.runtime_options import apply_runtime
    from madcluster.images.inputs import check_images

    check_output_path(args.output, what="model file", not_same_as=[args.data])
    apply_runtime(args)
    detector = image_detector_from_args(args)
    images = check_images(args.data, image_size=detector.image_size)
    warn_random_teacher(detector, "trains")
    detector.fit(images)
    detector.save(args.output)
    say(
        f"trained {detector.embedder} ({detector.mode}, layout {detector.layout}) on {len(images)} "
        f"images of {images.shape[1]} channel(s) at {detector.image_size} px, "
        f"{len(detector.history_['epoch'])} epochs"
    )
    say(f"model written to {args.output}")
    return 0


def score_images_command(args: argparse.Namespace) -> int:
    import pandas as pd

    from madcluster.atomic import atomic_path, check_output_path
    from madcluster.cli.runtime_options import apply_runtime
    from madcluster.images.detector import ImageMADCluster
    from madcluster.images.inputs import check_images
    from madcluster.images.io import list_images

    apply_runtime(args)
    output = args.output or default_scores_path(args.data)
    check_output_path(output, what="scores file", not_same_as=[args.data, args.model])
    detector = ImageMADCluster.load(args.model, device=args.device or "cpu")
    warn_random_teacher(detector, "scores")
    names = (
        [Path(args.data).name]
        if Path(args.data).is_file()
        else [p.name for p in list_images(args.data)]
    )
    images = check_images(
        args.data, image_size=detector.image_size, n_channels=detector.n_channels_
    )
    scores, maps = detector.decision_and_map(images)
    threshold = detector.threshold_ if args.threshold is None else args.threshold
    frame = pd.DataFrame(
        {"image": names, "score": scores, "is_anomaly": (scores > threshold).astype(np.int64)}
    )
    with atomic_path(output) as tmp:
        frame.to_csv(tmp, index=False)
    say(
        f"scored {len(scores)} images: {int(frame.is_anomaly.sum())} above threshold "
        f"{threshold:.6g}"
    )
    say(f"scores written to {output}")
    if args.maps:
        write_map_pngs(maps, names, Path(args.maps))
        say(f"anomaly maps written to {args.maps}/")
    return 0


def image_folder_hint(folder: str) -> str | None:
    """The message for ``fit FOLDER`` without ``--embedder`` on an image folder (a plain folder of
    images or an MVTec class folder), which would otherwise read as a fleet with no series files."""
    from madcluster.images.io import IMAGE_SUFFIXES

    path = Path(folder)
    for candidate in (path, path / "train" / "good"):
        if candidate.is_dir() and any(
            p.suffix.lower() in IMAGE_SUFFIXES for p in candidate.iterdir()
        ):
            return (
                f"{folder!r} holds images, not series files: pass --embedder rd4ad or --embedder "
                "pyramidflow to train an image model (docs/images.md)"
            )
    return None


def default_scores_path(data: str) -> str:
    """Where ``score`` writes an image folder's CSV without ``-o``: the current folder, named after
    the folder's last three parts (``bottle/test/crack`` -> ``bottle-test-crack.scores.csv``), so
    nothing is written into the dataset tree."""
    path = Path(data).resolve()
    parts = [
        p
        for p in (path.with_suffix("") if path.is_file() else path).parts[-3:]
        if p not in ("/", "")
    ]
    return str(Path.cwd() / ("-".join(parts) + ".scores.csv"))


def warn_random_teacher(detector, doing: str) -> None:
    """RD4AD without ``weights`` trains its student on a randomly initialised teacher: not the
    paper's ImageNet-pretrained one, and far weaker. Say so at fit and at every score."""
    import sys

    params = detector.embedder_params or {}
    if str(detector.embedder).lower() == "rd4ad" and not params.get("weights"):
        print(
            f"warning: this rd4ad model {doing} with a randomly initialised teacher (no "
            "--embedder-param weights=PATH.pth of an ImageNet-pretrained torchvision ResNet): not "
            "the paper's model, and far weaker (docs/images.md)",
            file=sys.stderr,
        )


def write_map_pngs(maps: np.ndarray, names: list[str], folder: Path) -> None:
    """Each map as an 8-bit grayscale PNG, scaled by the min and max over all maps (comparable)."""
    from PIL import Image

    from madcluster.atomic import atomic_path

    low, high = float(maps.min()), float(maps.max())
    scaled = np.round(255 * (maps - low) / (high - low if high > low else 1.0)).astype(np.uint8)
    folder.mkdir(parents=True, exist_ok=True)
    for image, name in zip(scaled, names):
        with atomic_path(folder / f"{Path(name).stem}_map.png") as tmp:
            Image.fromarray(image).save(tmp, format="PNG")
