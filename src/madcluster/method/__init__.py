"""The paper's method: objective options, loss terms and the heads (imported on first use)."""

from madcluster.lazy import lazy_exports

__all__ = ["Head", "LossParts", "MADClusterHead", "MethodConfig", "NoHead", "build_head"]
_MODULES = {"MethodConfig": "config", "build_head": "heads"}
__getattr__, __dir__ = lazy_exports(
    __name__, globals(), {name: f"{__name__}.{_MODULES.get(name, 'head')}" for name in __all__}
)
