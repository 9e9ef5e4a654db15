"""The pass tables: per model and wording, tasks down and rounds across, with totals, median
wall and tokens; then, where more than one wording ran, the wordings side by side with a
"same pass rate in every wording?" column."""

from __future__ import annotations

import statistics
from collections.abc import Iterable
from typing import Any

CELL = 30
KNOWN_ORDER = ("direct", "terse", "indirect", "other")


def wording_of(row: dict[str, Any]) -> str:
    """The row's wording; rows saved before there were wordings are the direct one."""
    return str(row.get("wording", "direct"))


def _ordered(wordings: set[str]) -> list[str]:
    known = [w for w in KNOWN_ORDER if w in wordings]
    return known + sorted(wordings - set(known))


def _mark(row: dict[str, Any]) -> str:
    if row.get("server_crashed"):
        return "CRSH"
    return "PASS" if row["passed"] else ("T/O" if row["timed_out"] else "fail")


def _cell(row: dict[str, Any]) -> str:
    tokens = f"{row['prompt_tokens'] / 1000:.1f}k+{row['completion_tokens']}"
    mark = _mark(row)
    return f"{mark:<4} {row['wall_s']:>4.0f}s {len(row['tools']):>2}t {tokens:>11}".ljust(CELL)


def _rounds_table(title: str, mine: list[dict[str, Any]]) -> list[str]:
    rounds = sorted({r["round"] for r in mine})
    tasks = list(dict.fromkeys(r["task"] for r in mine))
    width = max(len(t) for t in tasks)
    out = [f"\n== {title} ==",
           " " * width + "  " + "  ".join(f"round {n}".ljust(CELL) for n in rounds)]
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
    return out


def same_rate(rows: list[dict[str, Any]]) -> bool | None:
    """Whether one task's runs pass at the same rate in every wording it ran in (None when it
    ran in only one)."""
    rates: dict[str, tuple[int, int]] = {}
    for row in rows:
        passed, runs = rates.get(wording_of(row), (0, 0))
        rates[wording_of(row)] = (passed + row["passed"], runs + 1)
    if len(rates) < 2:
        return None
    return len({passed / runs for passed, runs in rates.values()}) == 1


def _side_by_side(model: str, mine: list[dict[str, Any]], wordings: list[str]) -> list[str]:
    """Tasks down, wordings across: one letter per round (P pass, f fail, T timed out, C the
    server crashed, . not run), and whether the pass rate is the same in every wording."""
    rounds = sorted({r["round"] for r in mine})
    tasks = list(dict.fromkeys(r["task"] for r in mine))
    width = max(len(t) for t in [*tasks, "passed, round 00"])
    columns = [max(len(w), len(rounds)) for w in wordings]
    by_key = {(r["task"], wording_of(r), r["round"]): r for r in mine}
    header = "  ".join(w.ljust(c) for w, c in zip(wordings, columns, strict=True))
    out = [f"\n== {model}: by wording (rounds {', '.join(map(str, rounds))}) ==",
           " " * width + "  " + header + "  same"]
    same_count = compared = 0
    for task in tasks:
        cells = []
        for wording, column in zip(wordings, columns, strict=True):
            letters = "".join(_mark(by_key[task, wording, n])[0]
                              if (task, wording, n) in by_key else "." for n in rounds)
            cells.append((letters if letters.strip(".") else "-").ljust(column))
        same = same_rate([r for r in mine if r["task"] == task])
        same_count += same is True
        compared += same is not None
        shown = "-" if same is None else ("yes" if same else "no")
        out.append(f"{task:<{width}}  " + "  ".join(cells) + f"  {shown}")
    for n in rounds:
        counts = []
        for wording, column in zip(wordings, columns, strict=True):
            ran = [r for r in mine if wording_of(r) == wording and r["round"] == n]
            counts.append(f"{sum(r['passed'] for r in ran)}/{len(ran)}".ljust(column))
        out.append(f"{f'passed, round {n}':<{width}}  " + "  ".join(counts))
    out.append(f"same pass rate in every wording: {same_count}/{compared} tasks")
    return out


def table(rows: Iterable[dict[str, Any]]) -> str:
    """Plain-text tables, one per model and wording: a cell is verdict, wall seconds, tool
    calls and tokens (prompt, in thousands, + completion); then the wordings side by side."""
    rows = list(rows)
    out: list[str] = []
    for model in sorted({r["model"] for r in rows}):
        mine = [r for r in rows if r["model"] == model]
        wordings = _ordered({wording_of(r) for r in mine})
        for wording in wordings:
            out += _rounds_table(f"{model}, {wording}",
                                 [r for r in mine if wording_of(r) == wording])
        if len(wordings) > 1:
            out += _side_by_side(model, mine, wordings)
    return "\n".join(out)


def main() -> None:
    """Prints the tables of one or more results files (say, of runners that shared the tasks)."""
    import argparse
    import json
    from pathlib import Path

    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("results", nargs="+", type=Path)
    seen: dict[tuple[str, int, str, str], dict[str, Any]] = {}
    for path in parser.parse_args().results:
        for row in json.loads(path.read_text())["results"]:
            seen.setdefault((row["model"], row["round"], row["task"], wording_of(row)), row)
    print(table(sorted(seen.values(),
                       key=lambda r: (r["model"], r["round"], r["task"], wording_of(r)))))


if __name__ == "__main__":
    main()
