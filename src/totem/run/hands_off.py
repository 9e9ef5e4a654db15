"""What a request says must not be changed: "without changing the test", "do not touch
config.yaml". A small model asked to fix code so that a test passes edits the test; the
files the request puts out of bounds are refused to it, with the reason.
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
               "*/test/*")


class HandsOff:
    """The paths one request put out of bounds: files it names, or every test file."""

    def __init__(self, files: Iterable[str], *, tests: bool) -> None:
        self.files = {f.removeprefix("./") for f in files}
        self.tests = tests

    def __bool__(self) -> bool:
        return bool(self.files or self.tests)

    def covers(self, path: str) -> bool:
        """Whether `path` (relative to the project) is out of bounds."""
        clean = path.removeprefix("./")
        name = PurePosixPath(clean).name
        if clean in self.files or name in self.files:
            return True
        return self.tests and any(fnmatch(clean, p) or fnmatch(name, p) for p in _TEST_FILES)

    def refusal(self, paths: Iterable[str]) -> str | None:
        """The error for a change of any of `paths` that is out of bounds, or None."""
        blocked = [p for p in paths if self.covers(p)]
        if not blocked:
            return None
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
    return HandsOff(files, tests=tests)
