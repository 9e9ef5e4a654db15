"""Change one key in a YAML file without breaking it."""

from pathlib import Path

import yaml

from bench.smallmodel.checks import read, unchanged, write

STEPS = 2
ORIGINAL = (
    "# service settings\nserver:\n  host: 127.0.0.1\n  port: 8080\n  workers: 4\n"
    "logging:\n  level: info\n  workers: 1\n"
)
FILES = {"config.yaml": ORIGINAL, "serve.py": "print('serving')\n"}
PROMPTS = {
    "direct": "Change the number of server workers to 12 in config.yaml.",
    "terse": "config.yaml server workers 12",
    "indirect": (
        "The logging workers in config.yaml are fine. The server runs with 4 workers, and it "
        "should be 12."
    ),
    "other": "Setze in config.yaml die Anzahl der Server-Worker auf 12.",
}
EXPECTED = {
    "server": {"host": "127.0.0.1", "port": 8080, "workers": 12},
    "logging": {"level": "info", "workers": 1},
}


def check(root: Path, answer: str) -> str | None:
    if (why := unchanged(root, FILES, skip=("config.yaml",))) is not None:
        return why
    text = read(root, "config.yaml")
    if text is None:
        return "config.yaml missing"
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        return f"config.yaml no longer parses: {exc}"
    return None if data == EXPECTED else f"config.yaml holds {data}"


def solve(root: Path) -> str:
    write(root, "config.yaml", ORIGINAL.replace("workers: 4", "workers: 12"))
    return "Done."
