"""What a test needs from outside (node packages, a browser, a cached model): when it is
missing the test is skipped, unless the suite said it must run everything it can.

    unavailable("aimock: node is not on PATH")                     # TOTEM_REQUIRE_SERVERS=1
    unavailable("...", required_by="TOTEM_REQUIRE_CPU_MODEL")       # fails instead of a skip

`DEV_CACHE` is the folder the setup scripts fill (scripts/cpu-model.sh, scripts/litellm.sh).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import NoReturn

import pytest

__all__ = ["DEV_CACHE", "unavailable"]

DEV_CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "totem-dev"


def unavailable(message: str, *, required_by: str = "TOTEM_REQUIRE_SERVERS") -> NoReturn:
    """Skip the test, saying `message`; fail it instead when `required_by` is set to 1."""
    if os.environ.get(required_by) == "1":
        pytest.fail(f"required ({required_by}=1) but unavailable: {message}")
    pytest.skip(message)
