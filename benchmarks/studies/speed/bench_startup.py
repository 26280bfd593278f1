"""Start-up time of the command line and of ``import madcluster`` (issue 21 item 8).

Each case runs a fresh interpreter ``--repeat`` times and reports the median CPU and wall time, for every
source tree given (e.g. the tree before the change, then this one), so both are measured on the
same machine in the same run::

    python benchmarks/studies/speed/bench_startup.py --src /path/to/old/src --src src
"""

from __future__ import annotations

import argparse
import os
import resource
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


def median_seconds(src: str, args: list[str], repeat: int) -> tuple[float, float]:
    """Median wall and CPU (user + system) seconds of the child process; CPU time hardly depends
    on what else the machine runs, wall time does."""
    env = {**os.environ, "PYTHONPATH": os.path.abspath(src)}
    walls, cpus = [], []
    for _ in range(repeat):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        subprocess.run([sys.executable, *args], env=env, check=False, capture_output=True)
        walls.append(time.perf_counter() - start)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return statistics.median(walls), statistics.median(cpus)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--src", action="append", required=True, help="a source tree to time")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    print("| case | " + " | ".join(f"{src}: CPU / wall" for src in args.src) + " |")
    print("|---|" + "---|" * len(args.src))
    for name, argv in CASES.items():
        cells = []
        for src in args.src:
            wall, cpu = median_seconds(src, argv, args.repeat)
            cells.append(f"{cpu:.2f} s / {wall:.2f} s")
        print(f"| {name} | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
