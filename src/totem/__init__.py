"""totem: a coding agent for the terminal.

Kept empty on purpose: `totem --version` imports only this module.
"""

__version__ = "0.1.0"
__all__ = ["__version__"]
