"""What a small local model is told: a short prompt, and the nudges after a weak answer.

The texts are the files beside this module: small.txt (the system prompt's first part),
small_look.txt (an answer given without looking) and small_missing_path.txt (an answer that
names a path the project does not have).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from totem.prompt.builder import environment, project_instructions

__all__ = ["absent_nudge", "act_nudge", "copied_nudge", "list_nudge", "look_nudge",
           "missing_path_nudge",
           "small_system_prompt", "state_nudge"]

_HERE = Path(__file__).parent


def _text(name: str) -> str:
    return (_HERE / name).read_text(encoding="utf-8").strip()


def small_system_prompt(root: Path, *, knowledge: str = "") -> str:
    """small.txt, the environment, the project's instructions and a framework primer (only
    when the project uses that framework); no skills list."""
    parts = [_text("small.txt"), environment(root), project_instructions(root), knowledge.strip()]
    return "\n\n".join(p for p in parts if p)


def look_nudge(files: Sequence[str]) -> str:
    """Said once when a small model answers without a single tool call; `files`: some of
    the project's files, so that it has real paths to read."""
    return _text("small_look.txt").replace("{files}", ", ".join(files) or "(none)")


def absent_nudge(names: Sequence[str], request: str) -> str:
    """Said once when a small model answers a question about names the project does not
    have as if it had them."""
    text = _text("small_absent.txt").replace("{names}", ", ".join(names))
    return text.replace("{request}", request.strip())


def list_nudge(files: Sequence[str], request: str) -> str:
    """Said once when a small model asked to list the files answers without them."""
    return _text("small_list.txt").replace("{files}", ", ".join(files)).replace(
        "{request}", request.strip())


def state_nudge(left: str, request: str) -> str:
    """Said once when what a small model answered is not yet true of the project."""
    return _text("small_state.txt").replace("{left}", left).replace("{request}",
                                                                    request.strip())


def test_nudge(output: str, request: str, *, new: bool = False) -> str:
    """Said when the test a request names still fails after a small model's change, or
    (`new`) when the test it was asked to write fails against the code."""
    return _text("small_new_test.txt" if new else "small_test.txt").replace(
        "{output}", output.strip()).replace("{request}", request.strip())


def act_nudge(request: str, *, run: bool = False) -> str:
    """Said when a small model answers a request for a change (or, `run`, for a command)
    without making it."""
    return _text("small_run.txt" if run else "small_act.txt").replace("{request}",
                                                                     request.strip())


def copied_nudge(request: str) -> str:
    """Said once when a small model's answer is its own instructions copied back."""
    return _text("small_copied.txt").replace("{request}", request.strip())


def missing_path_nudge(paths: Sequence[str], files: Sequence[str]) -> str:
    """Said once when a small model's answer names paths that do not exist."""
    text = _text("small_missing_path.txt").replace("{paths}", ", ".join(paths))
    return text.replace("{files}", ", ".join(files) or "(none)")
