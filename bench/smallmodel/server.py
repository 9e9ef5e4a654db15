"""llama-server for one model: started on a free loopback port, stopped on exit."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
import urllib.request
from pathlib import Path
from types import TracebackType

SCRIPTS = {"0.5b": "cpu-model.sh", "1.5b": "cpu-model-1.5b.sh"}


def model_paths(model: str, *, repo: Path) -> tuple[Path, Path]:
    """(GGUF file, llama-server binary) for `model`, fetched into the cache when missing."""
    script = repo / "scripts" / SCRIPTS[model]
    done = subprocess.run(["bash", str(script)], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{script.name} failed:\n{done.stderr[-2000:]}")
    lines = done.stdout.strip().splitlines()
    return Path(lines[-2]), Path(lines[-1])


def under_name(gguf: Path, name: str, *, folder: Path) -> Path:
    """`gguf` as `folder`/`name` (a symbolic link), so that the server is given a model file
    of that name: what the server reports (its `/props` model path, its model id without an
    alias) then says nothing of the original name."""
    if not name or "/" in name or name in {".", ".."}:
        raise SystemExit(f"--model-file wants a plain file name, not {name!r}")
    folder.mkdir(parents=True, exist_ok=True)
    link = folder / name
    if link.is_symlink() or link.exists():
        link.unlink()
    link.symlink_to(gguf.resolve())
    return link


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


WINDOW = 8192
# Two prompt slots, as scripts/quickstart.sh starts the server: llama-server gives a request
# the slot whose cached prompt it shares most with, else the one used least recently, so the
# run's steps keep one slot's cache and a question with a prompt of its own (the plan, the
# 'gone' question, a closing answer) takes the other instead of evicting it.
SLOTS = 2


class ModelServer:
    """A llama-server process; `model_id` is the name it serves the model under."""

    def __init__(
        self, gguf: Path, binary: Path, *, log: Path, alias: str | None, threads: int,
        slots: int = SLOTS,
    ) -> None:
        self.port = _free_port()
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        # each slot has a window of WINDOW tokens (-c is shared out among the -np slots)
        command = [str(binary), "-m", str(gguf), "--jinja", "-c", str(WINDOW * slots),
                   "-np", str(slots), "-t", str(threads),
                   "--host", "127.0.0.1", "--port", str(self.port)]
        if alias is not None:
            command += ["--alias", alias]
        self.command = command
        self.log = log
        self.model_id = ""
        self._process: subprocess.Popen[bytes] | None = None

    def alive(self) -> bool:
        """False once the server has exited (llama-server can abort on a model's output)."""
        return self._process is not None and self._process.poll() is None

    def restart(self) -> None:
        """A new server process on the same port, after a crash; its log is appended to."""
        self.__exit__(None, None, None)
        self.__enter__()

    def __enter__(self) -> ModelServer:
        self.log.parent.mkdir(parents=True, exist_ok=True)
        with self.log.open("ab") as log:
            self._process = subprocess.Popen(
                self.command, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
            )
        self._wait_ready(timeout=600)
        with urllib.request.urlopen(f"{self.base_url}/models", timeout=10) as reply:
            self.model_id = json.load(reply)["data"][0]["id"]
        return self

    def _wait_ready(self, *, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            assert self._process is not None
            if self._process.poll() is not None:
                raise SystemExit(f"llama-server exited; see {self.log}")
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/health", timeout=5):
                    return
            except OSError:
                time.sleep(1)
        raise SystemExit(f"llama-server not ready after {timeout:.0f} s; see {self.log}")

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._process is None or self._process.poll() is not None:
            return
        os.killpg(self._process.pid, signal.SIGTERM)
        try:
            self._process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(self._process.pid, signal.SIGKILL)
            self._process.wait()
