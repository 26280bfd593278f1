"""The layout goals, enforced: small modules (at most 360 lines, 90 % of a 400-line cap) of lines
a reader can read, no import cycle (type-only imports included) and no cycle between rooms
(subpackages), ``cli/`` imported only by itself and the entry point, a package root of at most 15
modules, a small ``evaluation/``, the default window size written once.

``python tests/test_architecture.py [SRC]`` prints the measured numbers (largest modules, lines of
``evaluation/``, import cycles) for ``SRC`` (default: this checkout's ``src``).
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"
MAX_MODULE_LINES = 400
# a cap met exactly is a target, not room: every module keeps a tenth of the cap free
ROOM = 0.9
MODULE_LINES = int(MAX_MODULE_LINES * ROOM)  # 360
# modules allowed past MODULE_LINES for now, each at most its size when listed: the streaming
# scorer is being reworked, and its rework brings it under MODULE_LINES (then its entry goes)
OVER_MODULE_LINES: dict[str, int] = {}
MAX_LINE_LENGTH = 100  # pyproject's [tool.ruff] line-length
MAX_LONG_LINES = 20
MAX_EVALUATION_LINES = 1000
MAX_ROOT_MODULES = 15
ENTRY_POINT = "madcluster.__main__"


def modules(src: Path = SRC) -> dict[str, Path]:
    """Dotted module name -> file, for every module of the package."""
    out = {}
    for path in sorted((src / "madcluster").rglob("*.py")):
        parts = list(path.relative_to(src).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def line_count(path: Path) -> int:
    return len(path.read_text().splitlines())


def _type_checking_only(node: ast.AST) -> bool:
    return isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)


def imports(name: str, path: Path, known: set[str], *, type_only: bool = True) -> set[str]:
    """The package's modules that ``name`` imports, anywhere in it (inside functions too). Blocks
    under ``if TYPE_CHECKING`` count unless ``type_only`` is false: they never run, but a cycle
    through them still means two modules that cannot be read, or moved, one without the other."""
    tree = ast.parse(path.read_text())
    skipped = (
        set()
        if type_only
        else {id(n) for node in ast.walk(tree) if _type_checking_only(node) for n in ast.walk(node)}
    )
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            for alias in node.names:
                found.add(f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base)
    return {m for m in found if m in known and m != name}


def import_graph(src: Path = SRC, *, type_only: bool = True) -> dict[str, set[str]]:
    mods = modules(src)
    return {
        name: imports(name, path, set(mods), type_only=type_only) for name, path in mods.items()
    }


def room(module: str) -> str:
    """The room a module lives in: its subpackage of ``madcluster`` (``madcluster.cli``), or the
    module itself for a module of the package root."""
    return ".".join(module.split(".")[:2])


def room_graph(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """Which rooms import which, from the module graph (imports inside one room left out)."""
    out: dict[str, set[str]] = {room(m): set() for m in graph}
    for m, deps in graph.items():
        out[room(m)] |= {room(d) for d in deps if room(d) != room(m)}
    return out


def cli_importers(graph: dict[str, set[str]]) -> list[str]:
    """Modules outside ``cli/`` and the entry point that import ``cli/``: the library must work
    without its command line."""
    return sorted(
        m
        for m, deps in graph.items()
        if room(m) != "madcluster.cli"
        and m != ENTRY_POINT
        and any(room(d) == "madcluster.cli" for d in deps)
    )


def root_modules(src: Path = SRC) -> list[str]:
    """The modules directly in the package root (``__init__`` and ``__main__`` included)."""
    return sorted(p.name for p in (src / "madcluster").glob("*.py"))


def import_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    for v in graph:
        if v not in index:
            visit(v)
    return out


def evaluation_lines(src: Path = SRC) -> int:
    return sum(line_count(p) for p in (src / "madcluster" / "evaluation").rglob("*.py"))


def window_size_literals(src: Path = SRC) -> list[str]:
    """Lines of ``src`` that write the default window size as a number: the default's value on a
    line about windows (``window_size: int = 100``, "window length L (default: 100)", "L = 100"),
    leaving out the metrics' own sliding window."""
    value = re.search(
        r"DEFAULT_WINDOW_SIZE = (\d+)",
        (src / "madcluster" / "defaults.py").read_text()
        if (src / "madcluster" / "defaults.py").is_file()
        else "DEFAULT_WINDOW_SIZE = 100",
    )[1]
    number = re.compile(rf"(?<![\w.]){value}(?![\w.%])")
    hits = []
    for path in sorted((src / "madcluster").rglob("*.py")):
        if "metrics" in path.parts:  # the metrics' sliding window is a setting of its own
            continue
        for line_no, line in enumerate(path.read_text().splitlines(), 1):
            about_windows = (
                re.search(r"window|\bL\s*=", line, re.IGNORECASE) and "metric" not in line.lower()
            )
            if (
                about_windows
                and number.search(line)
                and not re.search(r"range_|vus|\bwindow: int", line)
            ):
                hits.append(f"{path.relative_to(src)}:{line_no}: {line.strip()}")
    return hits


