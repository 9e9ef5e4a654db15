"""`totem serve` as a user starts it (a real process in a tmp project), plain HTTP helpers,
and a real headless Chromium driven by Playwright.

    with Served(project) as server:      # python -m totem.cli.serve --port 0
        server.get("/api/sessions")      # with the token (the cookie the page gets)
        events = server.events(sid, after=0, until=...)   # the event stream, parsed

`browser()` gives Debian's Chromium (/usr/bin/chromium) through the Python `playwright`
package; without them the browser tests are skipped, unless TOTEM_REQUIRE_WEB=1 makes that
a failure (scripts/web-test-deps.sh installs both).
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from tests.support.project_files import write_file
from tests.support.required import unavailable

CHROMIUM = os.environ.get("TOTEM_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]


def project(tmp: Path, config: str, *, files: dict[str, str] | None = None) -> Path:
    """A project folder with `.totem/config.yaml` = `config` and the given files."""
    root = tmp / "project"
    write_file(root / ".totem" / "config.yaml", config)
    for name, text in (files or {}).items():
        write_file(root / name, text)
    return root


def scripted(tmp: Path, turns: list[dict[str, Any]], *, extra: str = "") -> str:
    """A configuration whose model `scripted/demo` plays `turns`."""
    script = tmp / "script.json"
    script.write_text(json.dumps(turns), encoding="utf-8")
    return (f"model: scripted/demo\nproviders:\n  scripted: {{kind: scripted, options: "
            f"{{script: '{script}'}}}}\n{extra}")


def openai_config(url: str, model: str = "m", *, extra: str = "") -> str:
    return f"model: mock/{model}\nproviders:\n  mock: {{kind: openai, base_url: '{url}'}}\n{extra}"


@dataclass
class Served:
    root: Path
    env_extra: dict[str, str] = field(default_factory=dict)
    url: str = ""
    token: str = ""
    host: str = ""
    port: int = 0
    process: subprocess.Popen[str] | None = None
    output: list[str] = field(default_factory=list)
    reader: threading.Thread = field(default_factory=threading.Thread)
    trusted: bool = True  # the project's own .totem config counts (`totem trust` before)
    args: list[str] = field(default_factory=list)  # more arguments of `totem serve`

    @property
    def home(self) -> Path:
        return self.root.parent

    def __enter__(self) -> Served:
        env = dict(os.environ, XDG_DATA_HOME=str(self.home / "data"),
                   XDG_CONFIG_HOME=str(self.home / "config"),
                   XDG_CACHE_HOME=str(self.home / "cache"), **self.env_extra)
        env.pop("TOTEM_CONFIG", None)
        if self.trusted:
            subprocess.run([sys.executable, "-m", "totem", "trust"], cwd=self.root, env=env,
                           check=True, capture_output=True, timeout=60)
        self.process = subprocess.Popen(
            [sys.executable, "-m", "totem.cli.serve", "--port", "0", *self.args], cwd=self.root,
            env=env,
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, stdin=subprocess.DEVNULL,
        )
        ready = threading.Event()

        def read() -> None:
            assert self.process is not None and self.process.stdout is not None
            for line in self.process.stdout:
                self.output.append(line)
                if "?token=" in line and not self.url:
                    self.url = line.split("open ", 1)[1].strip()
                    ready.set()
            ready.set()

        self.reader = threading.Thread(target=read, daemon=True)
        self.reader.start()
        if not ready.wait(30) or not self.url:
            self.__exit__(None, None, None)
            raise AssertionError("totem serve did not start:\n" + "".join(self.output))
        parts = urlsplit(self.url)
        self.host, self.port = parts.hostname or "", parts.port or 0
        self.token = parts.query.removeprefix("token=")
        return self

    def __exit__(self, *exc: object) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if self.process is not None and self.process.stdout is not None:
            self.reader.join(10)
            self.process.stdout.close()

    @property
    def base(self) -> str:
        return f"http://{self.host}:{self.port}"

    def request(
        self, method: str, path: str, body: Any = None, *, headers: dict[str, str] | None = None,
        token: bool = True,
    ) -> tuple[int, dict[str, str], bytes]:
        conn = http.client.HTTPConnection(self.host, self.port, timeout=30)
        sent = dict(headers or {})
        if token:
            sent.setdefault("Authorization", f"Bearer {self.token}")
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            sent["Content-Type"] = "application/json"
        try:
            conn.request(method, path, body=data, headers=sent)
            response = conn.getresponse()
            return response.status, {k.lower(): v for k, v in response.getheaders()}, \
                response.read()
        finally:
            conn.close()

    def json(self, method: str, path: str, body: Any = None) -> Any:
        status, _, raw = self.request(method, path, body)
        assert status < 300, f"{method} {path}: {status} {raw[:300]!r}"
        return json.loads(raw)

    def new_session(self) -> str:
        return str(self.json("POST", "/api/sessions", {})["session"]["id"])

    def events(
        self, session_id: str, *, after: int | None = None, last_event_id: int | None = None,
        stop: Callable[[list[tuple[int | None, dict[str, Any]]]], bool], timeout: float = 30,
    ) -> list[tuple[int | None, dict[str, Any]]]:
        """Read the event stream until `stop(events)` is true; the connection is then cut."""
        conn = http.client.HTTPConnection(self.host, self.port, timeout=timeout)
        headers = {"Authorization": f"Bearer {self.token}"}
        if last_event_id is not None:
            headers["Last-Event-ID"] = str(last_event_id)
        query = f"?after={after}" if after is not None else ""
        conn.request("GET", f"/api/sessions/{session_id}/events{query}", headers=headers)
        response = conn.getresponse()
        assert response.status == 200, response.read()
        found: list[tuple[int | None, dict[str, Any]]] = []
        event_id: int | None = None
        deadline = time.monotonic() + timeout
        try:
            while not stop(found):
                if time.monotonic() > deadline:
                    raise AssertionError(f"the stream did not give what was waited for: {found}")
                line = response.fp.readline().decode()
                if not line:
                    raise AssertionError(f"the stream ended early after {found}")
                if line.startswith("id: "):
                    event_id = int(line[4:])
                elif line.startswith("data: "):
                    found.append((event_id, json.loads(line[6:])))
                    event_id = None
        finally:
            with contextlib.suppress(Exception):
                response.close()
            conn.close()
        return found


def finished(events: list[tuple[int | None, dict[str, Any]]]) -> bool:
    return any(e["type"] == "run_finished" for _, e in events)


@contextlib.contextmanager
def browser() -> Iterator[Any]:
    """A headless Chromium (Debian's) through Playwright: yields the Browser."""
    if not (os.path.exists(CHROMIUM) or shutil.which(CHROMIUM)):
        unavailable(f"browser: {CHROMIUM} is missing (run scripts/web-test-deps.sh)",
                    required_by="TOTEM_REQUIRE_WEB")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        unavailable("browser: the Python package playwright is not installed (run "
                    "scripts/web-test-deps.sh)", required_by="TOTEM_REQUIRE_WEB")
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()

