"""The repository's layout, where a newcomer looks for files:

- ``docs/layout.md`` names every module of the package, each under its room, so a module added
  without a line fails here;
- ``tests/`` mirrors ``src/madcluster/``: a module's tests sit in the room of the same name
  (``tests/root/`` for the package root's modules); loose at the top only the tests of the
  repository as a whole (this file, the architecture and the quoted numbers) and at most two
  that test what lies loose beside them (``conftest.py``, ``behaviour_reference.json``);
- ``benchmarks/`` as a suite: at most 12 scripts a user runs at its top, one shared library
  (``benchlib.py``) instead of scripts importing scripts, the studies by topic with a README in
  each folder and one shared module (``studies/lib.py``) instead of studies importing studies,
  and every path a doc, result record or docstring gives for a benchmark script names a file that
  exists.
"""

from __future__ import annotations

import ast
import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "madcluster"
LAYOUT = ROOT / "docs" / "layout.md"
TESTS = ROOT / "tests"
# tests of the repository as a whole, loose at the top of tests/ by design
WHOLE_REPOSITORY_TESTS = {"test_architecture.py", "test_layout.py", "test_docs_numbers.py"}
MAX_OTHER_LOOSE_TESTS = 2
# tests/root/: the tests of the package root's modules (exceptions.py, threads.py, ...)
ROOT_ROOM = "root"


def named_in_layout(text: str) -> set[str]:
    """Module paths (``room/name.py``, ``name.py`` at the root, ``room/`` for a room) that the
    page's ``src/madcluster/`` block names: a room at two spaces, its modules at four."""
    block = text.split("src/madcluster/\n", 1)[1].split("```", 1)[0]
    named, room = set(), None
    for line in block.splitlines():
        entry = re.match(r"^( {2}| {4})(\w+(?:\.py|/))(?:\s|$)", line)
        if not entry:
            continue
        indent, name = len(entry[1]), entry[2]
        if indent == 2:
            room = name if name.endswith("/") else None
            named.add(name)
        elif room is not None:
            named.add(room + name)
    return named


def package_modules() -> set[str]:
    """Every module and room of the package, as :func:`named_in_layout` writes them."""
    found = set()
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE).parts
        if "__pycache__" in parts:
            continue
        if len(parts) == 1:
            found.add(parts[0])
        elif parts[-1] == "__init__.py":
            found.add("/".join(parts[:-1]) + "/")
        else:
            found.add("/".join(parts[:-1]) + "/" + parts[-1])
    return found


def test_the_layout_page_names_every_module():
    missing = package_modules() - named_in_layout(LAYOUT.read_text(encoding="utf-8"))
    assert sorted(missing) == [], "add a line for each to docs/layout.md"


def test_the_reading_of_the_page_sees_rooms_and_their_modules():
    text = "x\n```\nsrc/madcluster/\n  score/   the parts\n    own.py   a part\n  atomic.py  writes\n```\n"
    assert named_in_layout(text) == {"score/", "score/own.py", "atomic.py"}


def loose_tests(tests: Path = TESTS) -> list[str]:
    """Test modules at the top of ``tests/`` besides the whole-repository ones."""
    return sorted(p.name for p in tests.glob("test_*.py") if p.name not in WHOLE_REPOSITORY_TESTS)


def rooms_of_tests(tests: Path = TESTS) -> set[str]:
    """The folders of ``tests/`` that hold test modules (at any depth below them)."""
    return {p.relative_to(tests).parts[0] for p in tests.glob("*/**/test_*.py")}


def test_tests_mirror_the_package():
    loose = loose_tests()
    assert len(loose) <= MAX_OTHER_LOOSE_TESTS, (
        f"{len(loose)} loose test modules at the top of tests/ (at most {MAX_OTHER_LOOSE_TESTS}): "
        f"{loose}; move each into the room of the module it tests (tests/<room>/, tests/root/)"
    )
    package_rooms = {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file()}
    strays = sorted(rooms_of_tests() - package_rooms - {ROOT_ROOM})
    assert strays == [], f"test folders with no room of the same name in src/madcluster/: {strays}"


def test_the_mirror_check_counts_loose_tests(tmp_path):
    for name in [*WHOLE_REPOSITORY_TESTS, "test_a.py", "test_b.py", "test_c.py", "helpers.py"]:
        (tmp_path / name).write_text("")
    (tmp_path / "score").mkdir()
    (tmp_path / "score" / "test_parts.py").write_text("")
    assert loose_tests(tmp_path) == ["test_a.py", "test_b.py", "test_c.py"]
    assert rooms_of_tests(tmp_path) == {"score"}


BENCHMARKS = ROOT / "benchmarks"
LIBRARY = "benchlib"
STUDIES = BENCHMARKS / "studies"
STUDY_LIBRARY = "lib"


def _top_level_scripts() -> list[Path]:
    return sorted(
        p for p in BENCHMARKS.iterdir() if p.suffix in (".py", ".sh") and p.stem != LIBRARY
    )


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
            assert not _imported_names(path) & stems, (
                f"{path.relative_to(ROOT)} imports another script"
            )
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
    crossing = [
        f"{p.relative_to(ROOT)} imports {sorted(_imported_names(p) & stems)}"
        for p in studies
        if _imported_names(p) & stems
    ]
    assert crossing == [], "shared code goes into benchmarks/studies/lib.py"
    top = {p.stem for p in _top_level_scripts()}
    assert not _imported_names(STUDIES / f"{STUDY_LIBRARY}.py") & (top | stems)


def test_the_import_check_sees_an_import_inside_a_function(tmp_path):
    study = tmp_path / "study.py"
    study.write_text("import numpy\n\ndef main():\n    from network_parts import read_bundle\n")
    assert _imported_names(study) == {"numpy", "network_parts"}


def test_every_benchmark_script_path_in_the_tree_exists():
    try:
        tracked = subprocess.run(
            ["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True
        ).stdout.split()
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
        gone |= {
            f"{name}: benchmarks/{m}" for m in path.findall(text) if not (BENCHMARKS / m).exists()
        }
    assert sorted(gone) == []
