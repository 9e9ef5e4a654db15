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
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, NoReturn

import pytest

__all__ = ["AIMOCK_DIR", "Aimock", "aimock_fixture", "running_aimock"]

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


def _unavailable(reason: str) -> NoReturn:
    if os.environ.get("TOTEM_REQUIRE_SERVERS") == "1":
        pytest.fail(f"aimock is required (TOTEM_REQUIRE_SERVERS=1) but {reason}")
    pytest.skip(f"aimock unavailable: {reason}")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _ready(root: str) -> bool:
    try:
        with urllib.request.urlopen(f"{root}/health", timeout=1) as response:
            return bool(response.status == 200)
    except (urllib.error.URLError, OSError):
        return False


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
        _unavailable("node is not on PATH")
    cli = AIMOCK_DIR / "dist" / "cli.js"
    if not cli.is_file():
        _unavailable(f"{cli} is missing (run npm ci in tests/node)")
    with tempfile.TemporaryDirectory(prefix="totem-aimock-") as tmp:
        path = Path(tmp) / "fixtures.json"
        path.write_text(json.dumps({"fixtures": list(fixtures)}), encoding="utf-8")
        log_path = Path(tmp) / "aimock.log"
        port = _free_port()
        root = f"http://127.0.0.1:{port}"
        command = [node, str(cli), "-p", str(port), "-h", "127.0.0.1", "-f", str(path),
                   "--log-level", "warn", *args]
        with open(log_path, "wb") as log:
            process = subprocess.Popen(
                command, stdout=log, stderr=subprocess.STDOUT, env={**os.environ, **(env or {})}
            )
        try:
            deadline = time.monotonic() + timeout
            while not _ready(root):
                if process.poll() is not None or time.monotonic() > deadline:
                    output = log_path.read_text(encoding="utf-8", errors="replace")[-2000:]
                    pytest.fail(f"aimock did not start (exit {process.poll()}):\n{output}")
                time.sleep(0.05)
            yield Aimock(root=root, url=f"{root}/v1")
        finally:
            process.terminate()
            try:
                process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


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
