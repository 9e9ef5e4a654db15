"""totem: a coding agent for the terminal.

Kept almost empty on purpose: `totem --version` imports only this module.
"""

import sys

# httpx imports its own command-line client whenever rich, pygments and click are installed
# (they are: the chat's Markdown and the web server bring them), about 4 MB and 40 ms on
# every start; totem never runs that client, so the import is made to fail and httpx skips it
# (measured with bench/turns.py: peak RSS 50 MB with it, 46 MB without).
sys.modules.setdefault("httpx._main", None)  # type: ignore[arg-type]

__version__ = "0.1.0"
__all__ = ["__version__"]
