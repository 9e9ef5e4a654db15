"""Capture what a small model really answers to a tool-using request (for test fixtures).

    python scripts/capture-small-calls.py URL OUT_DIR [full|small] [seeds] [max_tokens]

Sends each micro-task of TASKS to the OpenAI-compatible server at URL (a llama-server
serving the 0.5B or 1.5B model) with totem's tool specs and system prompt, the small ones
or the full ones, and writes each raw answer (content and tool_calls) as a JSON file.
"""

from __future__ import annotations

import json
import sys
import urllib.request
from dataclasses import asdict
from pathlib import Path

from totem.prompt.builder import build_system_prompt
from totem.prompt.small import small_system_prompt
from totem.tools.lazy import specs_for
from totem.tools.registry import builtin_tools
from totem.tools.small import small_specs, small_tools

TASKS = {
    "port": "What port does the server listen on? Answer as ANSWER: <number>.",
    "delete": "Delete the file old_backup.py.",
    "hello": "Create a file hello.txt that contains the line: hello world",
    "typo": "Fix the typo 'recieve' in utils.py.",
    "numpy": "Add numpy to requirements.txt.",
    "rename": "Rename the function calc to compute in geometry.py.",
}


def request(kind: str, root: Path, task: str, seed: int, limit: int) -> dict[str, object]:
    tools = builtin_tools()
    specs = specs_for(tools)
    if kind == "small":
        kept = {t.name for t in small_tools(tools)}
        specs = small_specs([s for s in specs if s.name in kept])
        system = small_system_prompt(root)
    else:
        system = build_system_prompt(root)
    return {
        "model": "local",
        "messages": [{"role": "system", "content": system}, {"role": "user", "content": task}],
        "tools": [{"type": "function", "function": {k: v for k, v in asdict(s).items()}}
                  for s in specs],
        "max_tokens": limit,
        "temperature": 0.8,
        "seed": seed,
    }


def main() -> None:
    url, out = sys.argv[1], Path(sys.argv[2])
    kind = sys.argv[3] if len(sys.argv) > 3 else "small"
    seeds = int(sys.argv[4]) if len(sys.argv) > 4 else 1
    limit = int(sys.argv[5]) if len(sys.argv) > 5 else 300
    out.mkdir(parents=True, exist_ok=True)
    for seed in range(seeds):
        for name, task in TASKS.items():
            body = json.dumps(request(kind, Path.cwd(), task, seed, limit)).encode()
            req = urllib.request.Request(f"{url}/chat/completions", body,
                                         {"Content-Type": "application/json"})
            with urllib.request.urlopen(req, timeout=600) as resp:
                answer = json.load(resp)["choices"][0]["message"]
            record = {"task": task, "tools": kind, "seed": seed,
                      "content": answer.get("content") or "",
                      "tool_calls": answer.get("tool_calls") or []}
            path = out / f"{kind}-{name}-{seed}.json"
            path.write_text(json.dumps(record, indent=1) + "\n")
            print(path, repr(record["content"][:120]), len(record["tool_calls"]), flush=True)


if __name__ == "__main__":
    main()
