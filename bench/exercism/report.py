"""The per-exercise table and the per-agent summary, from the results' rows."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from typing import Any

Row = dict[str, Any]  # ExerciseResult.to_dict()


def line(row: Row) -> str:
    """The line printed as an exercise ends for one agent."""
    tries = row["tries"]
    how = "; ".join(
        f"try {t['try_no']}: {'pass' if t['passed'] else 'fail'}"
        + (" (agent killed at the limit)" if t["timed_out"] else "")
        + (f" (edited {', '.join(t['tests_edited'])})" if t["tests_edited"] else "")
        for t in tries)
    return (f"[{row['model']}] {row['exercise']} {row['agent']}: pass@1 {_mark(row['pass1'])}"
            f" pass@2 {_mark(row['pass2'])} {row['wall_s']:.0f}s"
            f" tokens {_tokens(row)} ({how})")


def table(rows: Sequence[Row]) -> str:
    """Every exercise and agent, then each agent's totals, per model."""
    out: list[str] = []
    for model in dict.fromkeys(r["model"] for r in rows):
        mine = [r for r in rows if r["model"] == model]
        out += [f"## model {model}", "",
                "| exercise | agent | pass@1 | pass@2 | wall s | tokens in/out |",
                "| --- | --- | --- | --- | --- | --- |"]
        out += [f"| {r['exercise']} | {r['agent']} | {_mark(r['pass1'])} | {_mark(r['pass2'])}"
                f" | {r['wall_s']:.0f} | {_tokens(r)} |" for r in mine]
        out += ["", "| agent | exercises | pass@1 | pass@2 | median wall s | tokens in | "
                "tokens out |", "| --- | --- | --- | --- | --- | --- | --- |"]
        for agent in dict.fromkeys(r["agent"] for r in mine):
            out.append(summary(model, agent, [r for r in mine if r["agent"] == agent]))
        out.append("")
    return "\n".join(out)


def summary(model: str, agent: str, rows: Sequence[Row]) -> str:
    """One agent's totals: passes (count and %), median wall, tokens summed."""
    n = len(rows)
    first = sum(r["pass1"] for r in rows)
    second = sum(r["pass2"] for r in rows)
    wall = statistics.median(r["wall_s"] for r in rows) if rows else 0.0
    return (f"| {agent} | {n} | {first} ({_pct(first, n)}) | {second} ({_pct(second, n)}) | "
            f"{wall:.0f} | {_total(rows, 'tokens_in')} | {_total(rows, 'tokens_out')} |")


def _mark(passed: bool) -> str:
    return "PASS" if passed else "fail"


def _pct(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f} %" if whole else "-"


def _tokens(row: Row) -> str:
    def show(value: int | None) -> str:
        return "?" if value is None else str(value)

    return f"{show(row['tokens_in'])}/{show(row['tokens_out'])}"


def _total(rows: Sequence[Row], key: str) -> str:
    known = [r[key] for r in rows if r[key] is not None]
    unknown = len(rows) - len(known)
    return f"{sum(known)}" + (f" (+{unknown} unknown)" if unknown else "")
