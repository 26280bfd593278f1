"""What the benchmark scripts share: the repository's paths, TSB-AD's 46 series and their
options, a server started, its port and memory, ``--set`` overrides read, a result record
(stamped with the commit and the configuration it measured) or an ``.npz`` of arrays written, a table per TSB-AD source printed. One library, not a script: scripts
import it and never import each other.

A script at the top of ``benchmarks/`` imports it directly (Python puts the script's folder first
on ``sys.path``); a study under ``benchmarks/studies/`` puts ``benchmarks/`` on the path first::

    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # benchmarks/studies/<topic>/x.py
    from benchlib import load_series
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"
BENCHMARKS = ROOT / "benchmarks"
RESULTS = BENCHMARKS / "results"
#: TSB-AD's published per-series VUS-PR: the 46 series' names, file order and first N points.
PUBLISHED = RESULTS / "tsbad" / "published_vus_pr.csv"


def add_series_arguments(parser: argparse.ArgumentParser, *, series_required: bool = False) -> None:
    """``--data-dir``, ``--tsbad-dir`` and ``--series``: the options :func:`load_series` reads."""
    parser.add_argument("--data-dir", help="folder holding MSL/, SMAP/, SMD/ (else $MADCLUSTER_DATA_DIR)")
    parser.add_argument("--tsbad-dir", help="a folder of TSB-AD CSV files instead of rebuilding")
    parser.add_argument("--series", nargs="+" if series_required else "*", required=series_required,
                        help="only series whose file stem starts with one of these (e.g. 002_MSL 144_SMAP) "
                        "or whose entity is one of these (e.g. E-9)")


def load_series(args: argparse.Namespace) -> list[tuple[str, str, Any]]:
    """[(source dataset, entity or file, Dataset)] in TSB-AD's file order.

    ``args`` carries ``tsbad_dir`` (a folder of TSB-AD CSV files, else the series are rebuilt from
    ``data_dir``: the folder holding MSL/, SMAP/, SMD/) and ``series`` (name prefixes or entities
    to keep; empty keeps all)."""
    from madcluster.data.tsbad import parse_tsbad_name, read_tsbad_folder
    from madcluster.data.tsbad_rebuild import read_published_table, rebuild_series
    from madcluster.exceptions import DatasetNotFoundError

    if args.tsbad_dir:
        found = [(parse_tsbad_name(s.name + ".csv").dataset, s.name, s) for s in read_tsbad_folder(args.tsbad_dir)]
    else:
        try:
            rebuilt, _ = rebuild_series(read_published_table(PUBLISHED), args.data_dir)
        except DatasetNotFoundError as exc:
            sys.exit(f"benchmark data not found: {exc}\nPass --data-dir (the folder holding MSL/, SMAP/, "
                     "SMD/) or set MADCLUSTER_DATA_DIR, or --tsbad-dir with TSB-AD CSV files.")
        found = [(r.published.name.dataset, r.entity, r.data) for r in rebuilt]
    if args.series:
        found = [f for f in found if any(f[2].name.startswith(s) or f[1] == s for s in args.series)]
    if not found:
        sys.exit("no series selected")
    return found


def free_port() -> int:
    """A free TCP port on 127.0.0.1 (for a server started by a benchmark)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_server(path: str | Path, port: int, *extra: str) -> subprocess.Popen:
    """``madcluster serve PATH`` (a model file or a fleet folder) on 127.0.0.1:``port``, one
    thread, this checkout's ``src``; returned once ``/health`` answers (RuntimeError after 150 s)."""
    import time

    import httpx

    env = {**os.environ, "PYTHONPATH": str(SRC), "OMP_NUM_THREADS": "1"}
    command = [sys.executable, "-m", "madcluster", "serve", str(path), "--host", "127.0.0.1",
               "--port", str(port), "--log-level", "warning", *extra]
    proc = subprocess.Popen(command, env=env)
    for _ in range(300):
        try:
            if httpx.get(f"http://127.0.0.1:{port}/health", timeout=2).status_code == 200:
                return proc
        except httpx.TransportError:
            time.sleep(0.5)
    proc.kill()
    raise RuntimeError("server did not start")


