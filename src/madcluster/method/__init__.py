"""The paper's method: objective options, loss terms and the heads (imported on first use)."""

from madcluster.lazy import lazy_exports

__all__ = ["Head", "LossParts", "MADClusterHead", "MethodConfig", "NoHead", "build_head"]
__getattr__, __dir__ = lazy_exports(
    __name__,
    globals(),
    {name: "madcluster.method.config" if name == "MethodConfig" else "madcluster.method.head" for name in __all__},
)
