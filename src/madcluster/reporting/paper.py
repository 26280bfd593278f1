"""The paper's Table 1, so the report can put each measured row beside the number it reproduces.

Values as printed in the paper (F1, Aff-P, Aff-R, R_A_R, R_A_P, V_ROC, V_PR), per dataset and base
model: (the model alone, the model + MADCluster). The paper's protocol for them is the released
code's (best-F1 on the test labels among others; see the README's "Evaluation"), which is why they are shown apart
from the measured numbers and never mixed into them.
"""

from __future__ import annotations

PAPER_METRICS = ("f1", "aff_precision", "aff_recall", "range_auc_roc", "range_auc_pr", "vus_roc", "vus_pr")

_Row = tuple[float, float, float, float, float, float, float]

PAPER_TABLE1: dict[str, dict[str, tuple[_Row, _Row]]] = {
    "MSL": {
        "deepsvdd": ((.37, .63, .99, .63, .57, .63, .28), (.52, .74, .99, .71, .65, .72, .42)),
        "usad": ((.53, .71, .97, .69, .66, .71, .43), (.53, .72, .97, .71, .67, .72, .43)),
        "beatgan": ((.49, .71, .99, .68, .63, .70, .39), (.50, .71, .99, .69, .63, .71, .40)),
        "omnianomaly": ((.42, .64, 1.0, .63, .60, .64, .31), (.45, .64, 1.0, .66, .60, .67, .34)),
        "thoc": ((.50, .75, .96, .70, .64, .71, .41), (.55, .81, .99, .70, .68, .72, .46)),
        "anomaly_transformer": ((.50, .70, .99, .69, .64, .70, .40), (.51, .71, .99, .69, .64, .71, .40)),
        "dcdetector": ((.28, .51, .86, .54, .49, .52, .19), (.41, .64, .99, .64, .63, .64, .32)),
    },
    "SMAP": {
        "deepsvdd": ((.40, .70, .99, .67, .57, .67, .33), (.49, .71, .96, .69, .61, .71, .38)),
        "usad": ((.44, .68, .98, .69, .61, .69, .35), (.45, .67, 1.0, .69, .61, .71, .36)),
        "beatgan": ((.47, .70, 1.0, .69, .62, .71, .38), (.48, .70, 1.0, .70, .62, .72, .38)),
        "omnianomaly": ((.37, .64, 1.0, .64, .56, .65, .30), (.43, .64, 1.0, .69, .58, .71, .34)),
        "thoc": ((.42, .66, .99, .67, .59, .68, .35), (.44, .66, 1.0, .68, .57, .70, .33)),
        "anomaly_transformer": ((.44, .66, 1.0, .69, .60, .70, .35), (.45, .67, 1.0, .69, .60, .71, .36)),
        "dcdetector": ((.21, .48, .81, .51, .39, .50, .13), (.43, .67, .98, .67, .60, .69, .33)),
    },
    "SMD": {
        "deepsvdd": ((.19, .56, .61, .53, .46, .53, .12), (.48, .83, .90, .63, .56, .64, .29)),
        "usad": ((.46, .80, .63, .63, .55, .62, .26), (.45, .82, .61, .63, .57, .63, .26)),
        "beatgan": ((.50, .84, .62, .64, .56, .65, .31), (.52, .85, .64, .65, .55, .66, .31)),
        "omnianomaly": ((.48, .78, .63, .63, .57, .64, .28), (.49, .82, .68, .64, .56, .65, .29)),
        "thoc": ((.32, .70, .72, .61, .46, .61, .18), (.35, .72, .71, .61, .52, .61, .20)),
        "anomaly_transformer": ((.51, .84, .65, .65, .59, .66, .31), (.52, .84, .65, .65, .59, .66, .31)),
        "dcdetector": ((.17, .51, .98, .53, .31, .52, .12), (.29, .64, .72, .58, .42, .58, .16)),
    },
    "PSM": {
        "deepsvdd": ((.66, .67, .56, .52, .63, .51, .36), (.67, .68, 1.0, .58, .69, .58, .46)),
        "usad": ((.52, .56, .99, .57, .69, .56, .38), (.52, .56, .99, .58, .69, .56, .38)),
        "beatgan": ((.66, .68, .70, .63, .67, .63, .49), (.68, .74, .80, .67, .69, .66, .49)),
        "omnianomaly": ((.53, .55, .98, .54, .67, .53, .38), (.53, .55, .98, .54, .67, .53, .38)),
        "thoc": ((.50, .55, 1.0, .52, .69, .51, .36), (.50, .55, 1.0, .52, .69, .51, .36)),
        "anomaly_transformer": ((.53, .55, .98, .54, .67, .53, .38), (.54, .56, .94, .55, .67, .54, .39)),
        "dcdetector": ((.50, .55, 1.0, .52, .69, .51, .36), (.53, .57, .86, .55, .63, .54, .40)),
    },
}


def paper_value(dataset: str, model: str, with_madcluster: bool, metric: str) -> float | None:
    """The paper's Table 1 entry, or None where the paper has no such row or metric."""
    pair = PAPER_TABLE1.get(dataset, {}).get(model)
    if pair is None or metric not in PAPER_METRICS:
        return None
    return pair[int(with_madcluster)][PAPER_METRICS.index(metric)]
