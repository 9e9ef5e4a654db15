"""The command that runs a project's tests, or one test file, for totem's own calls.

A request such as "Run this project's tests and tell me how many fail" is answered from the
tests' output; a small model asked it read the test file three times and guessed. Reading
ahead (run/read_ahead.py) runs the command for it, as a call of totem's own that the person
sees and is asked about like any other.
"""

from __future__ import annotations

import json
import os
import re  # compiled on first use (re caches them), not at start-up
import shlex
import shutil
from collections.abc import Iterator
from pathlib import Path

__all__ = ["asks_test_run", "file_test_command", "project_test_command", "test_named"]

_SKIP_DIRS = frozenset({".git", "node_modules", ".venv", "venv", "__pycache__", ".tox"})
MAX_FILES_SEEN = 2_000  # a bigger project is not searched for Python tests
_TESTS = r"\b(?:tests?|test suite|pytest|specs?)\b"
_RUN_OR_RESULT = r"\b(?:run\w*|execute\w*|fail\w*|pass\w*|broken|red|green)\b"


def asks_test_run(request: str) -> bool:
    """Whether a request is about what the tests do when run ("run the tests", "how many
    tests fail", "make the failing test pass")."""
    return bool(re.search(_TESTS, request, re.I) and re.search(_RUN_OR_RESULT, request, re.I))


_TEST_FILE = r"(?<![\w/.-])((?:[\w-]+/)*(?:test_\w+|\w+_test)\.py)\b"


def test_named(request: str, root: Path) -> str | None:
    """The one Python test file inside the project that the request names and that exists,
    as it names it."""
    base = root.resolve()
    found = set()
    for match in re.finditer(_TEST_FILE, request):
        path = (root / match.group(1)).resolve()
        if base in path.parents and path.is_file():
            found.add(match.group(1))
    return found.pop() if len(found) == 1 else None


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
        if isinstance(scripts, dict) and isinstance(scripts.get("test"), str):
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
        name = path.name
        if name.endswith(".py") and (name.startswith("test_") or name.endswith("_test.py")):
            return True
        if name in {"pytest.ini", "conftest.py"}:
            return True
    return False


def _walk(root: Path) -> Iterator[Path]:
    for folder, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if d not in _SKIP_DIRS and not d.endswith(".egg-info")]
        for name in names:
            yield Path(folder) / name
