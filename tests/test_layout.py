"""The layering of src/totem, read from the source with ast: no import cycles (imports
inside functions and under TYPE_CHECKING count too), the web does not reach into the CLI,
and tools know no framework pack."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"


def _modules() -> dict[str, Path]:
    found = {}
    for path in SRC.rglob("*.py"):
        parts = list(path.relative_to(SRC).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


MODULES = _modules()


def _resolve(name: str) -> str | None:
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def _imports(module: str, path: Path) -> set[str]:
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    targets: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parts, base] if base else parts)
            names = [base, *(f"{base}.{alias.name}" for alias in node.names)]
        for name in names:
            resolved = _resolve(name)
            if resolved and resolved != module and resolved.startswith("totem"):
                targets.add(resolved)
    return targets


GRAPH = {module: _imports(module, path) for module, path in MODULES.items()}


def _cycles() -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for other in GRAPH[node]:
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in on_stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in GRAPH:
        if node not in index:
            visit(node)
    return found


def _importers(of: str, into: str) -> list[str]:
    return sorted(m for m, targets in GRAPH.items() if m.startswith(of)
                  and any(t == into or t.startswith(into + ".") for t in targets))


def test_the_graph_is_read() -> None:
    assert "totem.run.loop" in GRAPH and "totem.run.execute" in GRAPH["totem.run.loop"]


def test_no_import_cycle() -> None:
    assert _cycles() == []


BOTTOM = ("totem.settings", "totem.messages", "totem.events", "totem.abort")


def test_settings_and_the_data_model_import_nothing_above_them() -> None:
    """docs/architecture.md: each layer imports only from those below it. settings/ and the
    data model are the bottom: they import only each other."""
    def below(module: str) -> bool:
        return any(module == b or module.startswith(b + ".") for b in BOTTOM)

    upward = {module: sorted(t for t in targets if not below(t))
              for module, targets in GRAPH.items() if below(module)}
    assert {m: t for m, t in upward.items() if t} == {}


def test_the_sandbox_imports_only_settings() -> None:
    """sandbox/ sits below tools/: it imports only settings/ and the data model."""
    for module, targets in GRAPH.items():
        if module.startswith("totem.sandbox"):
            assert all(t.startswith(("totem.sandbox", *BOTTOM)) for t in targets), module


def test_the_web_does_not_import_the_cli() -> None:
    assert _importers("totem.server", "totem.cli") == []


def test_tools_import_no_knowledge_pack() -> None:
    assert _importers("totem.tools", "totem.knowledge") == []


def test_the_run_does_not_import_its_clients() -> None:
    for client in ("totem.cli", "totem.server", "totem.session"):
        assert _importers("totem.run", client) == [], client


def test_the_editor_agent_is_a_client_of_the_session() -> None:
    """`totem acp` reaches runs through the session service only, and knows no other client."""
    for other in ("totem.run", "totem.cli", "totem.server"):
        assert _importers("totem.acp", other) == [], other


SMALL_FLAGS = ("profile.small", "small_model", "SmallModel", "totem.smallmodel")


def test_the_help_for_small_models_has_one_home() -> None:
    """run/ and tools/ never import the small-model package, nor branch on a small profile:
    the loop calls the run's assist (run/assist.py), whatever model it runs."""
    assert _importers("totem.run", "totem.smallmodel") == []
    assert _importers("totem.tools", "totem.smallmodel") == []
    for module, path in MODULES.items():
        if module.startswith(("totem.run", "totem.tools", "totem.policy", "totem.store")):
            source = path.read_text(encoding="utf-8")
            assert not any(flag in source for flag in SMALL_FLAGS), module

