"""The aimock simulator (npm `@copilotkit/aimock`, installed under tests/node) for tests.

    FIXTURES = [{"match": {"userMessage": "hello"}, "response": {"content": "Hi!"}}]
    aimock = aimock_fixture(FIXTURES)          # a module-scoped pytest fixture

    def test_hello(aimock: Aimock) -> None:
        ... OpenAIChatProvider("mock", aimock.url) ...
        aimock.journal()                       # what it received (GET /v1/_requests)

`running_aimock(fixtures)` is the same as a context manager. When node or the package is
missing the test is skipped, unless TOTEM_REQUIRE_SERVERS=1 makes that a failure.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
import urllib.request
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import pytest

from tests.support.ports import free_port, http_ok
from tests.support.processes import running
from tests.support.required import unavailable

__all__ = ["AIMOCK_DIR", "Aimock", "aimock_fixture", "fixture", "running_aimock"]

AIMOCK_DIR = Path(__file__).resolve().parents[1] / "node/node_modules/@copilotkit/aimock"


@dataclass(frozen=True, slots=True)
class Aimock:
    root: str  # http://127.0.0.1:PORT
    url: str  # the OpenAI base URL: root + /v1

    def journal(self) -> list[dict[str, Any]]:
        """Every request aimock recorded, oldest first."""
        with urllib.request.urlopen(f"{self.root}/v1/_requests", timeout=5) as response:
            entries: list[dict[str, Any]] = json.load(response)
        return entries

    def clear_journal(self) -> None:
        request = urllib.request.Request(f"{self.root}/v1/_requests", method="DELETE")
        with urllib.request.urlopen(request, timeout=5):
            pass


@contextlib.contextmanager
def running_aimock(
    fixtures: Sequence[dict[str, Any]],
    *,
    args: Sequence[str] = (),
    env: dict[str, str] | None = None,
    timeout: float = 20.0,
) -> Iterator[Aimock]:
    """Start aimock on a free port with `fixtures` (extra CLI `args`, `env` added to the
    environment, e.g. AIMOCK_API_KEYS); stop it on exit."""
    node = shutil.which("node")
    if node is None:
        unavailable("aimock: node is not on PATH")
    cli = AIMOCK_DIR / "dist" / "cli.js"
    if not cli.is_file():
        unavailable(f"aimock: {cli} is missing (run npm ci in tests/node)")
    with tempfile.TemporaryDirectory(prefix="totem-aimock-") as tmp:
        path = Path(tmp) / "fixtures.json"
        path.write_text(json.dumps({"fixtures": list(fixtures)}), encoding="utf-8")
        log_path = Path(tmp) / "aimock.log"
        port = free_port()
        root = f"http://127.0.0.1:{port}"
        command = [node, str(cli), "-p", str(port), "-h", "127.0.0.1", "-f", str(path),
                   "--log-level", "warn", *args]
        with running(command, log=log_path, ready=lambda: http_ok(f"{root}/health"),
                     what="aimock", timeout=timeout, env={**os.environ, **(env or {})}):
            yield Aimock(root=root, url=f"{root}/v1")


def aimock_fixture(
    fixtures: Sequence[dict[str, Any]],
    *,
    args: Sequence[str] = (),
    env: dict[str, str] | None = None,
    name: str = "aimock",
    scope: Literal["session", "package", "module", "class", "function"] = "module",
) -> Any:
    """A pytest fixture (module-scoped by default) that runs aimock with `fixtures`."""

    def start() -> Iterator[Aimock]:
        with running_aimock(fixtures, args=args, env=env) as server:
            yield server

    return pytest.fixture(scope=scope, name=name)(start)


def fixture(message: str, response: dict[str, Any], seq: int | None = None,
            **extra: Any) -> dict[str, Any]:
    """An aimock fixture: `response` to the user message `message` (the `seq`-th time it is
    asked, when given); `match=` adds match conditions, other `extra` keys go beside them."""
    match: dict[str, Any] = {"userMessage": message}
    if seq is not None:
        match["sequenceIndex"] = seq
    match.update(extra.pop("match", {}))
    return {"match": match, "response": response, **extra}
