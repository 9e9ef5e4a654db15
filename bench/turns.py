"""The scripted 10-turn task against a zero-latency fake OpenAI-compatible server.

    .venv/bin/python bench/turns.py [--runs 5]

Each run starts `totem run --yes --format json` as a new process in a fresh project, served by
`totem.testing.fake_server` playing: list files, read, grep, read, edit, bash, bash, read,
write, answer. Printed (medians over the runs):

    totem --version          process start to exit
    start -> first request   process start to the first request reaching the server
    overhead per turn        from an answer's end to the next request (tools + loop + store)
    wall, CPU, peak RSS      of the whole run
    system + tools           the first request's system prompt and tool definitions, chars/4

with a baseline measured in the same run (`python -c pass`) and the ratio to it.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from totem.testing.fake_server import FakeOpenAIServer

HERE = Path(__file__).resolve().parent
# the totem to measure: this environment's, or another build's (bench/compare.sh)
TOTEM = Path(os.environ.get("TOTEM_BIN") or Path(sys.executable).parent / "totem")
# a cache of its own for each build measured (tool specs are cached per version and source)
CACHE = Path(tempfile.gettempdir()) / f"totem-bench-cache-{abs(hash(str(TOTEM))) % 10**8}"

APP = "def add(a, b):\n    return a + b\n\n\ndef one():\n    return 1\n" * 20
SCRIPT: list[dict[str, Any]] = [
    {"tool": "glob", "args": {"pattern": "**/*"}},
    {"tool": "read", "args": {"path": "src/app.py"}},
    {"tool": "grep", "args": {"pattern": "def one"}},
    {"tool": "read", "args": {"path": "README.md"}},
    {"tool": "edit", "args": {"path": "src/app.py", "old_string": "return a + b",
                              "new_string": "return b + a", "replace_all": True}},
    {"tool": "bash", "args": {"command": "ls src"}},
    {"tool": "bash", "args": {"command": "wc -l src/app.py"}},
    {"tool": "read", "args": {"path": "src/app.py", "offset": 1, "limit": 20}},
    {"tool": "write", "args": {"path": "NOTES.md", "content": "# Notes\n\nSwapped add.\n"}},
    {"text": "Done: swapped the operands of add and wrote NOTES.md."},
]


def make_project(base: Path) -> Path:
    root = base / "project"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text(APP)
    (root / "README.md").write_text("# Demo\n\nA small project for the benchmark.\n")
    (root / "AGENTS.md").write_text("Use tabs. Keep functions small.\n")
    return root


def timed(cmd: list[str], **kwargs: Any) -> tuple[float, float, float, int]:
    """Wall seconds, CPU seconds, peak RSS in MB, exit code of one process."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, **kwargs)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.stderr is not None:
        proc.stderr.close()
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, proc.returncode


def one_run() -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        root = make_project(base)
        server = FakeOpenAIServer(SCRIPT, models=["bench-model"])
        with server.in_thread() as url:
            config = base / "config.yaml"
            provider = f"fake: {{kind: openai, base_url: '{url}'}}"
            config.write_text(f"model: fake/bench-model\nproviders:\n  {provider}\n")
            env = dict(os.environ, TOTEM_CONFIG=str(config), XDG_DATA_HOME=str(base / "data"),
                       XDG_CONFIG_HOME=str(base / "cfg"), XDG_CACHE_HOME=str(CACHE))
            started = time.time()
            wall, cpu, rss, code = timed(
                [str(TOTEM), "run", "--yes", "--format", "json", "do the task"], cwd=root, env=env
            )
            chats = [r for r in server.requests if r.path.endswith("/chat/completions")]
        if code != 0 or len(chats) != len(SCRIPT):
            raise SystemExit(f"bench run failed: exit {code}, {len(chats)} requests")
        gaps = [chats[i].at - chats[i - 1].done for i in range(1, len(chats))]
        body = chats[0].body
        system = next(m["content"] for m in body["messages"] if m["role"] == "system")
        prompt_chars = len(system) + len(json.dumps(body.get("tools", [])))
        return {
            "first_request": chats[0].at - started,
            "per_turn": statistics.median(gaps),
            "wall": wall,
            "cpu": cpu,
            "rss": rss,
            "prompt_tokens": prompt_chars / 4,
            "system_tokens": len(system) / 4,
        }


def median_time(cmd: list[str], runs: int) -> float:
    return statistics.median(timed(cmd)[0] for _ in range(runs))


def compile_sources() -> None:
    """Bytecode as an installed package has it (pip compiles at install): without it, and
    with PYTHONDONTWRITEBYTECODE set, every start would compile totem from source."""
    where = "import totem, os; print(os.path.dirname(totem.__file__))"
    package = subprocess.run(
        [str(TOTEM.parent / "python"), "-c", where], capture_output=True, text=True, check=True
    ).stdout.strip()
    subprocess.run([str(TOTEM.parent / "python"), "-m", "compileall", "-q", package], check=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    compile_sources()
    baseline = median_time([sys.executable, "-c", "pass"], max(args.runs, 5))
    version = median_time([str(TOTEM), "--version"], max(args.runs, 5))
    one_run()  # warm-up: fills the build's caches, not counted
    results = [one_run() for _ in range(args.runs)]

    def med(key: str) -> float:
        return statistics.median(r[key] for r in results)

    rows = [
        ("python -c pass (baseline)", f"{baseline * 1000:.0f} ms", ""),
        ("totem --version", f"{version * 1000:.0f} ms", f"{version / baseline:.1f}x baseline"),
        ("start -> first request", f"{med('first_request'):.3f} s",
         f"{med('first_request') / baseline:.1f}x baseline"),
        ("overhead per turn", f"{med('per_turn') * 1000:.1f} ms", ""),
        ("10-turn task, wall", f"{med('wall'):.3f} s", f"{med('wall') / baseline:.1f}x baseline"),
        ("10-turn task, CPU", f"{med('cpu'):.3f} s", ""),
        ("peak RSS", f"{med('rss'):.0f} MB", ""),
        ("system + tool definitions", f"{med('prompt_tokens'):.0f} tokens (chars/4)",
         f"system alone {med('system_tokens'):.0f}"),
    ]
    label = os.environ.get("TOTEM_BENCH_LABEL", "")
    print(f"totem bench{' ' + label if label else ''}: scripted 10-turn task, "
          f"median of {args.runs} runs")
    for name, value, note in rows:
        print(f"  {name:28} {value:>22}  {note}")


if __name__ == "__main__":
    main()
