"""``benchmarks/`` as a suite. At most 12 scripts a user runs at its top, one shared library
(``benchlib.py``) instead of scripts importing scripts, the studies by topic with a README in each
folder and one shared module (``studies/lib.py``) instead of studies importing studies, and every
path a doc, result record or docstring gives for a benchmark script names a file that exists."""

from __future__ import annotations

import ast
import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BENCHMARKS = ROOT / "benchmarks"
LIBRARY = "benchlib"
STUDIES = BENCHMARKS / "studies"
STUDY_LIBRARY = "lib"


def _top_level_scripts() -> list[Path]:
    return sorted(p for p in BENCHMARKS.iterdir() if p.suffix in (".py", ".sh") and p.stem != LIBRARY)


def _imported_names(path: Path) -> set[str]:
    """The top-level names of every module ``path`` imports, at any depth of its code."""
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


def _folders(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_dir() and "__pycache__" not in p.parts)


def test_each_benchmark_folder_says_what_it_holds():
    folders = [BENCHMARKS, BENCHMARKS / "tables", STUDIES, *_folders(STUDIES)]
    missing = [str(f.relative_to(ROOT)) for f in folders if not (f / "README.md").is_file()]
    assert missing == [], "each folder of benchmarks/studies/ names its scripts in a README.md"


def test_studies_sit_in_topic_folders():
    loose = [p.name for p in STUDIES.glob("*.py") if p.stem != STUDY_LIBRARY]
    assert loose == [], "a study goes into a topic folder of benchmarks/studies/"


def test_no_study_imports_another():
    studies = sorted(p for p in STUDIES.rglob("*.py") if "__pycache__" not in p.parts)
    stems = {p.stem for p in studies} - {STUDY_LIBRARY}
    crossing = [f"{p.relative_to(ROOT)} imports {sorted(_imported_names(p) & stems)}"
                for p in studies if _imported_names(p) & stems]
    assert crossing == [], "shared code goes into benchmarks/studies/lib.py"
    top = {p.stem for p in _top_level_scripts()}
    assert not _imported_names(STUDIES / f"{STUDY_LIBRARY}.py") & (top | stems)


def test_the_import_check_sees_an_import_inside_a_function(tmp_path):
    study = tmp_path / "study.py"
    study.write_text("import numpy\n\ndef main():\n    from network_parts import read_bundle\n")
    assert _imported_names(study) == {"numpy", "network_parts"}


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
