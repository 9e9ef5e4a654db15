"""Prints a transcript (TASK.jsonl) compactly: the model's text, each tool call and its result.

    python bench/smallmodel/show.py OUT/transcripts/1.5b/round1/fix_typo.jsonl [--width 600]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def lines(log: Path, *, width: int) -> list[str]:
    """One line per text block, tool call, tool result, notice and the end of the run."""
    out: list[str] = []
    text: list[str] = []
    for raw in log.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            event = json.loads(raw)
        except json.JSONDecodeError:
            continue
        kind = event.get("type")
        if kind == "text":
            text.append(event["text"])
            continue
        if text:
            out.append("TEXT  " + "".join(text).strip()[:width])
            text = []
        if kind == "tool_start":
            shown = json.dumps(event["input"], ensure_ascii=False)
            out.append(f"CALL  {event['name']} {shown[:width]}" + (" (from text)"
                                                                  if event["from_text"] else ""))
        elif kind == "tool_end":
            mark = "ERROR " if event["is_error"] else "RESULT"
            out.append(f"{mark} {event['output'][:width]!r}")
        elif kind == "notice":
            out.append(f"NOTE  {event['text'][:width]}")
        elif kind == "run_finished":
            out.append(f"END   {event['reason']} {event['detail']} after {event['steps']} steps")
    if text:
        out.append("TEXT  " + "".join(text).strip()[:width])
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("logs", nargs="+", type=Path)
    parser.add_argument("--width", type=int, default=600)
    args = parser.parse_args()
    for log in args.logs:
        print(f"== {log}")
        print("\n".join(lines(log, width=args.width)))


if __name__ == "__main__":
    main()
