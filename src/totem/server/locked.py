"""The page shown without the token: styled by its own inline style, which its
Content-Security-Policy allows by hash (and nothing else)."""

from __future__ import annotations

import base64
import functools
import hashlib
import re
from pathlib import Path

from totem.server.security import CSP

__all__ = ["locked_page"]


@functools.cache
def locked_page() -> tuple[bytes, str]:
    """The 401 page and the Content-Security-Policy that lets exactly its style in."""
    page = Path(__file__).with_name("locked.html").read_bytes()
    found = re.search(rb"<style>(.*?)</style>", page, re.S)
    assert found is not None, "locked.html has its style inline"
    digest = base64.b64encode(hashlib.sha256(found.group(1)).digest()).decode()
    return page, CSP.replace("style-src 'self'", f"style-src 'sha256-{digest}'")
