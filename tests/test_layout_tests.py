"""The layout of tests/: what tests share lives in tests/support/, so no test module imports
another test module or a conftest.py (pytest finds the fixtures of a conftest by itself).
Read with `ast` from the files, so nothing is imported to check it."""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parent
SUPPORT = "tests.support"


def module_name(path: Path) -> str:
    """`tests/tools/test_read.py` -> `tests.tools.test_read` (a package's `__init__` is the
    package)."""
    parts = path.relative_to(TESTS.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported(tree: ast.Module, *, importer: str, package: bool) -> list[tuple[int, str]]:
    """Every module the code imports, relative imports resolved against `importer`."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = importer.split(".")
                parent = parent if package else parent[:-1]
                parent = parent[: len(parent) - (node.level - 1)]
                base = ".".join([*parent, base] if base else parent)
            found.append((node.lineno, base))
            found += [(node.lineno, f"{base}.{alias.name}") for alias in node.names
                      if node.level and not node.module]
    return found


def forbidden(name: str) -> bool:
    """A test module or a conftest: anything of tests/ outside tests/support/."""
    parts = name.split(".")
    if "conftest" in parts:
        return True
    if parts[0] != "tests" or len(parts) == 1:
        return False
    return not (name == SUPPORT or name.startswith(SUPPORT + "."))


def violations(source: str, *, importer: str, package: bool = False) -> list[str]:
    tree = ast.parse(source)
    return [f"{importer}:{line} imports {name}"
            for line, name in imported(tree, importer=importer, package=package)
            if forbidden(name)]


def python_files() -> list[Path]:
    return sorted(p for p in TESTS.rglob("*.py") if "node_modules" not in p.parts)


def test_no_test_module_imports_another_test_module_or_a_conftest() -> None:
    found: list[str] = []
    for path in python_files():
        found += violations(path.read_text(encoding="utf-8"), importer=module_name(path),
                            package=path.name == "__init__.py")
    assert found == []


def test_the_check_sees_every_kind_of_import() -> None:
    bad = ("import tests.tools.conftest\n"
           "from tests.providers.test_gemini_aimock import ask\n"
           "from .conftest import Call\n"
           "from . import helpers\n"
           "from ..core.helpers import make_agent\n"
           "from conftest import project\n")
    assert violations(bad, importer="tests.tools.test_x") == [
        "tests.tools.test_x:1 imports tests.tools.conftest",
        "tests.tools.test_x:2 imports tests.providers.test_gemini_aimock",
        "tests.tools.test_x:3 imports tests.tools.conftest",
        "tests.tools.test_x:4 imports tests.tools",
        "tests.tools.test_x:4 imports tests.tools.helpers",
        "tests.tools.test_x:5 imports tests.core.helpers",
        "tests.tools.test_x:6 imports conftest",
    ]
    good = ("from tests.support.aimock import Aimock\n"
            "from tests.support import streams\n"
            "from .streams import texts\n"
            "import totem.run.loop\n")
    assert violations(good, importer="tests.support.gemini_streams") == []


def test_the_walk_reads_the_whole_tree() -> None:
    names = {module_name(p) for p in python_files()}
    assert {"tests.tools.conftest", "tests.support.aimock", "tests.test_layout_tests"} <= names
    assert len(names) > 50
