"""Add a function to an existing module, keeping the others working."""

from pathlib import Path

from bench.smallmodel.checks import read, run_python, write

STEPS = 2
ORIGINAL = (
    "def double(x):\n    return 2 * x\n\n\n"
    "def mean(values):\n    return sum(values) / len(values)\n"
)
FILES = {"mathx.py": ORIGINAL}
PROMPTS = {
    "direct": (
        "Add a function clamp(value, low, high) to mathx.py that returns value limited to the "
        "range low..high (low if it is below, high if it is above)."
    ),
    "terse": "need clamp(value, low, high) in mathx.py, returns value kept between low and high",
    "indirect": (
        "mathx.py has double and mean but nothing that limits a number to a range. There should "
        "be a clamp(value, low, high) in it: low when value is below low, high when it is above "
        "high, else value itself. double and mean stay as they are."
    ),
    "other": (
        "Füge in mathx.py eine Funktion clamp(value, low, high) hinzu, die value auf den "
        "Bereich low..high begrenzt (low, wenn value darunter liegt, high, wenn darüber)."
    ),
}
PROBE = (
    "from mathx import clamp, double, mean; "
    "assert clamp(5, 1, 10) == 5 and clamp(-3, 0, 9) == 0 and clamp(42, 0, 9) == 9; "
    "assert clamp(2.5, 1, 2) == 2 and double(4) == 8 and mean([1, 2, 3]) == 2"
)


def check(root: Path, answer: str) -> str | None:
    if read(root, "mathx.py") is None:
        return "mathx.py missing"
    done = run_python(root, "-c", PROBE)
    return None if done.returncode == 0 else "probe failed: " + done.stderr[-200:]


def solve(root: Path) -> str:
    clamp = "\n\ndef clamp(value, low, high):\n    return max(low, min(value, high))\n"
    write(root, "mathx.py", ORIGINAL + clamp)
    return "Added clamp."
