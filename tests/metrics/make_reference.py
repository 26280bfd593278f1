"""Write ``reference_values.json``: every metric computed by the *published* implementations.

The published code is installed without its (heavy) dependencies into a private folder, never into
the project's environment, and only the pure-python modules that the metrics need are imported:

* ``vus==0.0.6`` (PyPI, TheDatumOrg/VUS): ``vus.utils.metrics.metricor.RangeAUC`` and
  ``RangeAUC_volume_opt`` (Range-AUC and VUS), ``vus.affiliation`` (the authors' affiliation code,
  vendored from ahstat/affiliation-metrics-py);
* ``TSB-AD==1.5`` (PyPI, TheDatumOrg/TSB-AD): ``basic_metricor`` (AUC-ROC/PR, point F1, point-adjusted
  F1, and its copy of VUS and affiliation, cross-checked against the ``vus`` ones);
* scikit-learn for precision/recall/F1, ROC-AUC and average precision.

Run from the repository root (about three minutes; needs network access to PyPI the first time):

    .venv/bin/python tests/metrics/make_reference.py [--refs-dir DIR]

The tests read the JSON file and never need these packages.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.metadata
import io
import json
import math
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from metric_cases import Case, all_cases, paper_example

REFERENCE_PACKAGES = ("vus==0.0.6", "TSB-AD==1.5")
FIXTURE = HERE / "reference_values.json"


def install_references(target: Path) -> None:
    """``pip install --no-deps --target`` the reference packages (skipped if already there)."""
    if (target / "vus" / "utils" / "metrics.py").exists() and (target / "TSB_AD").exists():
        return
    target.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-deps",
            "--target",
            str(target),
            *REFERENCE_PACKAGES,
        ],
        check=True,
    )


def load_references(refs_dir: Path | None) -> dict[str, Any]:
    """Install (if needed) and import the reference functions; returns them by name."""
    target = (
        refs_dir if refs_dir is not None else Path(tempfile.gettempdir()) / "madcluster-metric-refs"
    )
    install_references(target)
    sys.path.insert(0, str(target))
    from TSB_AD.evaluation import basic_metrics as tsb
    from TSB_AD.evaluation.affiliation import generics as tsb_aff_generics
    from TSB_AD.evaluation.affiliation import metrics as tsb_aff_metrics
    from vus.affiliation.generics import convert_vector_to_events
    from vus.affiliation.metrics import pr_from_events
    from vus.utils.metrics import metricor

    return {
        "metricor": metricor,
        "convert_vector_to_events": convert_vector_to_events,
        "pr_from_events": pr_from_events,
        "tsb_basic_metricor": tsb.basic_metricor,
        "tsb_generate_curve": tsb.generate_curve,
        "tsb_convert": tsb_aff_generics.convert_vector_to_events,
        "tsb_pr_from_events": tsb_aff_metrics.pr_from_events,
        "dir": target,
    }


def _version(dist: str, refs_dir: Path) -> str:
    for path in refs_dir.glob("*.dist-info"):
        meta = importlib.metadata.Distribution.at(path).metadata
        if meta["Name"].lower().replace("_", "-") == dist.lower():
            return meta["Version"]
    return "unknown"


def _same(a: float, b: float, what: str) -> None:
    if not (math.isnan(a) and math.isnan(b)) and abs(a - b) > 1e-12:
        raise AssertionError(f"the two published copies disagree on {what}: {a} vs {b}")


def affiliation_ref(refs: dict[str, Any], pred: np.ndarray, lab: np.ndarray) -> tuple[float, float]:
    n = lab.size
    out = refs["pr_from_events"](
        refs["convert_vector_to_events"](pred), refs["convert_vector_to_events"](lab), (0, n)
    )
    tsb = refs["tsb_pr_from_events"](refs["tsb_convert"](pred), refs["tsb_convert"](lab), (0, n))
    p, r = float(out["Affiliation_Precision"]), float(out["Affiliation_Recall"])
    _same(p, float(tsb["Affiliation_Precision"]), "affiliation precision")
    _same(r, float(tsb["Affiliation_Recall"]), "affiliation recall")
    return p, r


def range_vus_ref(
    refs: dict[str, Any], score: np.ndarray, lab: np.ndarray, window: int
) -> list[float]:
    with contextlib.redirect_stdout(io.StringIO()):
        r_roc, r_pr = refs["metricor"]().RangeAUC(
            labels=lab, score=score, window=window, plot_ROC=True
        )[:2]
        out = refs["metricor"]().RangeAUC_volume_opt(
            labels_original=lab, score=score, windowSize=window, thre=250
        )
        tsb = refs["tsb_generate_curve"](lab, score, window, "opt", 250)
    v_roc, v_pr = float(out[4]), float(out[5])
    _same(v_roc, float(tsb[6]), "VUS-ROC")
    _same(v_pr, float(tsb[7]), "VUS-PR")
    return [float(r_roc), float(r_pr), v_roc, v_pr]


def pa_f1_ref(
    refs: dict[str, Any], score: np.ndarray, lab: np.ndarray, pred: np.ndarray
) -> tuple[float, float]:
    """TSB-AD ``metric_PointF1PA`` as is, and on the input with one normal point prepended (which
    removes its ``range(i, 0, -1)`` blind spot at index 0; the extra point is a true negative)."""
    grader = refs["tsb_basic_metricor"]()
    raw = float(grader.metric_PointF1PA(lab, score, preds=pred.copy()))
    pad_lab = np.concatenate([[0], lab])
    adjusted = grader._adjust_predicts(
        np.concatenate([[0.0], score]), pad_lab, pred=np.concatenate([[0], pred])
    )[1:]
    from sklearn.metrics import f1_score

    return raw, float(f1_score(lab, adjusted))


def reference_values(refs: dict[str, Any], case: Case) -> dict[str, float | None]:
    from sklearn.metrics import (
        average_precision_score,
        precision_recall_fscore_support,
        roc_auc_score,
    )

    lab, score, pred = case.labels, case.scores, case.predictions
    grader = refs["tsb_basic_metricor"]()
    p, r, f, _ = precision_recall_fscore_support(lab, pred, zero_division=0)
    _same(float(f[1]), float(grader.metric_PointF1(lab, score, preds=pred)), "F1")
    roc = float(roc_auc_score(lab, score))
    _same(roc, float(grader.metric_ROC(lab, score)), "AUC-ROC")
    ap = float(average_precision_score(lab, score))
    _same(ap, float(grader.metric_PR(lab, score)), "AUC-PR")
    aff_p, aff_r = affiliation_ref(refs, pred, lab)
    out: dict[str, float] = {
        "f1": float(f[1]),
        "precision": float(p[1]),
        "recall": float(r[1]),
        "aff_precision": aff_p,
        "aff_recall": aff_r,
        "auc_roc": roc,
        "auc_pr": ap,
    }
    keys = ("range_auc_roc", "range_auc_pr", "vus_roc", "vus_pr")
    out.update(zip(keys, range_vus_ref(refs, score, lab, case.window)))
    pred_f = pred.astype(np.float64)
    out.update(
        {f"{k}@predictions": v for k, v in zip(keys, range_vus_ref(refs, pred_f, lab, case.window))}
    )
    for w in case.extra_windows:
        out.update({f"{k}@window={w}": v for k, v in zip(keys, range_vus_ref(refs, score, lab, w))})
    out["pa_f1_tsb_raw"], out["point_adjusted_f1"] = pa_f1_ref(refs, score, lab, pred)
    return {k: (None if math.isnan(v) else v) for k, v in out.items()}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--refs-dir", type=Path, default=None, help="where to pip-install the references"
    )
    parser.add_argument("--output", type=Path, default=FIXTURE)
    args = parser.parse_args()

    refs = load_references(args.refs_dir)
    cases: dict[str, Any] = {}
    for name, case in all_cases().items():
        cases[name] = {"sha256": case.digest(), "values": reference_values(refs, case)}
        print(f"{name}: done", flush=True)

    pred, lab = paper_example()
    n = lab.size
    ex = refs["pr_from_events"](
        refs["convert_vector_to_events"](pred), refs["convert_vector_to_events"](lab), (0, n)
    )
    paper = {
        "individual_precision": [float(x) for x in ex["individual_precision_probabilities"]],
        "individual_recall": [float(x) for x in ex["individual_recall_probabilities"]],
        "aff_precision": float(ex["Affiliation_Precision"]),
        "aff_recall": float(ex["Affiliation_Recall"]),
    }

    import sklearn

    fixture = {
        "generated_by": "tests/metrics/make_reference.py",
        "references": {
            "vus": _version("vus", refs["dir"]),
            "TSB-AD": _version("TSB-AD", refs["dir"]),
            "scikit-learn": sklearn.__version__,
            "numpy": np.__version__,
        },
        "cases": cases,
        "huet_paper_example": paper,
    }
    args.output.write_text(json.dumps(fixture, indent=1, sort_keys=True) + "\n")
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
