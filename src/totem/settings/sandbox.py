"""The sandbox's settings, from the config's `sandbox:` key and the `--sandbox` flag.

    sandbox: workspace-write          # read-only | workspace-write | off
    sandbox:                          # or the mapping form
      mode: workspace-write
      network: ["pypi.org:443"]       # any entry keeps the network (see below)
      hidden: ["~/.config/myapp"]     # more places hidden from commands (secrets.HIDDEN)
      processes: 256                  # processes a command may add (a fork bomb stops there)

`network` is honest about its granularity: commands get either no network at all (the
default) or the whole network, when the list names at least one host. There is no per-host
proxy; the hosts listed say why the network is open and are shown where it is.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

__all__ = ["MODES", "SandboxConfigError", "SandboxMode", "SandboxSettings", "merge_sandbox",
           "narrow_untrusted", "parse_sandbox"]

SandboxMode: TypeAlias = Literal["read-only", "workspace-write", "off"]
MODES: tuple[SandboxMode, ...] = ("read-only", "workspace-write", "off")  # narrow to wide
DEFAULT_PROCESSES = 256


class SandboxConfigError(ValueError):
    """A `sandbox:` value that cannot be read."""


@dataclass(slots=True)
class SandboxSettings:
    mode: SandboxMode = "workspace-write"
    network: list[str] = field(default_factory=list)  # host:port entries; any opens it
    hidden: list[str] = field(default_factory=list)  # added to secrets.HIDDEN
    processes: int = DEFAULT_PROCESSES


def _mode(value: Any, where: str) -> SandboxMode:
    if value is False:  # YAML reads `sandbox: off` as false
        return "off"
    for mode in MODES:
        if value == mode:
            return mode
    raise SandboxConfigError(f"{where}: expected read-only, workspace-write or off, "
                             f"not {value!r}")


def parse_sandbox(value: Any) -> SandboxSettings:
    """The settings of a `sandbox:` value (a mode, or a mapping); SandboxConfigError if not."""
    if value is None:
        return SandboxSettings()
    if not isinstance(value, dict):
        return SandboxSettings(mode=_mode(value, "sandbox"))
    settings = SandboxSettings(mode=_mode(value.get("mode", "workspace-write"), "sandbox.mode"))
    settings.network = [_host(h) for h in value.get("network") or []]
    settings.hidden = [str(p) for p in value.get("hidden") or []]
    processes = value.get("processes", DEFAULT_PROCESSES)
    if isinstance(processes, bool) or not isinstance(processes, int) or processes < 16:
        raise SandboxConfigError(f"sandbox.processes: expected a whole number of at least 16, "
                                 f"not {processes!r}")
    settings.processes = processes
    return settings


def _host(entry: Any) -> str:
    text = str(entry).strip()
    host, colon, port = text.rpartition(":")
    if not colon or not host or not port.isdigit():
        raise SandboxConfigError(f"sandbox.network: expected host:port, not {entry!r}")
    return text


def _as_mapping(value: Any) -> dict[str, Any]:
    return dict(value) if isinstance(value, dict) else ({} if value is None else {"mode": value})


def merge_sandbox(base: Any, over: Any) -> dict[str, Any]:
    """Two `sandbox:` values, the second winning, in the mapping form; hidden places add up
    (a later file never uncovers what an earlier one hides)."""
    merged = {**_as_mapping(base), **_as_mapping(over)}
    hidden = [*(_as_mapping(base).get("hidden") or []), *(_as_mapping(over).get("hidden") or [])]
    if hidden:
        merged["hidden"] = list(dict.fromkeys(hidden))
    return merged


def narrow_untrusted(project: Any, user: Any) -> tuple[dict[str, Any], list[str]]:
    """What an untrusted project's `sandbox:` keeps: a narrower mode, more hidden places, fewer
    processes. It never turns the sandbox off or wider, nor opens the network; each thing it
    would widen is one line of the second list."""
    theirs, mine = _as_mapping(project), _as_mapping(user)
    kept: dict[str, Any] = {}
    ignored: list[str] = []
    if "mode" in theirs:
        wanted = _mode(theirs["mode"], "sandbox.mode")
        current = _mode(mine.get("mode", "workspace-write"), "sandbox.mode")
        if MODES.index(wanted) <= MODES.index(current):
            kept["mode"] = wanted
        else:
            ignored.append(f"sandbox: {wanted} (wider than {current})")
    added = [h for h in theirs.get("network") or [] if h not in (mine.get("network") or [])]
    if added:
        ignored.append(f"sandbox.network: would open the network ({', '.join(map(str, added))})")
    if theirs.get("hidden"):
        kept["hidden"] = [*(mine.get("hidden") or []), *theirs["hidden"]]
    if "processes" in theirs:
        limit = mine.get("processes", DEFAULT_PROCESSES)
        if isinstance(theirs["processes"], int) and theirs["processes"] <= limit:
            kept["processes"] = theirs["processes"]
        else:
            ignored.append(f"sandbox.processes: {theirs['processes']} (more than yours)")
    return kept, ignored
