"""Which language server checks which files after an edit (`totem.lsp`), from config:

    lsp:
      python: {command: [basedpyright-langserver, --stdio], extensions: [.py, .pyi]}
      typescript: {command: [typescript-language-server, --stdio],
                   extensions: [.ts, .tsx, .js, .jsx, .mjs, .cjs, .mts, .cts]}
      go: {command: [gopls], extensions: [.go]}        # another language: one line
      rust: {command: [rust-analyzer], extensions: [.rs], roots: [Cargo.toml], first_wait: 30}
      python: {enabled: false}                          # no diagnostics for these files
    lsp: false                                          # none at all

Python and TypeScript/JavaScript are built in; an entry of the same name changes only the
keys it gives. `roots` names the files that mark a project of the language (pyproject.toml,
tsconfig.json...): a server with roots checks a file only when one of them is in its folder or
one above it, up to the project's root, so loose scripts in a folder of notes start nothing;
without roots it checks every file with its extensions. `first_wait` bounds the wait for a
server's first diagnostics (it starts and reads the project then), `wait` every later one, in
seconds. A project's own file may add or change a server only once the folder is trusted (it
runs a program): before that it may only turn servers off (settings/config_trust.py).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from totem.settings.errors import ConfigError

__all__ = ["BUILT_IN", "LspServer", "LspSettings", "parse_lsp"]


@dataclass(frozen=True, slots=True)
class LspServer:
    name: str  # the language, as in config (python, typescript, go...)
    command: tuple[str, ...]
    extensions: frozenset[str]
    enabled: bool = True
    first_wait: float = 15.0  # seconds, for the server's first diagnostics
    wait: float = 5.0  # seconds, for each later one
    # files that mark a project of the language; () for none needed
    roots: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class LspSettings:
    servers: tuple[LspServer, ...] = ()

    def for_suffix(self, suffix: str) -> LspServer | None:
        """The enabled server for a file ending in `suffix` (".py"), or None."""
        found = [s for s in self.servers if s.enabled and suffix.lower() in s.extensions]
        return found[-1] if found else None


_SCRIPT_EXTENSIONS = (".ts", ".tsx", ".js", ".jsx", ".mjs", ".cjs", ".mts", ".cts")
# what pyright and typescript read a project's settings from, or a Python project is made of
_PYTHON_ROOTS = ("pyproject.toml", "setup.py", "setup.cfg", "requirements.txt", "Pipfile",
                 "pyrightconfig.json")
_SCRIPT_ROOTS = ("tsconfig.json", "jsconfig.json", "package.json")
BUILT_IN: tuple[LspServer, ...] = (
    LspServer("python", ("basedpyright-langserver", "--stdio"), frozenset((".py", ".pyi")),
              roots=_PYTHON_ROOTS),
    LspServer("typescript", ("typescript-language-server", "--stdio"),
              frozenset(_SCRIPT_EXTENSIONS), roots=_SCRIPT_ROOTS),
)
_DEFAULTS = LspServer("", (), frozenset())


def _seconds(name: str, key: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        raise ConfigError(f"lsp.{name}.{key}: expected a number of seconds above 0, "
                          f"not {value!r}")
    return float(value)


def _extension(name: str, value: Any) -> str:
    text = str(value).strip().lower()
    if not text or "/" in text:
        raise ConfigError(f"lsp.{name}.extensions: {value!r} is not a file extension")
    return text if text.startswith(".") else "." + text


def _server(name: str, spec: dict[str, Any], base: LspServer | None) -> LspServer:
    server = base or replace(_DEFAULTS, name=name)
    if "command" in spec:
        command = spec["command"]
        parts = [str(p) for p in command] if isinstance(command, list) else str(command).split()
        if not parts or not parts[0]:
            raise ConfigError(f"lsp.{name}.command: expected the server's command line, "
                              "such as [gopls] or [pyright-langserver, --stdio]")
        server = replace(server, command=tuple(parts))
    if "extensions" in spec:
        server = replace(server, extensions=frozenset(_extension(name, e)
                                                      for e in spec["extensions"]))
    if "roots" in spec:
        roots = spec["roots"]
        names = [str(r).strip() for r in roots] if isinstance(roots, list) else [str(roots)]
        if any(not n or "/" in n for n in names):
            raise ConfigError(f"lsp.{name}.roots: expected file names such as [go.mod], "
                              f"not {roots!r}")
        server = replace(server, roots=tuple(names))
    if "enabled" in spec:
        server = replace(server, enabled=bool(spec["enabled"]))
    if "first_wait" in spec:
        server = replace(server, first_wait=_seconds(name, "first_wait", spec["first_wait"]))
    if "wait" in spec:
        server = replace(server, wait=_seconds(name, "wait", spec["wait"]))
    if server.enabled and (not server.command or not server.extensions):
        raise ConfigError(f"lsp.{name}: a new language server needs a command and its "
                          "extensions, such as {command: [gopls], extensions: [.go]}")
    return server


def parse_lsp(section: Any) -> LspSettings:
    """The servers: the built-in ones changed and added to by the `lsp:` section."""
    if section is False:
        return LspSettings(())
    if section in (None, True):
        return LspSettings(BUILT_IN)
    if not isinstance(section, dict):
        raise ConfigError("lsp: expected a mapping of languages to servers, or false")
    servers = {s.name: s for s in BUILT_IN}
    for name, spec in section.items():
        if isinstance(spec, bool):
            spec = {"enabled": spec}
        if not isinstance(spec, dict):
            raise ConfigError(f"lsp.{name}: expected a mapping such as "
                              "{command: [gopls], extensions: [.go]}")
        servers[str(name)] = _server(str(name), spec, servers.get(str(name)))
    return LspSettings(tuple(servers.values()))
