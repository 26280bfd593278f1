"""Package exports imported on first use (PEP 562 module ``__getattr__``).

``import madcluster`` and ``madcluster --help`` must not pay seconds for torch, pandas and
scikit-learn; a package that re-exports names from heavy modules lists them here instead.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from importlib import import_module
from importlib.util import find_spec
from typing import Any


def lazy_exports(
    package: str, namespace: dict[str, Any], exports: Mapping[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for ``package``: ``exports`` maps a name to its module.

    The first access imports the module and stores the value in ``namespace`` (the package's
    ``globals()``), so later accesses are plain lookups. A name that is a submodule of ``package``
    is imported on first access too: ``import madcluster; madcluster.metrics.evaluate(...)`` works
    as ``import numpy; numpy.linalg`` does, while ``import madcluster`` itself stays light.
    """

    def __getattr__(name: str) -> Any:
        if name in exports:
            value = getattr(import_module(exports[name]), name)
        elif not name.startswith("_") and find_spec(f"{package}.{name}") is not None:
            value = import_module(f"{package}.{name}")  # sets the package's attribute itself
        else:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(exports))

    return __getattr__, __dir__
