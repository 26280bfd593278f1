"""The paper's two image tables: a thin wrapper over ``madcluster benchmark --images`` (one
implementation: :func:`madcluster.images.benchmark.run_image_benchmark`).

Defaults here: the generated set, results in benchmarks/results/image. Every other option is the
CLI's (``madcluster benchmark --help``, its "images" group), e.g. the committed table:

    python benchmarks/tables/image_table.py --configs alone paper pixels channels-detached pixels-detached \
        pixels-w0.5 pixels-detached-w0.5 --n-train 30 --seeds 0 1 2

and MVTec AD with the paper's teacher (see the end of ``madcluster benchmark --help``):

    python benchmarks/tables/image_table.py --images /path/to/mvtec_ad --image-size 256 \
        --backbone wide_resnet50_2 --teacher-weights wrn50_2.pth --out results/mvtec
"""

from __future__ import annotations

import sys

from madcluster.cli import main as madcluster_main


def main(argv: list[str] | None = None) -> int:
    given = list(sys.argv[1:] if argv is None else argv)
    defaults: list[str] = []
    for flag, value in (("--images", "generated"), ("--out", "benchmarks/results/image")):
        if flag not in given:
            defaults += [flag, value]
    return madcluster_main(["benchmark", *defaults, *given])


if __name__ == "__main__":
    sys.exit(main())
