"""The service and metric bugs a mutation audit planted and the suite once missed, planted again:
each must fail its test in ``tests/serve/test_planted_bugs.py``.

Copies ``src/``, ``tests/`` and ``pyproject.toml`` of the commit (``git archive HEAD``) to a
scratch folder, and for each bug replaces one line of the copy, runs the test that should catch
it (pytest, one thread) and puts the line back. A bug is caught when its test fails on an
assertion (pytest's exit status 1). Writes ``benchmarks/results/planted_service_bugs.json``::

    OMP_NUM_THREADS=1 python benchmarks/studies/streaming/planted_bugs.py
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # benchmarks/
from benchlib import RESULTS, ROOT, write_record

TESTS = "tests/serve/test_planted_bugs.py::"
#: (what, file, the line as it is, the line with the bug, the test that must fail)
BUGS = [
    ("finals not renumbered after a swap", "src/madcluster/serve/streams.py",
     "final_steps=result.final_steps + self.offset", "final_steps=result.final_steps",
     "test_final_steps_after_a_swap_are_numbered_as_the_stream"),
    ("the step offset not saved in the state file", "src/madcluster/serve/streams.py",
     'meta["served"] = {"offset": stream.offset, "model_version": stream.version}',
     'meta["served"] = {"model_version": stream.version}',
     "test_a_restart_keeps_the_step_offset_of_a_handed_over_stream"),
    ("a token accepted when it is a prefix of the real one", "src/madcluster/serve/middleware.py",
     "hmac.compare_digest(given, self.expected)", "self.expected.startswith(given)",
     "test_only_the_exact_token_opens_any_route"),
    ("/metrics readable without the token", "src/madcluster/serve/middleware.py",
     'OPEN_PATHS = ("/health",)', 'OPEN_PATHS = ("/health", "/metrics")',
     "test_metrics_need_the_token_and_health_does_not"),
    ("the stream limit not counting parked streams", "src/madcluster/serve/registry.py",
     "if len(self._streams) + len(self._parked) >= self.max_streams:",
     "if len(self._streams) >= self.max_streams:",
     "test_the_stream_limit_counts_streams_parked_in_the_state_folder"),
    ("a refit child that ignores from_scratch", "src/madcluster/serve/swap.py",
     'if mode == "scratch":', "if False:",
     "test_a_refit_from_scratch_is_a_fresh_fit_not_a_warm_start"),
    ("a stream's at-once answers divided by the series scales",
     "src/madcluster/score/combination_stream.py",
     "terms = [c.contribution(p, causal[p.name], at_once=True) for p in c.parts]",
     ("terms = [c.contribution(p, causal[p.name], at_once=True, "
      "scale=(self.scales or {}).get(p.name, 1.0)) for p in c.parts]"),
     "test_a_streams_at_once_answers_keep_the_training_scales_after_the_series_scales"),
    ("a point-adjusted F1 that misses a segment hit only at its last row",
     "src/madcluster/metrics/pointwise.py",
     "hit = csum[stops] - csum[starts] > 0", "hit = csum[stops - 1] - csum[starts] > 0",
     "test_point_adjustment_credits_a_segment_hit_at_any_of_its_rows"),
]  # fmt: skip


def main() -> None:
    archive = subprocess.run(
        ["git", "archive", "HEAD", "src", "tests", "pyproject.toml"],
        cwd=ROOT, capture_output=True, check=True,
    ).stdout  # fmt: skip
    results = []
    with tempfile.TemporaryDirectory(prefix="planted-") as tmp:
        with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
            tar.extractall(tmp, filter="data")
        env = {**os.environ, "PYTHONPATH": f"{tmp}/src", "OMP_NUM_THREADS": "1"}
        for what, path, line, bug, test in BUGS:
            source = Path(tmp, path)
            original = source.read_text()
            if original.count(line) != 1:
                results.append({"bug": what, "caught": None, "why": f"{path} has no such line"})
                continue
            source.write_text(original.replace(line, bug))
            try:
                command = [sys.executable, "-m", "pytest", TESTS + test, "-q", "-x"]
                done = subprocess.run(
                    [*command, "-p", "no:cacheprovider", "--tb=line"],
                    cwd=tmp, env=env, capture_output=True, text=True, check=False,
                )  # fmt: skip
            finally:
                source.write_text(original)
            failures = [row for row in done.stdout.splitlines() if row.startswith("E ")]
            results.append({
                "bug": what, "file": path, "test": test, "pytest_status": done.returncode,
                "caught": done.returncode == 1, "first_failure": failures[0] if failures else None,
            })  # fmt: skip
            print(f"{'caught' if done.returncode == 1 else 'MISSED'}: {what}", flush=True)
    record = {
        "command": "OMP_NUM_THREADS=1 python benchmarks/studies/streaming/planted_bugs.py",
        "caught": sum(bool(r["caught"]) for r in results),
        "planted": len(results),
        "bugs": results,
    }
    write_record(RESULTS / "planted_service_bugs.json", record)


if __name__ == "__main__":
    main()
