"""The pass table: tasks down, rounds across, per model, with totals, median wall and tokens."""

from __future__ import annotations

import statistics
from collections.abc import Iterable
from typing import Any

CELL = 30


def _cell(row: dict[str, Any]) -> str:
    mark = "PASS" if row["passed"] else ("T/O" if row["timed_out"] else "fail")
    if row.get("server_crashed"):
        mark = "CRSH"
    tokens = f"{row['prompt_tokens'] / 1000:.1f}k+{row['completion_tokens']}"
    return f"{mark:<4} {row['wall_s']:>4.0f}s {len(row['tools']):>2}t {tokens:>11}".ljust(CELL)


def table(rows: Iterable[dict[str, Any]]) -> str:
    """Plain-text tables, one per model: a cell is verdict, wall seconds, tool calls and
    tokens (prompt, in thousands, + completion)."""
    rows = list(rows)
    out: list[str] = []
    for model in sorted({r["model"] for r in rows}):
        mine = [r for r in rows if r["model"] == model]
        rounds = sorted({r["round"] for r in mine})
        tasks = list(dict.fromkeys(r["task"] for r in mine))
        width = max(len(t) for t in tasks)
        out.append(f"\n== {model} ==")
        out.append(" " * width + "  " + "  ".join(f"round {n}".ljust(CELL) for n in rounds))
        by_key = {(r["task"], r["round"]): r for r in mine}
        for task in tasks:
            cells = [_cell(by_key[task, n]) if (task, n) in by_key else "-".ljust(CELL)
                     for n in rounds]
            out.append(f"{task:<{width}}  " + "  ".join(cells))
        for n in rounds:
            ran = [r for r in mine if r["round"] == n]
            passed = sum(r["passed"] for r in ran)
            wall = statistics.median(r["wall_s"] for r in ran)
            prompt = sum(r["prompt_tokens"] for r in ran)
            completion = sum(r["completion_tokens"] for r in ran)
            out.append(
                f"round {n}: {passed}/{len(ran)} passed, median wall {wall:.0f} s, "
                f"tokens {prompt} prompt + {completion} completion, "
                f"{sum(r['timed_out'] for r in ran)} timed out, "
                f"{sum(bool(r.get('server_crashed')) for r in ran)} server crashes"
            )
    return "\n".join(out)


def main() -> None:
    """Prints the table of one or more results files (say, of runners that shared the tasks)."""
    import argparse
    import json
    from pathlib import Path

    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("results", nargs="+", type=Path)
    seen: dict[tuple[str, int, str], dict[str, Any]] = {}
    for path in parser.parse_args().results:
        for row in json.loads(path.read_text())["results"]:
            seen.setdefault((row["model"], row["round"], row["task"]), row)
    print(table(sorted(seen.values(), key=lambda r: (r["model"], r["round"], r["task"]))))


if __name__ == "__main__":
    main()