def peak_memory_mb(pid: int) -> float | None:
    """The process's peak resident memory (Linux VmHWM), in MB; None where /proc cannot say."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def parse_overrides(items: list[str]) -> dict[str, Any]:
    """``KEY=VALUE`` items (``--set``) as a dict, each value read as JSON, else kept as text."""

    def value(text: str) -> Any:
        try:
            return json.loads(text)
        except json.JSONDecodeError:
            return text

    return {key: value(text) for key, text in (item.split("=", 1) for item in items)}


def configuration(preset: str = "default", params: dict[str, Any] | None = None) -> dict[str, Any]:
    """What a record measured, as far as the parameters say: the estimator's parameters (the
    preset's, ``params`` over them; threads, seed, device and verbosity left out: they do not
    change what is measured), the embedder's own defaults (its size, training batch, roughness
    window), the model file's record (its format version and the part kinds it knows) and the
    score's rules (:func:`score_rules`)."""
    import inspect

    from madcluster import MADCluster
    from madcluster.embedders import EMBEDDERS
    from madcluster.estimator.persistence import FORMAT_VERSION
    from madcluster.score.parts import PART_KINDS

    detector = MADCluster.from_preset(preset, **(params or {}))
    estimator = {k: v for k, v in detector.get_params().items()
                 if k not in ("n_jobs", "random_state", "device", "verbose")}
    embedder = estimator["embedder"]
    kind = EMBEDDERS.get(embedder) if isinstance(embedder, str) else type(embedder)
    signature = inspect.signature(kind.__init__) if kind is not None else None
    return {
        "estimator": estimator,
        "embedder": {
            "defaults": {name: p.default for name, p in (signature.parameters.items() if signature else [])
                         if p.default is not inspect.Parameter.empty},
            "training_batch": getattr(kind, "training_batch", None),
            "default_roughness_window": getattr(kind, "default_roughness_window", None),
        },
        "model_file": {"format_version": FORMAT_VERSION, "part_kinds": sorted(PART_KINDS)},
        "score_rules": score_rules(),
    }


def score_rules() -> dict[str, Any]:
    """What the default's score follows beyond its parameters: the weight tables by column kind
    (final and at once), the part and weight rules ``None`` means and how far evidence is
    trusted (module constants of the score, not parameters: a record made under other tables
    measured another default)."""
    from madcluster.score import combination, evidence, input_terms

    return {
        "discrete_part_weights": input_terms.DISCRETE_PART_WEIGHTS,
        "continuous_part_weights": input_terms.CONTINUOUS_PART_WEIGHTS,
        "discrete_at_once_weights": input_terms.DISCRETE_AT_ONCE_WEIGHTS,
        "continuous_at_once_weights": input_terms.CONTINUOUS_AT_ONCE_WEIGHTS,
        "default_part_rule": combination.DEFAULT_RULE,
        "default_weight_rule": input_terms.DEFAULT_WEIGHT_RULE,
        "evidence_trust": [evidence.TRUST_FROM, evidence.TRUST_FULL],
    }


def fingerprint(config: dict[str, Any]) -> str:
    """A short hash of a :func:`configuration`: equal configurations, equal fingerprints."""
    import hashlib

    text = json.dumps(config, sort_keys=True, default=repr)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def stamp(configs: dict[str, dict[str, Any]] | None = None) -> dict[str, Any]:
    """The code a record measured: the commit, whether the tree was dirty (and which files), the
    fingerprint of the default of that code, and per configuration measured (``{name: {"preset":
    ..., **params}}``, default ``{"default": {"preset": "default"}}``) what was asked for, its
    fingerprint and the :func:`configuration` it resolved to. ``docs_numbers.py --check`` compares
    these with today's code to name the records made by another configuration."""
    from madcluster.benchmark.provenance import git_state

    configs = configs or {"default": {"preset": "default"}}
    resolved = {}
    for name, config in configs.items():
        params = {k: v for k, v in config.items() if k != "preset"}
        try:
            resolved[name] = configuration(config.get("preset", "default"), params)
        except (TypeError, ValueError, KeyError) as exc:  # a baseline or a peer, not the estimator
            resolved[name] = {"not resolved": f"{type(exc).__name__}: {exc}", "requested": config}
    return {
        **git_state(ROOT),
        "default": fingerprint(configuration()),
        "requested": configs,
        "measured": {name: fingerprint(config) for name, config in resolved.items()},
        "configurations": resolved,
    }


