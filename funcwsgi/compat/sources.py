"""What a platform's source file defines, read without importing it (platforms are recognised before anything is imported)."""

from __future__ import annotations

import ast
import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..config import Config


def top_level_names(path: str) -> frozenset[str]:
    """Names ``path`` defines or imports at module level; empty when it is missing or does not parse."""
    from ..handler.loader import source_tree

    tree = source_tree(path)
    if tree is None:
        return frozenset()
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((alias.asname or alias.name).split(".", 1)[0] for alias in node.names)
        elif isinstance(node, ast.Assign):
            names.update(target.id for target in node.targets if isinstance(target, ast.Name))
    return frozenset(names)


def defines(path: str, name: str) -> bool:
    return name in top_level_names(path)


def project_root(config: Config) -> str:
    """The folder a platform's project files are looked for in: HANDLER_FOLDER, or the working folder when that is the default '/'."""
    folder = config.handler_folder
    if os.path.abspath(folder) == "/" and os.getcwd() != "/":
        return os.getcwd()
    return folder
