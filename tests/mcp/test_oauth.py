"""OAuth sign-in against a real Python-SDK server with its own authorization server on
127.0.0.1, the browser step done by headless Chromium: the question before the browser,
dynamic registration, PKCE, tokens in the 0600 key store only, reuse by a later session,
refresh of an expired token, headless advice, and `totem mcp login`."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.mcp_oauth import CHROMIUM_ALLOW, ChromiumSignIn, chromium, running_oauth_server
from tests.support.mcp_servers import Person, by_name
from totem.events import Notice, QuestionAsked
from totem.mcp.config import HttpServer
from totem.mcp.manager import NOT_NOW, SIGN_IN, McpManager
from totem.mcp.oauth_store import token_key
from totem.policy.permission import Rule

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def config_home(tmp_path: Path) -> Iterator[Path]:
    """The key store of this test alone (XDG_CONFIG_HOME), put back afterwards."""
    home = tmp_path / "config"
    before = os.environ.get("XDG_CONFIG_HOME")
    os.environ["XDG_CONFIG_HOME"] = str(home)
    yield home
    if before is None:
        os.environ.pop("XDG_CONFIG_HOME", None)
    else:
        os.environ["XDG_CONFIG_HOME"] = before


def keys(home: Path) -> dict[str, str]:
    return dict(json.loads((home / "totem" / "keys.json").read_text()))


def signing_person(root: Path, answer: str, log: list[str]) -> Person:
    def reply(question: QuestionAsked) -> str:
        log.append("asked")
        return answer

    return Person(root, reply="once", answer=reply)


async def start_and_read(root: Path, server: HttpServer, person: Person, **kw: object) -> str:
    async with McpManager(root, {server.name: server}, permission=person.permission,
                          questions=person.questions, log_dir=root / "logs",
                          **kw) as manager:  # type: ignore[arg-type]
        tools = by_name(manager.tools)
        if "notes__read_notes" not in tools:
            return "not started: " + manager.status()[0].detail
        return (await person.call(tools["notes__read_notes"])).output.splitlines()[0]


def test_sign_in_through_the_browser_then_later_sessions_reuse_and_refresh(
    tmp_path: Path, config_home: Path
) -> None:
    order: list[str] = []
    browser = ChromiumSignIn(log=order)
    with running_oauth_server(tmp_path) as (server, events):
        person = signing_person(tmp_path, SIGN_IN, order)
        output = asyncio.run(start_and_read(tmp_path, server, person, open_url=browser))
        assert output == "note 1: buy milk"
        assert order == ["asked", "browser opened"]  # the question comes first
        question = person.of(QuestionAsked)[0]
        assert "'notes' asks you to sign in" in question.question
        assert question.options == [SIGN_IN, NOT_NOW]
        assert "Signed in" in browser.landed
        seen = events()
        assert [e["event"] for e in seen] == ["register", "authorize", "page", "token"]
        assert seen[1]["pkce"] and seen[0]["redirect_uris"][0].startswith("http://127.0.0.1:")

        # the tokens are in the key store (0600) and nowhere else
        store = config_home / "totem" / "keys.json"
        assert stat.S_IMODE(store.stat().st_mode) == 0o600
        entry = json.loads(keys(config_home)[token_key("notes", server.url)])
        access = entry["tokens"]["access_token"]
        for path in (tmp_path / "logs").rglob("*"):
            assert access not in path.read_text(errors="replace")
        assert all(access not in str(e) for e in person.events)

        # a later session uses the stored token: no question, no browser, no new grant
        later = signing_person(tmp_path, NOT_NOW, order)
        assert asyncio.run(start_and_read(tmp_path, server, later)) == "note 1: buy milk"
        assert later.of(QuestionAsked) == []
        assert [e["event"] for e in events()] == ["register", "authorize", "page", "token"]

        # an expired token is refreshed before the first request, without asking
        entry["expires_at"] = 1.0
        data = keys(config_home)
        data[token_key("notes", server.url)] = json.dumps(entry)
        store.write_text(json.dumps(data))
        again = signing_person(tmp_path, NOT_NOW, order)
        assert asyncio.run(start_and_read(tmp_path, server, again)) == "note 1: buy milk"
        assert again.of(QuestionAsked) == []
        assert events()[-1] == {"event": "token", "grant": "refresh_token"}
        refreshed = json.loads(keys(config_home)[token_key("notes", server.url)])
        assert refreshed["tokens"]["access_token"] != access
        assert refreshed["expires_at"] > 1.0


def test_declined_or_headless_sign_in_opens_no_browser(tmp_path: Path, config_home: Path) -> None:
    order: list[str] = []
    browser = ChromiumSignIn(log=order)
    with running_oauth_server(tmp_path) as (server, events):
        declined = signing_person(tmp_path, NOT_NOW, order)
        output = asyncio.run(start_and_read(tmp_path, server, declined, open_url=browser))
        assert output == "not started: signing in was declined"
        assert order == ["asked"] and browser.opened == []

        headless = Person(tmp_path, mode="headless", rules=[
            Rule("mcp-start", "notes", "allow"), Rule("mcp", "notes__*", "allow")])
        output = asyncio.run(start_and_read(tmp_path, server, headless, open_url=browser))
        assert "run `totem mcp login notes` once" in output
        assert browser.opened == []
        warnings = [n.text for n in headless.of(Notice) if n.level == "warning"]
        assert any("totem mcp login notes" in w for w in warnings)
        assert "token" not in [e["event"] for e in events()]
    assert not (config_home / "totem" / "keys.json").exists() or not any(
        "tokens" in v for v in keys(config_home).values())


def test_mcp_login_signs_in_once_for_headless_runs(tmp_path: Path, config_home: Path) -> None:
    chromium()
    project = tmp_path / "project"
    (project / ".totem").mkdir(parents=True)
    env = {**os.environ, "PYTHONPATH": f"{ROOT / 'src'}{os.pathsep}{ROOT}",
           "XDG_CONFIG_HOME": str(config_home), "XDG_DATA_HOME": str(tmp_path / "data"),
           "XDG_CACHE_HOME": str(tmp_path / "cache"),
           "BROWSER": f"{sys.executable} {CHROMIUM_ALLOW} %s"}
    with running_oauth_server(tmp_path) as (server, events):
        (config_home / "totem").mkdir(parents=True, exist_ok=True)
        (config_home / "totem" / "config.yaml").write_text(  # the person's own config
            f"mcp:\n  notes: {{type: http, url: '{server.url}'}}\n")
        done = subprocess.run([sys.executable, "-m", "totem", "mcp", "login", "notes"],
                              cwd=project, env=env, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stdout + done.stderr
        assert "Signed in to 'notes'" in done.stdout
        assert "Sign in to the MCP server 'notes' in the browser: http://127.0.0.1:" in done.stderr
        assert [e["event"] for e in events()] == ["register", "authorize", "page", "token"]
        access = json.loads(keys(config_home)[token_key("notes", server.url)])["tokens"]
        assert access["access_token"] not in done.stdout + done.stderr

        # a headless run now starts the server with the stored token
        env.pop("BROWSER")
        test = subprocess.run([sys.executable, "-m", "totem", "mcp", "test", "notes", "--yes"],
                              cwd=project, env=env, capture_output=True, text=True, timeout=120)
        assert test.returncode == 0, test.stdout + test.stderr
        assert "read_notes" in test.stdout
        assert len(events()) == 4

        out = subprocess.run([sys.executable, "-m", "totem", "mcp", "logout", "notes"],
                             cwd=project, env=env, capture_output=True, text=True, timeout=60)
        assert "Forgot the tokens of 'notes'" in out.stdout
        assert token_key("notes", server.url) not in keys(config_home)


def test_the_person_may_take_longer_than_the_servers_startup_timeout(
    tmp_path: Path, config_home: Path
) -> None:
    order: list[str] = []
    browser = ChromiumSignIn(log=order)

    async def slow_person(url: str) -> None:
        await asyncio.sleep(3)  # reading the page, longer than the 1 s the server is given
        await browser(url)

    with running_oauth_server(tmp_path) as (server, _):
        quick = dataclasses.replace(server, startup_timeout=1.0)
        person = signing_person(tmp_path, SIGN_IN, order)
        output = asyncio.run(start_and_read(tmp_path, quick, person, open_url=slow_person))
        assert output == "note 1: buy milk"
