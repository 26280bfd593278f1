"""How many import statements sit inside functions in the package (issue 22's count).

    python benchmarks/studies/speed/count_function_imports.py [SRC]     # default: src
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path


def function_imports(src: Path) -> int:
    count = 0
    for path in (src / "madcluster").rglob("*.py"):
        inside: set[int] = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                inside |= {id(n) for n in ast.walk(node) if isinstance(n, (ast.Import, ast.ImportFrom))}
        count += len(inside)
    return count


if __name__ == "__main__":
    print(function_imports(Path(sys.argv[1]) if len(sys.argv) > 1 else Path("src")))
