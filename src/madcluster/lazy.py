"""Package exports imported on first use (PEP 562 module ``__getattr__``).

``import madcluster`` and ``madcluster --help`` must not pay seconds for torch, pandas and
scikit-learn; a package that re-exports names from heavy modules lists them here instead.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from importlib import import_module
from typing import Any


def lazy_exports(
    package: str, namespace: dict[str, Any], exports: Mapping[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for ``package``: ``exports`` maps a name to its module.

    The first access imports the module and stores the value in ``namespace`` (the package's
    ``globals()``), so later accesses are plain lookups.
    """

    def __getattr__(name: str) -> Any:
        if name not in exports:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(import_module(exports[name]), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(exports))

    return __getattr__, __dir__
