"""The results file of a batch: JSON Lines, one result a line, appended (and flushed to disk)
as each task finishes, so a batch stopped half way keeps what it did. A rerun with the same
file skips the tasks that ended "ok"; failed ones run again (their later line wins).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

__all__ = ["ResultLog"]


class ResultLog:
    def __init__(self, path: Path) -> None:
        self.path = path

    def latest(self) -> dict[str, dict[str, Any]]:
        """The last result of each task id in the file (a line cut by a crash is skipped)."""
        found: dict[str, dict[str, Any]] = {}
        if not self.path.is_file():
            return found
        for line in self.path.read_text(encoding="utf-8").splitlines():
            try:
                result = json.loads(line)
            except ValueError:
                continue
            if isinstance(result, dict) and isinstance(result.get("id"), str):
                found[result["id"]] = result
        return found

    def finished_ids(self) -> set[str]:
        return {task_id for task_id, r in self.latest().items() if r.get("status") == "ok"}

    def append(self, result: dict[str, Any]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        line = json.dumps(result, ensure_ascii=False) + "\n"
        with open(self.path, "a", encoding="utf-8") as out:
            if out.tell() > 0 and not self._ends_with_newline():
                out.write("\n")  # a line cut by a crash stays on its own
            out.write(line)
            out.flush()
            os.fsync(out.fileno())

    def _ends_with_newline(self) -> bool:
        with open(self.path, "rb") as existing:
            existing.seek(-1, os.SEEK_END)
            return existing.read(1) == b"\n"
