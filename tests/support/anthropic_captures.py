"""Real recorded Anthropic event streams, from the `anthropic` sdist on PyPI.

The sdist ships raw SSE captures under `tests/lib/streaming/fixtures/` (text, tool use,
partial and invalid tool JSON, unknown events, refusal, server tools...). `captures_dir()`
downloads the pinned sdist once with pip (`pip download --no-deps --no-binary :all:`) into
~/.cache/totem-dev/ and extracts only those files; later calls reuse them.

    python -m tests.support.anthropic_captures     # fetch now, print where they are

`require_captures()` is the same for tests: when the sdist cannot be had the test is
skipped, unless TOTEM_REQUIRE_SERVERS=1 makes that a failure.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

__all__ = ["SDIST_VERSION", "CapturesUnavailable", "captures_dir", "require_captures"]

SDIST_VERSION = "2.10.0"  # keep in step with tests/requirements-providers.txt
_INSIDE = "tests/lib/streaming/fixtures/"


class CapturesUnavailable(Exception):
    pass


def _cache_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "totem-dev"


def captures_dir(version: str = SDIST_VERSION) -> Path:
    """The folder of `*.txt` captures of anthropic==`version`, fetched on first use."""
    target = _cache_root() / f"anthropic-{version}-captures"
    if target.is_dir() and any(target.glob("*.txt")):
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="totem-anthropic-", dir=target.parent) as tmp:
        sdist = _download(version, Path(tmp))
        staged = Path(tmp) / "captures"
        staged.mkdir()
        with tarfile.open(sdist) as archive:
            for member in archive.getmembers():
                _, _, inner = member.name.partition("/")
                if member.isfile() and inner.startswith(_INSIDE) and inner.endswith(".txt"):
                    source = archive.extractfile(member)
                    if source is not None:
                        (staged / Path(inner).name).write_bytes(source.read())
        if not any(staged.glob("*.txt")):
            raise CapturesUnavailable(f"anthropic {version} sdist has no {_INSIDE}*.txt")
        if target.exists():
            shutil.rmtree(target)
        staged.rename(target)
    return target


def _download(version: str, into: Path) -> Path:
    command = [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:",
               "--disable-pip-version-check", "-q", f"anthropic=={version}", "-d", str(into)]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=300)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise CapturesUnavailable(f"pip download failed: {exc}") from None
    found = sorted(into.glob(f"anthropic-{version}.tar.gz"))
    if done.returncode != 0 or not found:
        raise CapturesUnavailable(f"pip download failed: {done.stderr.strip()[-500:]}")
    return found[0]


_failed: list[str] = []  # a download that failed once is not tried again by this process


def require_captures() -> Path:
    """`captures_dir()` for a test: skip (or fail under TOTEM_REQUIRE_SERVERS=1) without it."""
    import pytest

    try:
        if _failed:
            raise CapturesUnavailable(_failed[0])
        return captures_dir()
    except CapturesUnavailable as exc:
        _failed[:] = [str(exc)]
        if os.environ.get("TOTEM_REQUIRE_SERVERS") == "1":
            pytest.fail(f"the anthropic captures are required (TOTEM_REQUIRE_SERVERS=1): {exc}")
        pytest.skip(f"anthropic captures unavailable: {exc}")


if __name__ == "__main__":
    print(captures_dir())