def over_module_lines(src: Path = SRC) -> dict[str, int]:
    """Modules longer than :data:`MODULE_LINES` (or than their entry in
    :data:`OVER_MODULE_LINES`), with their line counts."""
    sizes = {name: line_count(p) for name, p in modules(src).items()}
    return {n: s for n, s in sizes.items() if s > OVER_MODULE_LINES.get(n, MODULE_LINES)}


def test_every_module_keeps_a_tenth_of_the_cap_free():
    big = over_module_lines()
    assert not big, (
        f"modules over {MODULE_LINES} lines ({ROOM:.0%} of the {MAX_MODULE_LINES}-line cap): {big};"
        " split each by meaning"
    )


def test_the_line_check_sees_a_long_module(tmp_path):
    package = tmp_path / "madcluster"
    package.mkdir()
    (package / "short.py").write_text("x = 1\n" * MODULE_LINES)
    (package / "long.py").write_text("x = 1\n" * (MODULE_LINES + 1))
    assert over_module_lines(tmp_path) == {"madcluster.long": MODULE_LINES + 1}


def test_the_allowed_overs_stay_under_the_cap():
    assert all(limit <= MAX_MODULE_LINES for limit in OVER_MODULE_LINES.values())
    known = modules()
    # an entry for a module that is gone, or back under the limit, goes too
    stale = {n for n in OVER_MODULE_LINES if n not in known or line_count(known[n]) <= MODULE_LINES}
    assert not stale, f"remove from OVER_MODULE_LINES: {sorted(stale)}"


def long_lines(src: Path = SRC) -> dict[str, int]:
    """Lines over :data:`MAX_LINE_LENGTH` characters per module of ``src`` that has any."""
    counts = {
        name: sum(len(line) > MAX_LINE_LENGTH for line in p.read_text().splitlines())
        for name, p in modules(src).items()
    }
    return {name: n for name, n in counts.items() if n}


def test_lines_a_reader_can_read():
    counts = long_lines()
    worst = sorted(counts.items(), key=lambda kv: -kv[1])[:10]
    assert sum(counts.values()) <= MAX_LONG_LINES, (
        f"{sum(counts.values())} lines over {MAX_LINE_LENGTH} characters in src/ (at most "
        f"{MAX_LONG_LINES}); the most in: {worst}"
    )


def test_no_import_cycle():
    assert import_cycles(import_graph()) == []


def test_no_cycle_between_rooms():
    assert import_cycles(room_graph(import_graph())) == []


def test_only_the_entry_point_imports_the_command_line():
    assert cli_importers(import_graph()) == []


def test_package_root_is_small():
    root = root_modules()
    assert len(root) <= MAX_ROOT_MODULES, root


