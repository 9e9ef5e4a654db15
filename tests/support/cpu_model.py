"""The CPU model (Qwen2.5-Coder 0.5B) served by llama.cpp's llama-server, both cached by
scripts/cpu-model.sh; without them the test is skipped, unless TOTEM_REQUIRE_CPU_MODEL=1.

    with running_llama(context=2048) as port: ...     # http://127.0.0.1:{port}/v1
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from pathlib import Path

from tests.support.ports import free_port, http_ok
from tests.support.processes import running
from tests.support.required import DEV_CACHE, unavailable

__all__ = ["MODEL", "SERVER", "running_llama"]

MODEL = DEV_CACHE / "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"
SERVER = DEV_CACHE / "llama-server"


@contextlib.contextmanager
def running_llama(
    *, context: int, options: Sequence[str] = (), log: Path | None = None, timeout: float = 180
) -> Iterator[int]:
    """llama-server with the model on a free port (its `context` window, other command-line
    `options`), answering /health when this yields the port; stopped on exit."""
    if not (MODEL.is_file() and SERVER.is_file()):
        unavailable("CPU model not cached (scripts/cpu-model.sh)",
                    required_by="TOTEM_REQUIRE_CPU_MODEL")
    port = free_port()
    command = [str(SERVER), "-m", str(MODEL), *options, "-c", str(context), "-t", "2",
               "--host", "127.0.0.1", "--port", str(port)]
    with running(command, log=log, what="llama-server", timeout=timeout, interval=0.3,
                 grace=30, ready=lambda: http_ok(f"http://127.0.0.1:{port}/health", timeout=2)):
        yield port
