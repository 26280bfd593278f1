"""Issue 35 item 5: ``benchmarks/`` as a suite. At most 12 scripts a user runs at its top, one
shared library (``benchlib.py``) instead of scripts importing scripts, and every path a doc,
result record or docstring gives for a benchmark script names a file that exists."""

from __future__ import annotations

import ast
import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BENCHMARKS = ROOT / "benchmarks"
LIBRARY = "benchlib"


def _top_level_scripts() -> list[Path]:
    return sorted(p for p in BENCHMARKS.iterdir() if p.suffix in (".py", ".sh") and p.stem != LIBRARY)


def _imported_names(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


def test_at_most_twelve_scripts_at_the_top():
    scripts = _top_level_scripts()
    assert len(scripts) <= 12, [p.name for p in scripts]
    assert (BENCHMARKS / f"{LIBRARY}.py").is_file()


def test_scripts_a_user_runs_import_the_library_not_each_other():
    runnable = _top_level_scripts() + sorted((BENCHMARKS / "tables").glob("*.py"))
    stems = {p.stem for p in runnable}
    for path in runnable:
        if path.suffix == ".py":
            assert not _imported_names(path) & stems, f"{path.relative_to(ROOT)} imports another script"
    assert not _imported_names(BENCHMARKS / f"{LIBRARY}.py") & stems


def test_each_benchmark_folder_says_what_it_holds():
    folders = [BENCHMARKS, BENCHMARKS / "tables", *(p for p in (BENCHMARKS / "studies").iterdir() if p.is_dir())]
    missing = [str(f.relative_to(ROOT)) for f in folders if f.name != "__pycache__" and not (f / "README.md").is_file()]
    assert missing == []


def test_every_benchmark_script_path_in_the_tree_exists():
    try:
        tracked = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True,
                                 check=True).stdout.split()
    except (OSError, subprocess.CalledProcessError):
        tracked = []
    if not tracked:
        pytest.skip("not a git checkout: no list of the tree's files")
    path = re.compile(r"benchmarks/((?:[\w.-]+/)*[\w.-]+\.(?:py|sh))\b")
    gone = set()
    for name in tracked:
        if not name.endswith((".py", ".md", ".sh", ".toml", ".cfg", ".txt")):
            continue
        text = (ROOT / name).read_text(errors="replace") if (ROOT / name).is_file() else ""
        gone |= {f"{name}: benchmarks/{m}" for m in path.findall(text) if not (BENCHMARKS / m).exists()}
    assert sorted(gone) == []
