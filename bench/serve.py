"""`totem serve` under load: sessions streaming from the scripted provider while the page loads.

    .venv/bin/python bench/serve.py [--sessions 20] [--seconds 10] [--loads 15] [--browser]

Starts `totem serve` as a process in a fresh project whose model is the scripted provider
(`kind: scripted`): each run is ten steps of text + a glob call, then an answer. Then:

    baseline page load     the page with nothing running: `/`, its scripts and styles, and the
                           API calls it makes on load (info, sessions, models), round by round
                           as a browser asks for them (with --browser: Chromium itself, until
                           the page has drawn)
    under load             the same while N sessions run back to back, each watched by its
                           own event stream (the page's way)
    events/s               events delivered on those streams per second
    runs                   runs finished during the window

Printed: medians (and the slowest) of page loads, events/s, runs. The server is loopback-only,
the loops are bounded in time, and everything stops by itself. Figures, before and after the
runs took turns with the requests: bench/serve.md.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

# What a browser asks for on load, round by round (each round in parallel, on up to six
# connections): the page, what it links, the modules they import, then the API calls.
ROUNDS = [["/"], ["/static/style.css", "/static/app.js", "/static/icon.svg"],
          ["/static/chat.js", "/static/panels.js", "/static/util.js", "/static/drawer.js",
           "/static/sessions.js"],
          ["/static/turn.js", "/static/markdown.js"],
          ["/api/info", "/api/sessions", "/api/models"]]
STEPS = 10


def script(runs: int) -> list[dict[str, Any]]:
    turns: list[dict[str, Any]] = []
    for _ in range(runs):
        for step in range(STEPS):
            turns.append({"text": f"Step {step}: looking at the files of group {step}. " * 3,
                          "tool": "glob", "args": {"pattern": f"f{step}*.txt"}})
        turns.append({"reasoning": "All groups seen.", "text": "Done: " + "all files. " * 40})
    return turns


class Server:
    def __init__(self, root: Path) -> None:
        env = dict(os.environ, XDG_DATA_HOME=str(root.parent / "data"),
                   XDG_CONFIG_HOME=str(root.parent / "config"))
        env.pop("TOTEM_CONFIG", None)
        subprocess.run([sys.executable, "-m", "totem", "trust"], cwd=root, env=env, check=True,
                       capture_output=True)  # the project's own provider counts
        self.process = subprocess.Popen(
            [sys.executable, "-m", "totem.cli.serve", "--port", "0"], cwd=root, env=env,
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        assert self.process.stdout is not None
        for line in self.process.stdout:
            if "?token=" in line:
                self.url = line.split("open ", 1)[1].strip()
                break
        else:
            raise SystemExit("totem serve did not start")
        parts = urlsplit(self.url)
        self.host, self.port = parts.hostname or "127.0.0.1", parts.port or 0
        self.token = parts.query.removeprefix("token=")
        self.headers = {"Authorization": f"Bearer {self.token}"}

    def call(self, method: str, path: str, body: Any = None) -> Any:
        conn = http.client.HTTPConnection(self.host, self.port, timeout=30)
        try:
            data = json.dumps(body).encode() if body is not None else None
            conn.request(method, path, body=data,
                         headers={**self.headers, "Content-Type": "application/json"})
            return json.loads(conn.getresponse().read() or b"null")
        finally:
            conn.close()

    def stop(self) -> None:
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        if self.process.stdout is not None:
            self.process.stdout.close()


def page_load(server: Server) -> float:
    """Seconds to fetch the page and everything it asks for on load, as a browser does."""
    conns = [http.client.HTTPConnection(server.host, server.port, timeout=30) for _ in range(6)]

    def fetch(conn: http.client.HTTPConnection, path: str) -> None:
        conn.request("GET", path, headers=server.headers)
        response = conn.getresponse()
        response.read()
        assert response.status == 200, (path, response.status)

    started = time.perf_counter()
    try:
        for paths in ROUNDS:
            threads = [threading.Thread(target=fetch, args=(conns[i], p))
                       for i, p in enumerate(paths)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
    finally:
        for conn in conns:
            conn.close()
    return time.perf_counter() - started


class BrowserLoad:
    """A real page load in Debian's Chromium (Playwright), until the page has drawn."""

    def __init__(self, server: Server) -> None:
        from playwright.sync_api import sync_playwright

        self.server = server
        self.playwright = sync_playwright().start()
        self.browser = self.playwright.chromium.launch(
            executable_path="/usr/bin/chromium",
            args=["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                  "--no-first-run", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync"])
        self.context = self.browser.new_context()
        page = self.context.new_page()
        page.goto(server.url)  # sets the cookie
        page.close()

    def __call__(self) -> float:
        """Seconds from the start of the navigation until the page has drawn everything it
        loads (measured by the page itself: `performance.now()` when its start ends)."""
        page = self.context.new_page()
        try:
            page.goto(f"http://{self.server.host}:{self.server.port}/")
            while not (loaded := page.evaluate("window.totem && window.totem.loadedAt")):
                time.sleep(0.01)
            return float(loaded) / 1000
        finally:
            page.close()

    def close(self) -> None:
        self.context.close()
        self.browser.close()
        self.playwright.stop()


