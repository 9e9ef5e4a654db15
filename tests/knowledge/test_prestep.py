"""the documentation search before the first step, against a local stand-in of the
Total.js documentation server (same tool names and shapes) declared as the project's `forge`
server, the path by which a project replaces the built-in one."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.support.knowledge_runs import calls, declare_forge, run_session, standin_spec
from tests.support.ports import free_port
from totem.events import Notice, RunFinished
from totem.knowledge.session import SEARCH_TIMEOUT
from totem.knowledge.totaljs import TotalJs
from totem.messages import NoticePart
from totem.policy.permission import Rule
from totem.settings.config import KnowledgeSettings
from totem.testing.scripted import reply

SPANISH = "quiero hacer un componente jcomponent de contador"
ENGLISH = "How do I define a route with a parameter in Total.js?"


def new_folder(tmp: Path, spec: dict[str, Any] | None = None) -> tuple[Path, Path]:
    root = tmp / "project"
    root.mkdir()
    log = tmp / "forge.log"
    declare_forge(root, spec if spec is not None else standin_spec(log))
    return root, log


def searches(log: Path) -> list[dict[str, Any]]:
    return [c["arguments"] for c in calls(log) if c["tool"] == "Forge_search"]


def section(system: str) -> str:
    start = system.find("Documentation for this request")
    return system[start:] if start >= 0 else ""


def test_a_spanish_prompt_finds_the_component_recipe(tmp_path: Path) -> None:
    root, log = new_folder(tmp_path)
    ran = run_session(tmp_path, root, [SPANISH], [reply("COMPONENT('counter', ...)")])
    assert searches(log) == [{"query": "create a component counter", "product": "jcomponent",
                              "limit": 10}]
    read = [c["arguments"]["id"] for c in calls(log) if c["tool"] == "Forge_page"]
    # the two best pages are read at once: their calls may reach the server in either order
    assert sorted(read) == ["jcomponent/configure", "jcomponent/create-component"]
    system = ran.requests[0].system
    pages = section(system)
    # the best one comes first in the prompt whatever the order of the reads
    assert pages.index("RECIPE-CREATE-COMPONENT") < pages.index("CONFIGURE-PAGE")
    assert "RECIPE-CREATE-COMPONENT" in pages and "## Create a component" in pages
    assert "jComponent 20, search \"create a component counter\"" in pages
    # the recipe is longer than forgechars: cut, and said so
    recipe = pages.split("## Create a component", 1)[1].split("\n## ", 1)[0]
    assert 3000 < len(recipe) < 4000 + 200 and "the page goes on" in recipe
    assert "Other pages found (read one with forge__Forge_page):" in pages
    assert "(id: jcomponent/" in pages
    assert system.index(pages) > system.index("Do not invent functions")
    assert "forge__Forge_page" in [t.name for t in ran.requests[0].tools]


def test_an_english_prompt_searches_total5_and_the_conversation_shows_the_pages(
    tmp_path: Path,
) -> None:
    root, log = new_folder(tmp_path)
    ran = run_session(tmp_path, root, [ENGLISH], [reply("ROUTE('GET /orders/{id}/', read);")])
    assert searches(log) == [{"query": "route parameter", "product": "total5", "limit": 10}]
    pages = section(ran.requests[0].system)
    assert pages.index("## Routing with ROUTE()") < pages.index("ROUTE-PAGE")
    shown = [n for n in ran.notices() if n.startswith("Documentation used")]
    assert shown == ['Documentation used (forge, Total.js 5: "route parameter"): '
                     '"Routing with ROUTE()", "NEWACTION()".']
    stored = [p for m in ran.messages for p in m.parts if isinstance(p, NoticePart)]
    assert [p.text for p in stored] == shown and ran.messages[0].role == "user"
    assert isinstance(ran.events[0][-1], RunFinished) and ran.events[0][-1].reason == "finished"


def test_forgepages_and_forgechars_are_the_limits(tmp_path: Path) -> None:
    root, log = new_folder(tmp_path)
    knowledge = KnowledgeSettings(forgepages=1, forgechars=300)
    ran = run_session(tmp_path, root, [SPANISH], [reply("ok")], knowledge=knowledge)
    pages = section(ran.requests[0].system)
    assert pages.count("\n## ") == 1
    body = pages.split("## Create a component", 1)[1].split("Other pages found", 1)[0]
    assert len(body) < 300 + 200
    assert len([c for c in calls(log) if c["tool"] == "Forge_page"]) == 1


def test_short_prompts_and_commands_are_not_searched_and_earlier_pages_stay(
    tmp_path: Path,
) -> None:
    root, log = new_folder(tmp_path)
    (root / ".totem/commands").mkdir()
    (root / ".totem/commands/route.md").write_text(
        "---\ndescription: Add a route\n---\nAdd a Total.js route with a parameter: $ARGUMENTS\n")
    turns = [reply("hi"), reply("done"), reply("ok"), reply("and")]
    ran = run_session(tmp_path, root, ["hola", "/route orders", ENGLISH, "gracias"], turns)
    assert searches(log) == [{"query": "route parameter", "product": "total5", "limit": 10}]
    first, command, searched, thanks = (r.system for r in ran.requests)
    assert section(first) == "" and section(command) == ""
    assert "ROUTE-PAGE" in section(searched) and section(thanks) == section(searched)
    assert not [n for n in ran.notices(0) + ran.notices(1) if "Documentation" in n]


def test_an_unreachable_server_costs_only_a_notice(tmp_path: Path) -> None:
    port = free_port()  # a port nobody listens on
    spec = {"type": "http", "url": f"http://127.0.0.1:{port}/mcp", "startup_timeout": 2}
    root, _ = new_folder(tmp_path, spec)
    ran = run_session(tmp_path, root, [ENGLISH], [reply("from memory")])
    notices = ran.notices()
    assert len(notices) == 1 and "The MCP server 'forge' could not start" in notices[0]
    assert section(ran.requests[0].system) == ""
    last = ran.events[0][-1]
    assert isinstance(last, RunFinished) and (last.reason, last.steps) == ("finished", 1)


def test_a_server_that_does_not_answer_in_time_costs_the_timeout_and_a_notice(
    tmp_path: Path,
) -> None:
    root, log = new_folder(tmp_path, standin_spec(tmp_path / "forge.log", delay=30))
    ran = run_session(tmp_path, root, [ENGLISH], [reply("from memory")])
    assert ran.notices() == [f"The documentation search on 'forge' failed (no answer within "
                             f"{SEARCH_TIMEOUT:g} s); the run goes on without it."]
    assert section(ran.requests[0].system) == "" and len(searches(log)) == 1
    assert isinstance(ran.events[0][-1], RunFinished) and ran.events[0][-1].reason == "finished"


def test_forge_false_switches_the_search_off(tmp_path: Path) -> None:
    root, log = new_folder(tmp_path)
    ran = run_session(tmp_path, root, [ENGLISH], [reply("ok")],
                      knowledge=KnowledgeSettings(forge=False))
    assert searches(log) == [] and section(ran.requests[0].system) == ""


class StandinPack(TotalJs):
    """The Total.js pack, with the stand-in as its built-in documentation server."""

    def __init__(self, log: Path) -> None:
        self.log = log

    def server_config(self) -> dict[str, Any]:
        return {**standin_spec(self.log), "startup_timeout": 20}


def test_the_built_in_server_asks_before_it_starts(tmp_path: Path) -> None:
    root = tmp_path / "project"
    root.mkdir()
    log = tmp_path / "forge.log"
    pack = StandinPack(log)
    ran = run_session(tmp_path, root, ["hola", SPANISH], [reply("a"), reply("b")], pack=pack)
    assert "forge__Forge_search" not in [t.name for t in ran.requests[0].tools]  # not yet
    assert "forge__Forge_search" in [t.name for t in ran.requests[1].tools]
    assert searches(log)[0]["product"] == "jcomponent"
    # nobody to ask (headless, no rule): not started, said once, the run goes on
    other = tmp_path / "headless"
    other.mkdir()
    ran = run_session(other, other, [SPANISH, ENGLISH], [reply("a"), reply("b")],
                      mode="headless", pack=StandinPack(tmp_path / "none.log"))
    assert [n for n in ran.notices(0) if n.startswith("No documentation search")]
    assert ran.notices(1) == [] and calls(tmp_path / "none.log") == []
    # a rule allows it in a headless run; a deny rule keeps it off without a word
    allowed = tmp_path / "allowed"
    allowed.mkdir()
    rule = [Rule("mcp-start", "forge", "allow")]
    ran = run_session(allowed, allowed, [ENGLISH], [reply("a")], mode="headless", rules=rule,
                      pack=StandinPack(tmp_path / "allowed.log"))
    assert len(searches(tmp_path / "allowed.log")) == 1
    denied = tmp_path / "denied"
    denied.mkdir()
    ran = run_session(denied, denied, [ENGLISH], [reply("a")], mode="yes",
                      rules=[Rule("mcp-start", "forge", "deny")],
                      pack=StandinPack(tmp_path / "denied.log"))
    assert ran.notices() == [] and calls(tmp_path / "denied.log") == []
    assert all(not isinstance(e, Notice) or "forge" not in e.text for e in ran.events[0])


def test_the_built_in_server_is_forge_and_its_question_says_where_searches_go() -> None:
    from totem.knowledge.session import server_from_spec
    from totem.knowledge.totaljs import TOTALJS
    from totem.mcp.config import HttpServer, describe_server

    server = server_from_spec(TOTALJS.server, TOTALJS.server_config(), source="built in")
    assert isinstance(server, HttpServer) and server.name == "forge"
    assert describe_server(server) == "https://forge.totaljs.es/mcp/  (streamable HTTP)"
    assert server.startup_timeout <= 3 and not server.headers  # no account, a short start
