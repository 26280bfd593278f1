"""Options of the MADCluster objective.

Defaults are the estimator's (``MADCluster``'s signature; where they differ from the paper,
docs/method.md says why); every behaviour of the authors' released
code is a named option so either can be reproduced and compared.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields

from madcluster.exceptions import ParameterError

MODES = ("full", "distance-only", "cluster-only", "base-only")
CENTER_INITS = ("mean", "random")
NU_PARAMETRISATIONS = ("sigmoid", "raw")
DISTANCE_LOSSES = ("soft-boundary", "one-class")
CLUSTER_TARGETS = ("threshold", "dec")
LOSS_COMBINATIONS = ("sum", "log-mean")
SCORE_TYPES = ("point", "window")
SCORE_SCALINGS = ("raw", "standardized")


@dataclass(frozen=True)
class MethodConfig:
    """Choices of the objective and score.

    mode: ``full`` (distance + cluster, learnable center), ``distance-only`` (DeepSVDD-style soft
        boundary around a fixed center; the paper's appendix ablation row "DeepSVDD"), or
        ``cluster-only`` (Sequence-wise Clustering alone; the ablation row "Clustering").
    center_init: ``mean`` of h over an initial pass (paper / DeepSVDD) or *He-normal* ``random``
        (released code).
    nu_param: ``sigmoid`` keeps nu = sigmoid(theta) inside (0, 1) by construction; ``raw`` is the
        released code's bare parameter (init 0.5), clamped to (eps, 1 - eps) where it is used.
    tau: label smoothing of the pseudo-labels, 0 <= tau <= 0.5.
    rho: soft-boundary weight, and R is the (1 - rho) quantile of training distances.
    distance_loss: ``soft-boundary`` (paper Eq. 2) or ``one-class`` = mean distance (released
        script).
    cluster_target: ``threshold`` = 1[q >= nu] (paper Eq. 4) or ``dec`` (released code: DEC's target
        distribution, identically 1 when k = 1).
    cluster_kl: add the released code's KL term p log(p / q) with the unsmoothed DEC target p = 1,
        i.e. -log q, to the cluster loss.
    loss_combination: ``sum`` (paper Eq. 6) or ``log-mean`` = base loss + log(mean(distance +
        cluster)) (released code).
    score_type: ``point`` (paper Eq. 7, per time step) or ``window`` = the released code's score:
        the window mean of the cluster term, without d - R^2, given to every step of the window.
    score_scaling: ``raw`` sums the cluster term and d - R^2 as Eq. 7 writes them (the paper;
        ``MADCluster.from_preset("paper")``); ``standardized`` (the default) z-scores each term on
        the training scores before summing, so the term with the larger spread (usually the
        distance) does not drown the other.
    center_warmup: epochs during which c stays fixed at its initial value before it becomes
        learnable (0 = learnable from the start, the paper).
    n_clusters: k. 1 is the paper's method; k > 1 is the appendix's multi-cluster variant
        (Student-t assignment, DEC target, KL loss; nu, R and the options of the single-cluster
        objective do not apply).
    eps: clamp for q and for the raw nu.
    """

    mode: str = "full"
    center_init: str = "mean"
    nu_param: str = "sigmoid"
    tau: float = 0.01
    rho: float = 0.01
    distance_loss: str = "soft-boundary"
    cluster_target: str = "threshold"
    cluster_kl: bool = False
    loss_combination: str = "sum"
    score_type: str = "point"
    score_scaling: str = "standardized"
    center_warmup: int = 0
    n_clusters: int = 1
    eps: float = 1e-6

    def __post_init__(self) -> None:
        choices = {
            "mode": MODES,
            "center_init": CENTER_INITS,
            "nu_param": NU_PARAMETRISATIONS,
            "distance_loss": DISTANCE_LOSSES,
            "cluster_target": CLUSTER_TARGETS,
            "loss_combination": LOSS_COMBINATIONS,
            "score_type": SCORE_TYPES,
            "score_scaling": SCORE_SCALINGS,
        }
        for name, allowed in choices.items():
            value = getattr(self, name)
            if value not in allowed:
                raise ParameterError(
                    f"unknown {name} {value!r}; choose one of {', '.join(allowed)}"
                )
        if not 0.0 <= self.tau <= 0.5:
            raise ParameterError(f"tau must be in [0, 0.5], got {self.tau}")
        if not 0.0 < self.rho <= 1.0:
            raise ParameterError(f"rho must be in (0, 1], got {self.rho}")
        if not isinstance(self.center_warmup, int) or self.center_warmup < 0:
            raise ParameterError(
                f"center_warmup must be a non-negative integer, got {self.center_warmup!r}"
            )
        if not isinstance(self.n_clusters, int) or self.n_clusters < 1:
            raise ParameterError(f"n_clusters must be a positive integer, got {self.n_clusters!r}")
        if self.n_clusters > 1 and self.mode == "base-only":
            raise ParameterError(
                "n_clusters > 1 needs a MADCluster head; mode='base-only' has none"
            )
        if not 0.0 < self.eps < 0.1:
            raise ParameterError(f"eps must be in (0, 0.1), got {self.eps}")

    @property
    def uses_distance(self) -> bool:
        return self.mode in ("full", "distance-only")

    @property
    def uses_cluster(self) -> bool:
        return self.mode in ("full", "cluster-only")

    @property
    def uses_head(self) -> bool:
        return self.mode != "base-only"

    @property
    def learnable_center(self) -> bool:
        return self.mode in ("full", "cluster-only")

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def field_names(cls) -> tuple[str, ...]:
        return tuple(f.name for f in fields(cls))
