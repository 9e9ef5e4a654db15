"""The session mode in the terminal chat, as in Claude Code: Shift-Tab cycles normal → plan
→ accept edits (the prompt shows the mode), `/plan [TEXT]` turns plan mode on, and a plan
the model proposes is approved, edited or sent back from the terminal.

Shift-Tab reaches the chat through readline, which reads lines, not keys: it is bound to a
macro that puts a mark (`CYCLE_MARK`) before the line and enters it, and the chat reads a
marked line as presses of Shift-Tab; what was typed is put back on the next prompt.
"""

from __future__ import annotations

from totem.cli.lines import LineReader
from totem.events import PlanProposed
from totem.policy.modes import MODES, SessionMode, next_mode

__all__ = ["CYCLE_MARK", "SHIFT_TAB", "ask_plan", "bind_shift_tab", "cycle", "mode_line",
           "prefill", "prompt_for", "split_cycle"]

CYCLE_MARK = "\x1f"  # what the Shift-Tab macro puts before the line
SHIFT_TAB = "\x1b[Z"  # what a terminal sends for Shift-Tab
# readline: beginning of line, the mark inserted literally (C-v quotes it), accept the line
SHIFT_TAB_MACRO = r'"\e[Z": "\C-a\C-v\C-_\C-m"'
PLAN_CHOICES = "Approve the plan?  [y] approve  [e] edit the steps  [k] keep planning > "


def bind_shift_tab() -> bool:
    """Bind Shift-Tab in GNU readline; False where there is none (the key then arrives as
    its escape sequence inside the line, which `split_cycle` reads too)."""
    try:
        import readline
    except ImportError:
        return False
    if "libedit" in (readline.__doc__ or ""):
        return False
    readline.parse_and_bind(SHIFT_TAB_MACRO)
    return True


def split_cycle(line: str) -> tuple[int, str]:
    """How many times Shift-Tab was pressed in `line`, and the text typed."""
    presses = line.count(CYCLE_MARK) + line.count(SHIFT_TAB)
    return presses, line.replace(CYCLE_MARK, "").replace(SHIFT_TAB, "")


def cycle(mode: SessionMode, presses: int) -> SessionMode:
    for _ in range(presses % len(MODES)):
        mode = next_mode(mode)
    return mode


def _info(mode: SessionMode) -> tuple[str, str]:
    info = next(m for m in MODES if m.name == mode)
    return info.title, info.description


def prompt_for(mode: SessionMode) -> str:
    """The chat's prompt: the mode before it when it is not the default."""
    return "\n› " if mode == "default" else f"\n[{_info(mode)[0].lower()}] › "


def mode_line(mode: SessionMode) -> str:
    title, description = _info(mode)
    return f"mode: {title} — {description} (Shift-Tab for the next)"


def prefill(text: str) -> None:
    """Put `text` on the next prompt's line, to edit and send (readline only)."""
    if not text:
        return
    try:
        import readline
    except ImportError:
        return

    def once() -> None:
        readline.insert_text(text)
        readline.set_startup_hook(None)

    readline.set_startup_hook(once)


async def ask_plan(plan: PlanProposed, reader: LineReader) -> list[str] | None:
    """The steps to carry out (as proposed or edited), or None to keep planning."""
    while True:
        answer = (await reader.read(PLAN_CHOICES, fresh=True)).strip().lower()
        if answer in ("y", "yes"):
            return plan.steps
        if answer in ("k", "n", "no"):
            print("Still planning: say what to change in the plan.", flush=True)
            return None
        if answer == "e":
            return await _edit(plan, reader)


async def _edit(plan: PlanProposed, reader: LineReader) -> list[str] | None:
    """The steps typed again, one a line (Enter alone keeps a step; `-` drops it; an empty
    line after the last adds none)."""
    print("Each step in turn: Enter keeps it, new text replaces it, '-' drops it; then "
          "add steps, an empty line to finish.", flush=True)
    steps: list[str] = []
    for number, step in enumerate(plan.steps, 1):
        answer = (await reader.read(f"  {number}. {step}\n     > ")).strip()
        if answer != "-":
            steps.append(answer or step)
    while added := (await reader.read(f"  {len(steps) + 1}. ")).strip():
        steps.append(added)
    return steps or None