def write_record(path: str | Path, record: dict[str, Any], *,
                 configs: dict[str, dict[str, Any]] | None = None, indent: int = 2) -> None:
    """Print a result record and write it as JSON (its folder made, the file written atomically),
    stamped (:func:`stamp`) with the code and the configurations it measured."""
    from madcluster.atomic import atomic_write_text

    record = {**record, "stamp": stamp(configs)}
    text = json.dumps(record, indent=indent, default=repr)
    print(text)
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, text + "\n")


def write_npz(path: str | Path, arrays: dict[str, Any]) -> None:
    """``arrays`` as a compressed ``.npz`` at ``path``, atomically (``.tmp.npz`` beside it first)."""
    import numpy as np

    path = Path(path)
    tmp = path.with_suffix(".tmp.npz")
    np.savez_compressed(tmp, **arrays)
    os.replace(tmp, path)


#: Rows an incident may start after an anomaly's end and still catch it; an incident is false when
#: it overlaps no anomaly widened by as many rows on either side (benchmarks/incidents.py).
INCIDENT_SLACK = 50


def labelled_anomalies(labels: Any) -> list[tuple[int, int]]:
    """``[start, end]`` (inclusive) of each labelled anomaly."""
    import numpy as np

    edges = np.flatnonzero(np.diff(np.concatenate([[0], labels.astype(np.int8), [0]])))
    return [(int(a), int(b) - 1) for a, b in zip(edges[::2], edges[1::2])]


def incident_events(spans: list[tuple[int, int, int]], labels: Any) -> dict[str, Any]:
    """Event-level measures of incidents ``(start, end, raised)`` against ``labels`` (the
    issue's: caught, false, delay; ``false_spans``: the false incidents themselves)."""
    import numpy as np

    truth = labelled_anomalies(labels)
    caught, delays = 0, []
    for a, b in truth:
        hits = [r for s, e, r in spans if s <= b + INCIDENT_SLACK and e >= a]
        if hits:
            caught += 1
            delays.append(max(0, min(hits) - a))
    widened = np.zeros(len(labels) + 1, dtype=bool)
    for a, b in truth:
        widened[max(0, a - INCIDENT_SLACK) : b + INCIDENT_SLACK + 1] = True
    false_spans = [(s, e, r) for s, e, r in spans if not widened[s : e + 1].any()]
    normal = int((labels == 0).sum())
    inside = np.zeros(len(labels) + 1, dtype=bool)
    for s, e, _ in spans:
        inside[s : e + 1] = True
    return {
        "anomalies": len(truth),
        "caught": caught,
        "incidents": len(spans),
        "false": len(false_spans),
        "false_spans": false_spans,
        "normal_rows": normal,
        "quiet_rows": int((~widened[: len(labels)]).sum()),
        "open_quiet_rows": int((inside & ~widened)[: len(labels)].sum()),
        "delays": delays,
    }


def print_source_table(results: dict[str, dict[str, list[float]]], *, counts: bool = False) -> None:
    """A Markdown table of ``{row: {source: [values]}}``: each row's mean on MSL, SMAP, SMD and on
    all of them (with ``counts``, how many values that is)."""
    import numpy as np

    print("| rule | MSL | SMAP | SMD | all |\n|---|---|---|---|---|")
    for rule, per in results.items():
        everything = [v for vs in per.values() for v in vs]
        cells = [f"{np.mean(per[s]):.3f}" if s in per else "-" for s in ("MSL", "SMAP", "SMD")]
        count = f" ({len(everything)})" if counts else ""
        print(f"| {rule} | {' | '.join(cells)} | {np.mean(everything):.3f}{count} |")
