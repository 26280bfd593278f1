"""Old spellings kept working, each with a :class:`DeprecationWarning` naming the new one
(``CHANGELOG.md``, "Deprecated").

Why: a method that moved off a class (to a function of the fitted model, say) keeps its callers
running for a release instead of breaking them; the class's surface is its own methods, and an
alias here is not one of them (``tests/test_architecture.py`` and the fitted model's size test
count without these).
"""

from __future__ import annotations

import functools
import inspect
import warnings
from collections.abc import Callable
from typing import Any


class DeprecatedAlias:
    """A class attribute that answers an old method name: calling it warns and calls
    ``function(instance, *args, **kwargs)``; ``instead`` is what to write now."""

    def __init__(self, function: Callable[..., Any], instead: str) -> None:
        self.function = function
        self.instead = instead
        self.name = function.__name__

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, instance: Any, owner: type | None = None) -> Any:
        if instance is None:
            return self

        @functools.wraps(self.function)
        def call(*args: Any, **kwargs: Any) -> Any:
            warnings.warn(
                f"{type(instance).__name__}.{self.name} is deprecated; use {self.instead}",
                DeprecationWarning,
                stacklevel=2,
            )
            return self.function(instance, *args, **kwargs)

        return call


def is_deprecated_alias(owner: type, name: str) -> bool:
    """Whether ``owner.name`` is a :class:`DeprecatedAlias` (found without calling it)."""
    return isinstance(inspect.getattr_static(owner, name, None), DeprecatedAlias)


__all__ = ["DeprecatedAlias", "is_deprecated_alias"]
