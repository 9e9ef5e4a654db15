"""Whether a streamed text has become a loop: a small model at a low temperature, once it
repeats itself, goes on until its token limit (minutes on a CPU). Looked at while the text
streams, at its end only: by the run's call guard (an answer's text, a call's arguments) and
by the text steps (the text of a file being written).
"""

from __future__ import annotations

__all__ = ["RUN_CHARS", "SAME_LINES", "degenerate"]

RUN_CHARS = 400  # one piece of up to MAX_UNIT characters filling this many at the end
MAX_UNIT = 8
SAME_LINES = 30  # the same line this many times in a row at the end
BLOCK_LINES = 60  # the longest block of lines looked for repeated at the end
BLOCK_COPIES = 3  # a block of lines this many times in a row (SAME_LINES lines at least)


def degenerate(text: str) -> bool:
    """Whether `text` ends in one short piece repeated to fill RUN_CHARS characters, in the
    same line SAME_LINES times, or in one block of lines repeated (lines as written, or as
    `\\n` inside JSON)."""
    if len(text) >= RUN_CHARS:
        tail = text[-RUN_CHARS:]
        for size in range(1, MAX_UNIT + 1):
            unit = tail[-size:]
            if unit * (RUN_CHARS // size) == tail[RUN_CHARS % size:]:
                return True
    lines = text.replace("\\n", "\n").split("\n")[:-1]  # the last may be unfinished
    if len(lines) >= SAME_LINES and len(set(lines[-SAME_LINES:])) == 1:
        return True
    return _repeated_block(lines)


def _repeated_block(lines: list[str]) -> bool:
    """Whether `lines` end in one block of 2 to BLOCK_LINES lines written BLOCK_COPIES times
    in a row or more, SAME_LINES lines in all at least. Code that repeats a short block
    (two functions alike) stays far from that."""
    for size in range(2, BLOCK_LINES + 1):
        copies = max(BLOCK_COPIES, -(-SAME_LINES // size))
        if size * copies > len(lines):
            continue
        block = lines[-size:]
        if all(lines[-(k + 1) * size:-k * size] == block for k in range(1, copies)):
            return True
    return False
