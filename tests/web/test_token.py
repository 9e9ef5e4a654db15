"""The token of `totem serve` stays the same across restarts (a 0600 file in the user's data
dir), `--new-token` replaces it, and it is printed only in the URL to open. `totem run`
loads nothing of the web server; another ASGI server can serve the application."""

from __future__ import annotations

import http.client
import json
import os
import re
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

from tests.support.ports import http_ok, wait_until_serving
from tests.support.web_serve import Served, project, scripted


def test_the_token_survives_a_restart_and_new_token_rotates_it(tmp_path: Path) -> None:
    root = project(tmp_path, scripted(tmp_path, []))
    with Served(root) as first:
        token = first.token
        sid = first.new_session()
    kept = tmp_path / "data" / "totem" / "serve-token"
    assert kept.read_text().strip() == token
    assert stat.S_IMODE(kept.stat().st_mode) == 0o600
    with Served(root) as again:
        assert again.token == token
        assert again.json("GET", f"/api/sessions/{sid}")["session"]["id"] == sid
        printed = "".join(again.output)
    assert printed.count(token) == 1 and f"?token={token}" in printed
    with Served(root, args=["--new-token"]) as rotated:
        assert rotated.token != token
        assert rotated.request("GET", "/api/sessions",
                               headers={"Authorization": f"Bearer {token}"}, token=False)[0] == 403
    assert kept.read_text().strip() == rotated.token


def test_a_token_file_others_can_read_is_replaced(tmp_path: Path) -> None:
    root = project(tmp_path, scripted(tmp_path, []))
    kept = tmp_path / "data" / "totem" / "serve-token"
    kept.parent.mkdir(parents=True)
    kept.write_text("A" * 40 + "\n")
    kept.chmod(0o644)
    with Served(root) as served:
        assert served.token != "A" * 40
    assert stat.S_IMODE(kept.stat().st_mode) == 0o600


# Each process waits for the start file, then reads or makes the token: all at once.
RACER = """
import pathlib, sys, time
from totem.server.token import stable_token
start = pathlib.Path(sys.argv[1])
while not start.exists():
    time.sleep(0.001)
print(stable_token(path=pathlib.Path(sys.argv[2])))
"""


def test_workers_started_at_once_on_one_data_dir_agree_on_one_token(tmp_path: Path) -> None:
    start, kept = tmp_path / "go", tmp_path / "data" / "serve-token"
    env = dict(os.environ, PYTHONPATH=":".join(sys.path))
    racers = [subprocess.Popen([sys.executable, "-c", RACER, str(start), str(kept)], env=env,
                               stdout=subprocess.PIPE, text=True) for _ in range(16)]
    time.sleep(1.0)  # every racer is waiting (a late one only reads the file: still one token)
    start.touch()
    tokens = {racer.communicate(timeout=60)[0].strip() for racer in racers}
    assert tokens == {kept.read_text().strip()}
    assert stat.S_IMODE(kept.stat().st_mode) == 0o600
    assert [p.name for p in kept.parent.iterdir()] == ["serve-token"]  # no file left behind


def test_totem_run_loads_nothing_of_the_web_server(tmp_path: Path) -> None:
    script = tmp_path / "script.json"
    script.write_text(json.dumps([{"text": "Hi from the script."}]))
    config = tmp_path / "config.yaml"
    config.write_text(f"model: scripted/demo\nproviders:\n  scripted: {{kind: scripted, "
                      f"options: {{script: '{script}'}}}}\n")
    root = tmp_path / "project"
    root.mkdir()
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "TOTEM_CONFIG": str(config),
           "XDG_DATA_HOME": str(tmp_path / "data"), "XDG_CONFIG_HOME": str(tmp_path / "c"),
           "XDG_CACHE_HOME": str(tmp_path / "cache"), "TERM": "dumb",
           "PYTHONPATH": ":".join(sys.path)}
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "totem", "run", "hello"],
                          cwd=root, env=env, capture_output=True, text=True, timeout=60,
                          stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "Hi from the script." in done.stdout
    loaded = {line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines() if "|" in line}
    assert "totem.session.service" in loaded  # the import log is the one of the run
    assert not {"starlette", "uvicorn", "h11", "totem.server"} & loaded


def test_the_app_runs_under_another_asgi_server(tmp_path: Path) -> None:
    """`totem.server.app:create_app` is an ASGI application factory: here uvicorn's own
    command line serves it, with the kept token and every check of `totem serve`."""
    root = project(tmp_path, scripted(tmp_path, []))
    env = {name: value for name, value in os.environ.items()
           if name not in ("TOTEM_CONFIG", "TOTEM_STORE")}
    env.update(XDG_DATA_HOME=str(tmp_path / "data"), XDG_CONFIG_HOME=str(tmp_path / "config"),
               PYTHONPATH=":".join(sys.path))
    # uvicorn binds a port of its own choosing (--port 0) and names it in its log: a port
    # picked by the test and bound later could be taken in between by another test
    log = tmp_path / "uvicorn.log"
    with log.open("wb") as sink:
        server = subprocess.Popen(
            [sys.executable, "-m", "uvicorn", "--factory", "totem.server.app:create_app",
             "--host", "127.0.0.1", "--port", "0", "--no-access-log"],
            cwd=root, env=env, stdout=sink, stderr=subprocess.STDOUT)
    try:
        kept = tmp_path / "data" / "totem" / "serve-token"
        wait_until_serving(server, lambda: kept.exists() and "running on http" in
                           log.read_text(errors="replace"), what="uvicorn", timeout=30, log=log)
        found = re.search(r"running on http://127\.0\.0\.1:(\d+)", log.read_text())
        assert found, log.read_text()
        port = int(found.group(1))
        token = kept.read_text().strip()
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        conn.request("GET", "/api/info", headers={"Authorization": f"Bearer {token}"})
        answer = conn.getresponse()
        assert answer.status == 200 and json.loads(answer.read())["name"] == "project"
        conn.request("GET", "/api/info", headers={"Authorization": f"Bearer {token}",
                                                  "Origin": "http://evil.example"})
        answer = conn.getresponse()
        assert answer.status == 403 and b"origin" in answer.read()
        assert not http_ok(f"http://127.0.0.1:{port}/api/info")  # no token: refused
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(30)



def test_httpx_comes_without_its_command_line_client() -> None:
    # httpx loads rich, pygments and click for its own CLI whenever they are installed
    code = ("import sys, totem, httpx; print(sorted(name for name in "
            "('rich', 'pygments', 'click', 'httpx._main') if sys.modules.get(name)))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60, env=dict(os.environ, PYTHONPATH=":".join(sys.path)))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
