"""The import walk the structure tests share: every module under ``svcnb/`` parsed (not imported),
each import at any depth (functions, ``TYPE_CHECKING`` blocks, relative imports) as dotted names."""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import svcnb

ROOT = Path(svcnb.__file__).parent


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def is_package(path: Path) -> bool:
    return path.name == "__init__.py"


@functools.cache  # each structure test walks every module: parsed once per process
def imported(path: Path) -> frozenset[str]:
    """Every dotted name an import in ``path`` reaches: modules, and module.name for ``from``."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    module = module_name(path).split(".")
    here = module if is_package(path) else module[:-1]
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = here[: len(here) - (node.level - 1)]
                base = ".".join([*parent, base] if base else parent)
            names.add(base)
            names.update(f"{base}.{alias.name}" for alias in node.names)
    return frozenset(names)
