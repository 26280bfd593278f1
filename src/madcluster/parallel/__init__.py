"""Running many independent jobs: here one after another, or on Ray (one CPU and one torch thread
per job), with guards that turn a job's failure into an outcome. The benchmark and fleets use it.
"""

from madcluster.parallel.executors import EXECUTORS, make_executor
from madcluster.parallel.jobs import Job, Outcome

__all__ = ["EXECUTORS", "Job", "Outcome", "make_executor"]