def watch_and_run(server: Server, session: str, until: float, counts: dict[str, int],
                  lock: threading.Lock) -> None:
    """Run back to back in one session until `until`, reading its event stream."""
    conn = http.client.HTTPConnection(server.host, server.port, timeout=60)
    snap = server.call("GET", f"/api/sessions/{session}")
    conn.request("GET", f"/api/sessions/{session}/events?after={snap['after']}",
                 headers=server.headers)
    stream = conn.getresponse()
    events = runs = 0
    try:
        while time.monotonic() < until:
            server.call("POST", f"/api/sessions/{session}/runs", {"text": "look at the groups"})
            while True:
                line = stream.fp.readline()
                if not line:
                    raise RuntimeError("the event stream ended")
                if line.startswith(b"data: "):
                    events += 1
                    if b'"type":"run_finished"' in line:
                        runs += 1
                        break
    finally:
        conn.close()
        with lock:
            counts["events"] += events
            counts["runs"] += runs


def measure(load: Any, count: int, pause: float) -> list[float]:
    times = []
    for _ in range(count):
        times.append(load())
        time.sleep(pause)
    return times


def show(label: str, times: list[float]) -> None:
    print(f"{label:<34} median {statistics.median(times) * 1000:7.1f} ms   "
          f"slowest {max(times) * 1000:7.1f} ms   ({len(times)} loads)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--loads", type=int, default=15)
    parser.add_argument("--browser", action="store_true",
                        help="also time real page loads in Chromium (Playwright)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="totem-bench-serve-") as tmp:
        root = Path(tmp) / "project"
        (root / ".totem").mkdir(parents=True)
        for i in range(STEPS):
            (root / f"f{i}-data.txt").write_text(f"group {i}\n")
        path = Path(tmp) / "script.json"
        path.write_text(json.dumps(script(100)))
        (root / ".totem" / "config.yaml").write_text(
            f"model: scripted/demo\nproviders:\n  scripted: {{kind: scripted, options: "
            f"{{script: '{path}'}}}}\n")
        server = Server(root)
        browser = None
        try:
            page_load(server)  # warm: imports, files read once
            baseline = measure(lambda: page_load(server), args.loads, 0.05)
            if args.browser:
                browser = BrowserLoad(server)
                browser()
                browser_base = measure(browser, args.loads, 0.05)
            sessions = [server.call("POST", "/api/sessions", {})["session"]["id"]
                        for _ in range(args.sessions)]
            counts, lock = {"events": 0, "runs": 0}, threading.Lock()
            started = time.monotonic()
            until = started + args.seconds
            workers = [threading.Thread(target=watch_and_run,
                                        args=(server, s, until, counts, lock), daemon=True)
                       for s in sessions]
            for worker in workers:
                worker.start()
            time.sleep(min(1.0, args.seconds / 5))  # let every session get going
            pause = max(0.05, (until - time.monotonic()) / (args.loads * 1.5))
            loaded = measure(lambda: page_load(server), args.loads, pause)
            loaded_browser = measure(browser, max(3, args.loads // 2), pause) if browser else []
            for worker in workers:
                worker.join(args.seconds + 60)
            elapsed = time.monotonic() - started
        finally:
            if browser is not None:
                browser.close()
            server.stop()
    print(f"totem serve, {args.sessions} sessions streaming from the scripted provider "
          f"for {args.seconds:g} s")
    show("page load, nothing running (HTTP)", baseline)
    show(f"page load, {args.sessions} sessions running (HTTP)", loaded)
    if args.browser:
        show("page load, nothing running (Chromium)", browser_base)
        show(f"page load, {args.sessions} sessions running (Chromium)", loaded_browser)
    print(f"{'events delivered':<34} {counts['events'] / elapsed:10.0f} events/s "
          f"({counts['events']} in {elapsed:.1f} s)")
    print(f"{'runs finished':<34} {counts['runs']:10d} ({counts['runs'] / elapsed:.1f}/s, "
          f"{STEPS} tool steps each)")
    slowest = max(loaded + loaded_browser)
    print(f"responsive under load: {'yes' if slowest < 1.0 else 'NO'} "
          f"(slowest page load {slowest * 1000:.0f} ms, the bar is 1 s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
