"""``madcluster benchmark``: rows of settings (:class:`BenchmarkConfig`) planned into tasks, run by
an executor (:mod:`madcluster.parallel`), stored, aggregated over seeds and entities, and written
as result files. What the scores mean (thresholds, metrics) is :mod:`madcluster.evaluation`.
"""

from madcluster.benchmark.aggregate import BenchmarkResult
from madcluster.benchmark.config import BenchmarkConfig
from madcluster.benchmark.runner import GridResult, run_benchmark, run_grid

__all__ = ["BenchmarkConfig", "BenchmarkResult", "GridResult", "run_benchmark", "run_grid"]
