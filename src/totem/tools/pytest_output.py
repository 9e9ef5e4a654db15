"""What a failed pytest assertion says, in one plain sentence for a small model.

Shown `assert 'Hello-World-2024' == 'hello-world-2024'` in a test's output, the 1.5B coder
decided the code "does not remove the spaces" and changed that, twice. The sentence names
the call, what it returned and what the test expects, read from pytest's own lines: the
source line (`>       assert slugify('Hello, World 2024!') == 'hello-world-2024'`) and the
values it compared (`E       AssertionError: assert 'Hello-World-2024' == '...'`).
"""

from __future__ import annotations

import re  # compiled on first use (re caches them), not at start-up

__all__ = ["failed_comparison"]

_SOURCE = r"^>\s+assert\s+(.+?)\s*$"
_VALUES = r"^E\s+(?:AssertionError:\s+)?assert\s+(.+?)\s*$"


def _sides(text: str) -> tuple[str, str] | None:
    if text.count(" == ") != 1:
        return None
    left, right = text.split(" == ")
    return left.strip(), right.strip()


def failed_comparison(output: str) -> str | None:
    """"slugify('A b') returned 'A-b', but the test expects 'a-b'." for the first failed
    `assert CALL == VALUE` (either way round) in pytest's output, or None."""
    lines = output.splitlines()
    for number, line in enumerate(lines):
        source = re.match(_SOURCE, line)
        if source is None:
            continue
        code = _sides(source.group(1))
        values = next((re.match(_VALUES, later) for later in lines[number + 1:number + 4]
                       if re.match(_VALUES, later)), None)
        got = _sides(values.group(1)) if values is not None else None
        if code is None or got is None:
            return None
        called = ["(" in side for side in code]
        if called == [True, False]:
            return f"{code[0]} returned {got[0]}, but the test expects {got[1]}."
        if called == [False, True]:
            return f"{code[1]} returned {got[1]}, but the test expects {got[0]}."
        return None
    return None
