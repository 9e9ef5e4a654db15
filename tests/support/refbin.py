"""Locate the reference `apply_patch` implementation: the Codex CLI binary installed by npm.

`npm ci` in tests/node installs `@openai/codex`, whose platform package ships the native binary
under `@openai/codex-<platform>/vendor/<target triple>/bin/codex`.  Invoked through a link named
`apply_patch`, that binary applies a patch (first argument, or stdin) in the current directory.
"""

from __future__ import annotations

import hashlib
import os
import platform
import sys
import tempfile
from pathlib import Path

from tests.support.required import unavailable

NODE_MODULES = Path(__file__).resolve().parents[1] / "node" / "node_modules"


def _triple_matches(triple: str) -> bool:
    machine = platform.machine().lower()
    arch = {"amd64": "x86_64", "arm64": "aarch64"}.get(machine, machine)
    system = {"linux": "linux", "darwin": "apple-darwin", "win32": "windows"}.get(
        sys.platform, sys.platform
    )
    return triple.startswith(arch + "-") and system in triple


def codex_binary(node_modules: Path = NODE_MODULES) -> Path | None:
    """The installed Codex binary for this machine, or None."""
    for candidate in sorted(node_modules.glob("@openai/codex-*/vendor/*/bin/codex")):
        triple = candidate.parents[1].name
        if _triple_matches(triple) and candidate.is_file() and os.access(candidate, os.X_OK):
            return candidate
    return None


def apply_patch_binary(node_modules: Path = NODE_MODULES) -> Path | None:
    """A link named `apply_patch` to the Codex binary (made once, in a cache dir), or None."""
    binary = codex_binary(node_modules)
    if binary is None:
        return None
    digest = hashlib.sha256(str(binary).encode()).hexdigest()[:16]
    user = os.getuid() if hasattr(os, "getuid") else 0
    link_dir = Path(tempfile.gettempdir()) / f"totem-refbin-{user}-{digest}"
    link = link_dir / "apply_patch"
    if link.is_symlink() and link.resolve() == binary.resolve():
        return link
    link_dir.mkdir(parents=True, exist_ok=True)
    staging = link_dir / f".apply_patch.{os.getpid()}"
    staging.unlink(missing_ok=True)
    staging.symlink_to(binary)
    os.replace(staging, link)  # atomic: concurrent test processes all end with a good link
    return link


def require_apply_patch_binary(node_modules: Path = NODE_MODULES) -> Path:
    """The `apply_patch` link; skip the test when absent, or fail when TOTEM_REQUIRE_SERVERS=1."""
    link = apply_patch_binary(node_modules)
    if link is not None:
        return link
    message = (
        "reference apply_patch binary not found under "
        f"{node_modules}/@openai/codex-*/vendor/*/bin/codex (run `npm ci` in tests/node)"
    )
    unavailable(message)
