"""What a request says must not be changed: "without changing the test", "do not touch
config.yaml"; and, for a request that only asks for tests ("write a pytest test file for the
Stack class"), everything but test files. A small model asked to fix code so that a test
passes edits the test; asked for a test, the 1.5B renamed `Stack.pop` first. The files the
request puts out of bounds are refused to it, with the reason.
"""

from __future__ import annotations

import re  # compiled on first use (re caches them), not at start-up
from collections.abc import Iterable
from fnmatch import fnmatch
from pathlib import PurePosixPath

__all__ = ["HandsOff", "hands_off"]

_FORBIDDING = (
    r"(?:\b(?:without|never|not|no)|n't)\s+(?:\w+\s+)?"
    r"(?:chang|modif|edit|touch|alter|rewrit)\w*\s+(?:(?:any|all|of|the|these|those)\s+)*"
    r"((?:[\w.-]+/)*[\w-][\w.-]*\.\w+|tests?\b(?:\s+files?)?)"
)
_TEST_FILES = ("test_*", "*_test.*", "*.test.*", "*.spec.*", "tests/*", "test/*", "*/tests/*",
               "*/test/*", "conftest.py")
_ASKS_TESTS = r"\b(?:write|add|create|make)\s+(?:\w+\s+){0,3}?(?:tests?|unit\s+tests?)\b"
_ASKS_MORE = (r"\b(?:fix\w*|chang\w*|modif\w*|updat\w*|refactor\w*|renam\w*|implement\w*|"
              r"correct\w*|repair\w*|delet\w*|remov\w*|function|method|class\s+\w+\s+to)\b")


class HandsOff:
    """The paths one request put out of bounds: files it names, or every test file."""

    def __init__(self, files: Iterable[str], *, tests: bool, only_tests: bool = False) -> None:
        self.files = {f.removeprefix("./") for f in files}
        self.tests = tests
        self.only_tests = only_tests  # the request asks for tests and nothing else

    def __bool__(self) -> bool:
        return bool(self.files or self.tests or self.only_tests)

    def covers(self, path: str) -> bool:
        """Whether `path` (relative to the project) is out of bounds."""
        clean = path.removeprefix("./")
        name = PurePosixPath(clean).name
        if clean in self.files or name in self.files:
            return True
        is_test = any(fnmatch(clean, p) or fnmatch(name, p) for p in _TEST_FILES)
        return (self.tests and is_test) or (self.only_tests and not is_test)

    def refusal(self, paths: Iterable[str]) -> str | None:
        """The error for a change of any of `paths` that is out of bounds, or None."""
        blocked = [p for p in paths if self.covers(p)]
        if not blocked:
            return None
        if self.only_tests and blocked[0] not in self.files:
            return (f"Refused: the request asks for tests only, so {blocked[0]} stays as it is. "
                    "Write the tests in the test file the request names.")
        return (f"Refused: the request says not to change {blocked[0]}. Leave it as it is and "
                "change the code it is about instead.")


def hands_off(request: str) -> HandsOff:
    """The files `request` says must not be changed."""
    files: list[str] = []
    tests = False
    for match in re.finditer(_FORBIDDING, request, re.I):
        target = match.group(1)
        if target.lower().startswith("test") and "." not in target:
            tests = True
        else:
            files.append(target)
    only_tests = bool(re.search(_ASKS_TESTS, request, re.I)) and not re.search(
        _ASKS_MORE, request, re.I)
    return HandsOff(files, tests=tests, only_tests=only_tests and not tests)
