"""Start-up time of the command line and of ``import madcluster`` (issue 21 item 8).

Each case runs a fresh interpreter ``--repeat`` times and reports the median wall time, for every
source tree given (e.g. the tree before the change, then this one), so both are measured on the
same machine in the same run::

    python benchmarks/bench_startup.py --src /path/to/old/src --src src
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time

CASES = {
    "madcluster --help": ["-m", "madcluster", "--help"],
    "madcluster --version": ["-m", "madcluster", "--version"],
    "madcluster score --help": ["-m", "madcluster", "score", "--help"],
    "madcluster fit data.csv (argument error)": ["-m", "madcluster", "fit", "data.csv"],
    "madcluster fit --help (reads the estimator's defaults)": ["-m", "madcluster", "fit", "--help"],
    "import madcluster": ["-c", "import madcluster"],
}


def median_seconds(src: str, args: list[str], repeat: int) -> float:
    env = {**os.environ, "PYTHONPATH": os.path.abspath(src)}
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run([sys.executable, *args], env=env, check=False, capture_output=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--src", action="append", required=True, help="a source tree to time")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    print("| case | " + " | ".join(args.src) + " |")
    print("|---|" + "---|" * len(args.src))
    for name, argv in CASES.items():
        cells = [f"{median_seconds(src, argv, args.repeat):.2f} s" for src in args.src]
        print(f"| {name} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
