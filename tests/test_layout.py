"""docs/layout.md names every module of the package, each under its room, so a newcomer finds
every file there and a module added without a line fails here."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "madcluster"
LAYOUT = ROOT / "docs" / "layout.md"


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
