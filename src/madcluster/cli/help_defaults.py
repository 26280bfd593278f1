"""Defaults shown by ``madcluster fit --help`` read from the source, without importing torch.

The defaults of an embedder's size flags (``--hidden-size``, ``--layers``: the D-RNN's signature)
and of the image flags (``IMAGE_PARAMS``) live in modules that import torch and scikit-learn,
which made ``fit --help`` take seconds (torch's import alone). Their source is parsed here
instead of run: the signature's literal default, or the literal first argument of the table's
``Param(...)``.
Anything not written as a literal is left to :func:`madcluster.cli.options.signature_default`,
which imports; ``tests/cli/test_help_defaults.py`` checks both give the same value.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

_NOT_FOUND = object()


def _module_tree(module: str) -> ast.Module | None:
    """The parsed source of ``madcluster.x.y``, found beside this package (``find_spec`` of a
    submodule would import its parent package, and ``madcluster.embedders`` imports torch)."""
    parts = module.split(".")
    if parts[0] != "madcluster":
        return None
    base = Path(__file__).resolve().parents[1].joinpath(*parts[1:])
    path = base / "__init__.py" if base.is_dir() else base.with_suffix(".py")
    if not path.is_file():
        return None
    with open(path, encoding="utf-8") as handle:
        return ast.parse(handle.read())


def _literal(node: ast.AST) -> Any:
    try:
        return ast.literal_eval(node)
    except ValueError:
        return _NOT_FOUND


def _registered_class(name: str) -> tuple[str, str] | None:
    """``(module, class)`` of embedder ``name`` from the registry's source
    (``EMBEDDERS = {...}``)."""
    tree = _module_tree("madcluster.embedders")
    if tree is None:
        return None
    imported = {
        alias.asname or alias.name: node.module
        for node in tree.body
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
    }
    value = _table_entry(tree, "EMBEDDERS", name)
    if not isinstance(value, ast.Name):
        return None
    module = imported.get(value.id)
    return (module, value.id) if module else None


def _table_entry(tree: ast.Module | None, table: str, key: str) -> ast.AST | None:
    """The value written for ``key`` in the module-level dict literal ``table = {...}`` (or
    ``table: ... = {...}``) of ``tree``; None when there is none."""
    for node in tree.body if tree is not None else ():
        target = (
            node.target
            if isinstance(node, ast.AnnAssign)
            else (node.targets[0] if isinstance(node, ast.Assign) else None)
        )
        if isinstance(target, ast.Name) and target.id == table and isinstance(node.value, ast.Dict):
            for k, value in zip(node.value.keys, node.value.values):
                if isinstance(k, ast.Constant) and k.value == key:
                    return value
    return None


def _init_default(module: str, cls: str, param: str) -> Any:
    tree = _module_tree(module)
    for node in tree.body if tree is not None else ():
        if isinstance(node, ast.ClassDef) and node.name == cls:
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and item.name == "__init__":
                    args = item.args.args + item.args.kwonlyargs
                    defaults = [None] * (
                        len(item.args.args) - len(item.args.defaults)
                    ) + item.args.defaults
                    defaults += item.args.kw_defaults
                    for arg, default in zip(args, defaults):
                        if arg.arg == param and default is not None:
                            return _literal(default)
    return _NOT_FOUND


def _image_default(param: str) -> Any:
    value = _table_entry(_module_tree("madcluster.images.detector"), "IMAGE_PARAMS", param)
    if isinstance(value, ast.Call) and value.args:
        return _literal(value.args[0])
    return _NOT_FOUND


def source_default(param: str) -> Any:
    """The default of ``embedder.argument`` or ``image.parameter`` read from the source; a
    sentinel (``NOT_FOUND``) when it is not a literal there."""
    owner, _, name = param.rpartition(".")
    try:
        if owner == "image":
            return _image_default(name)
        found = _registered_class(owner) if owner else None
        return _NOT_FOUND if found is None else _init_default(found[0], found[1], name)
    except (OSError, SyntaxError, ImportError):
        return _NOT_FOUND


NOT_FOUND = _NOT_FOUND

__all__ = ["NOT_FOUND", "source_default"]