MAX_ESTIMATOR_METHODS = 16


def public_methods(src: Path = SRC) -> list[str]:
    """MADCluster's own public methods (its class and BaseDetector's, not scikit-learn's): what
    streaming, export and model files need is the fitted model's (``model_``), not the
    estimator's. An old spelling kept for a release (``estimator/deprecated.py``, assigned, not
    defined) is not one."""
    found: set[str] = set()
    for file, cls in (("estimator/detector.py", "MADCluster"), ("base.py", "BaseDetector")):
        tree = ast.parse((src / "madcluster" / file).read_text())
        body = next(n for n in ast.walk(tree) if isinstance(n, ast.ClassDef) and n.name == cls).body
        found |= {
            n.name for n in body if isinstance(n, ast.FunctionDef) and not n.name.startswith("_")
        }
    return sorted(found)


def test_estimator_surface_is_small():
    methods = public_methods()
    room = int(MAX_ESTIMATOR_METHODS * ROOM)  # 14: a cap met exactly is a target, not room
    assert len(methods) <= room, f"{len(methods)} public methods, at most {room}: {methods}"


def test_type_only_imports_count_towards_cycles(tmp_path):
    package = tmp_path / "madcluster"
    package.mkdir()
    (package / "a.py").write_text("from madcluster import b\n")
    (package / "b.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from madcluster import a\n"
    )
    assert import_cycles(import_graph(tmp_path)) == [["madcluster.a", "madcluster.b"]]
    assert import_cycles(import_graph(tmp_path, type_only=False)) == []


def test_evaluation_is_what_a_score_means_only():
    assert evaluation_lines() < MAX_EVALUATION_LINES


def test_default_window_size_is_written_once():
    hits = window_size_literals()
    assert len(hits) == 1 and "defaults.py" in hits[0], hits


def private_imports(src: Path = SRC) -> list[str]:
    """``from madcluster... import _name`` anywhere in the package: private names stay in their
    module."""
    hits = []
    for name, path in modules(src).items():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("madcluster"):
                hits += [
                    f"{name}: {node.module}.{a.name}"
                    for a in node.names
                    if a.name.startswith("_") and not a.name.endswith("__")
                ]
    return hits


def test_no_private_name_imported_across_modules():
    assert private_imports() == []


def test_cycle_finder_finds_a_cycle():
    assert import_cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


if __name__ == "__main__":
    src = Path(sys.argv[1]) if len(sys.argv) > 1 else SRC
    sizes = sorted(((line_count(p), n) for n, p in modules(src).items()), reverse=True)
    total = sum(s for s, _ in sizes)
    print(
        f"package: {len(sizes)} modules, {total} lines; largest: "
        + ", ".join(f"{n} {s}" for s, n in sizes[:5])
    )
    over = {n: s for s, n in sizes if s > MODULE_LINES}
    print(f"modules over {MODULE_LINES} lines: {over} (allowed: {OVER_MODULE_LINES})")
    long = long_lines(src)
    print(f"lines over {MAX_LINE_LENGTH} characters: {sum(long.values())} in {len(long)} modules")
    print(f"evaluation/: {evaluation_lines(src)} lines")
    print(f"detector.py: {line_count(src / 'madcluster' / 'estimator' / 'detector.py')} lines")
    cycles = import_cycles(import_graph(src))
    print(f"import cycles (type-only imports included): {len(cycles)} {cycles}")
    print(f"room cycles: {import_cycles(room_graph(import_graph(src)))}")
    print(f"modules outside cli/ importing cli/: {cli_importers(import_graph(src))}")
    print(f"package root: {len(root_modules(src))} modules")
    print(f"MADCluster's own public methods: {len(public_methods(src))} {public_methods(src)}")
    print(f"private names imported across modules: {len(private_imports(src))}")
    literals = window_size_literals(src)
    print(f"default window size literals: {len(literals)}")
    for hit in literals:
        print("  " + hit)
