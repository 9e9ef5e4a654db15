"""The command that runs a project's tests, found from the project's files alone.

After a small model's change the project's tests are run, as a call of totem's own that
the person sees and is asked about like any other, and a failure goes back to the model
(see smallmodel/assist.py). Which command comes from what the project holds: a package.json
`test` script, Cargo.toml, go.mod, Python test files.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
from collections.abc import Iterator
from pathlib import Path

__all__ = ["file_test_command", "is_test_file", "project_test_command"]

_SKIP_DIRS = frozenset({".git", "node_modules", ".venv", "venv", "__pycache__", ".tox"})
MAX_FILES_SEEN = 2_000  # a bigger project is not searched for Python tests
def _python() -> str:
    return "python" if shutil.which("python") else "python3"


def _pytest(*, brief: bool) -> str:
    # brief: no tracebacks, only the failed tests' names and the count (a question about
    # the tests; a small model lost the count in 1,500 characters of tracebacks)
    return f"{_python()} -m pytest -q -p no:cacheprovider" + (" --tb=no" if brief else "")


def file_test_command(test: str, *, brief: bool = False) -> str:
    """The command that runs one Python test file, quietly."""
    return f"{_pytest(brief=brief)} {shlex.quote(test)}"


def project_test_command(root: Path, *, brief: bool = False) -> str | None:
    """The command that runs every test of the project at `root`: its package.json `test`
    script, `cargo test`, `go test ./...`, or pytest for Python tests; None when the project
    shows no tests of a kind known here."""
    package = root / "package.json"
    if package.is_file():
        try:
            scripts = json.loads(package.read_text(encoding="utf-8")).get("scripts") or {}
        except (OSError, ValueError, AttributeError):
            scripts = {}
        test = scripts.get("test") if isinstance(scripts, dict) else None
        if isinstance(test, str) and "no test specified" not in test:  # npm init's stand-in
            return "npm test"
    if (root / "Cargo.toml").is_file():
        return "cargo test"
    if (root / "go.mod").is_file():
        return "go test ./..."
    if _has_python_tests(root):
        return _pytest(brief=brief)
    return None


def _has_python_tests(root: Path) -> bool:
    seen = 0
    for path in _walk(root):
        seen += 1
        if seen > MAX_FILES_SEEN:
            return False
        if path.suffix == ".py" and is_test_file(path.name):
            return True
        if path.name in {"pytest.ini", "conftest.py"}:
            return True
    return False


def _walk(root: Path) -> Iterator[Path]:
    for folder, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if d not in _SKIP_DIRS and not d.endswith(".egg-info")]
        for name in names:
            yield Path(folder) / name


_TEST_NAMES = ("test_", "_test.", ".test.", "_spec.", ".spec.", "Test.java", "Tests.cs")


def is_test_file(path: str) -> bool:
    """Whether the project file `path` is a test by its name (test_x.py, x_test.go,
    x.test.js, x_spec.rb...) or its folder (tests/, test/, __tests__/, spec/)."""
    parts = path.replace("\\", "/").split("/")
    name = parts[-1]
    if any(folder in ("tests", "test", "__tests__", "spec") for folder in parts[:-1]):
        return True
    return name.startswith("test_") or any(mark in name for mark in _TEST_NAMES[1:])
