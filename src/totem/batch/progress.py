"""What a batch shows while it runs (one line: done, failed, running, cost so far) and when it
ends (a table of every task). On a terminal the line is redrawn in place; otherwise each
finished task adds a line, which reads well in a CI log."""

from __future__ import annotations

from typing import Any, TextIO

__all__ = ["Progress", "summary_table"]


def _cost(value: float) -> str:
    return f"${value:.4f}"


class Progress:
    def __init__(self, *, total: int, skipped: int, stream: TextIO) -> None:
        self.total = total
        self.done = skipped
        self.failed = 0
        self.running = 0
        self.cost = 0.0
        self.stream = stream
        self.live = stream.isatty()

    def started(self) -> None:
        self.running += 1
        if self.live:
            self._draw("")

    def finished(self, result: dict[str, Any]) -> None:
        self.running = max(0, self.running - 1)
        self.done += 1
        self.failed += result.get("status") != "ok"
        self.cost += result.get("cost") or 0.0
        wall = result.get("wall_s", 0)
        self._draw(f"{result['id']}: {result.get('exit_reason')} in {wall:.1f} s")

    def line(self) -> str:
        width = 20
        filled = width * self.done // max(self.total, 1)
        return (f"[{'#' * filled}{'.' * (width - filled)}] {self.done}/{self.total} done, "
                f"{self.failed} failed, {self.running} running, {_cost(self.cost)}")

    def _draw(self, last: str) -> None:
        if self.live:
            self.stream.write(f"\r\033[K{self.line()}  {last}")
        else:
            self.stream.write(f"{self.line()}  {last}\n")
        self.stream.flush()

    def close(self) -> None:
        if self.live:
            self.stream.write("\n")
            self.stream.flush()


def summary_table(results: list[dict[str, Any]]) -> str:
    """One row per task: id, status, exit reason, files changed, steps, wall time, cost."""
    header = ("id", "status", "exit", "files", "steps", "wall s", "cost")
    rows = [header] + [
        (str(r["id"]), str(r.get("status")), str(r.get("exit_reason")),
         str(r.get("files_changed", 0)), str(r.get("steps", 0)), f"{r.get('wall_s', 0):.1f}",
         "-" if r.get("cost") is None else _cost(r["cost"]))
        for r in results
    ]
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
             for row in rows]
    ok = sum(1 for r in results if r.get("status") == "ok")
    total = sum(r.get("cost") or 0.0 for r in results)
    lines.append(f"{ok}/{len(results)} ok, {len(results) - ok} failed, cost {_cost(total)}")
    return "\n".join(lines)
