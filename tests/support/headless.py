"""`totem` as a user runs it in a shell: a project folder, the package's fake OpenAI server as
the configured model, and the commands as real processes (`totem run`, `totem undo`...).

    project = Project(tmp_path); with project.serve(turns): project.totem("run", "--yes", "hi")
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from totem.store.sqlite import SqliteStore
from totem.testing.fake_server import FakeOpenAIServer

__all__ = ["Project", "json_lines"]

TOTEM = [sys.executable, "-m", "totem"]


class Project:
    """A project folder with its own data, config and cache directories."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.root = tmp / "project"
        self.root.mkdir()
        self.server: FakeOpenAIServer | None = None
        self.config_extra = ""
        self.env = dict(
            os.environ,
            XDG_DATA_HOME=str(tmp / "data"), XDG_CONFIG_HOME=str(tmp / "config"),
            XDG_CACHE_HOME=str(tmp / "cache"), TOTEM_CONFIG=str(tmp / "totem.yaml"),
        )

    def configure(self, url: str) -> None:
        (self.tmp / "totem.yaml").write_text(
            f"model: fake/m\nproviders:\n  fake: {{kind: openai, base_url: '{url}'}}\n"
            f"knowledge: {{totaljs: never, forge: false}}\n{self.config_extra}"
        )

    @contextmanager
    def serve(self, turns: list[dict[str, Any]],
              models: tuple[str, ...] = ("m",)) -> Iterator[FakeOpenAIServer]:
        self.server = FakeOpenAIServer(turns, models=models)
        with self.server.in_thread() as url:
            self.configure(url)
            yield self.server

    def totem(self, *args: str, stdin: str | None = None,
              timeout: float = 60) -> subprocess.CompletedProcess[str]:
        """`totem ARGS` in the project; stdin is empty (not a terminal) unless given."""
        return subprocess.run(
            [*TOTEM, *args], cwd=self.root, env=self.env, text=True, capture_output=True,
            timeout=timeout, input=stdin if stdin is not None else "",
        )

    def chats(self) -> list[dict[str, Any]]:
        """The bodies of the chat requests the fake server received."""
        assert self.server is not None
        return [r.body for r in self.server.requests if r.path.endswith("/chat/completions")]

    def store(self) -> SqliteStore:
        return SqliteStore(self.tmp / "data" / "totem" / "totem.db")


def json_lines(out: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in out.splitlines() if line.strip()]
