"""The chat in a real terminal (a pty), against the package's fake OpenAI server: a paste is
one message, and a permission question is answered only by keys typed after it appears."""

from __future__ import annotations

import contextlib
import os
import pty
import re
import select
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.sandbox import require_bwrap
from totem.store.sqlite import SqliteStore
from totem.testing.fake_server import FakeOpenAIServer

PASTE_START, PASTE_END = b"\x1b[200~", b"\x1b[201~"
PASTE_ON, PASTE_OFF = b"\x1b[?2004h", b"\x1b[?2004l"
QUESTION = "[y] once"
_ESCAPES = re.compile(r"\x1b\[[0-9;?]*[A-Za-z~]")


class Terminal:
    """`totem` (the chat) on a pseudo-terminal; what it printed, without colours."""

    def __init__(self, root: Path, env: dict[str, str]) -> None:
        master, slave = pty.openpty()
        self.master = master
        self.process = subprocess.Popen(
            [sys.executable, "-m", "totem"], cwd=root, env=env,
            stdin=slave, stdout=slave, stderr=slave, start_new_session=True,
        )
        os.close(slave)
        self.raw = b""

    @property
    def screen(self) -> str:
        return _ESCAPES.sub("", self.raw.decode(errors="replace"))

    def _read(self, wait: float) -> bool:
        ready, _, _ = select.select([self.master], [], [], wait)
        if not ready:
            return True
        try:
            data = os.read(self.master, 4096)
        except OSError:  # the other side closed
            return False
        self.raw += data
        return bool(data)

    def expect(self, text: str, count: int = 1) -> None:
        """Read until `text` has been printed `count` times."""
        deadline = time.monotonic() + 60
        while self.screen.count(text) < count:
            if time.monotonic() > deadline or not self._read(0.2):
                pytest.fail(f"never saw {text!r} x{count}; the screen:\n{self.screen}")

    def send(self, data: bytes) -> None:
        os.write(self.master, data)

    def paste(self, text: bytes) -> None:
        """Paste as a terminal does: bracketed only if the program turned that mode on."""
        self._read(0.1)
        bracketed = self.raw.rfind(PASTE_ON) > self.raw.rfind(PASTE_OFF)
        self.send(PASTE_START + text + PASTE_END if bracketed else text)

    def leave(self) -> int:
        """Ctrl-D at the prompt; the exit status."""
        deadline = time.monotonic() + 60
        while not self.screen.rstrip().endswith("›") and time.monotonic() < deadline:
            self._read(0.2)
        self.send(b"\x04")
        deadline = time.monotonic() + 30
        while self.process.poll() is None and time.monotonic() < deadline:
            self._read(0.1)
        if self.process.poll() is None:
            self.process.kill()
        return self.process.wait(timeout=10)


@pytest.fixture
def chat(tmp_path: Path) -> Iterator[Any]:
    root = tmp_path / "project"
    root.mkdir()
    servers: list[FakeOpenAIServer] = []
    terminals: list[Terminal] = []

    def start(
        turns: list[dict[str, Any]], rules: str = "", *, sandbox: str | None = "off"
    ) -> tuple[Terminal, FakeOpenAIServer]:
        """The chat against a fake server playing `turns`. These tests are about questions
        in a terminal, so commands run outside the sandbox (asked for) unless `sandbox`
        says otherwise (None: the config does not say, the default holds)."""
        server = FakeOpenAIServer(turns, models=["m"])
        url = server_url(server)
        servers.append(server)
        mode = f"sandbox: {sandbox}\n" if sandbox else ""
        (tmp_path / "totem.yaml").write_text(
            f"model: fake/m\nproviders:\n  fake: {{kind: openai, base_url: '{url}'}}\n"
            f"totaljs: never\nforge: false\n{mode}{rules}"
        )
        env = dict(
            os.environ, XDG_DATA_HOME=str(tmp_path / "data"),
            XDG_CONFIG_HOME=str(tmp_path / "config"), XDG_CACHE_HOME=str(tmp_path / "cache"),
            TOTEM_CONFIG=str(tmp_path / "totem.yaml"), TERM="xterm",
        )
        terminal = Terminal(root, env)
        terminals.append(terminal)
        terminal.expect("› ")
        return terminal, server

    contexts: list[Any] = []

    def server_url(server: FakeOpenAIServer) -> str:
        context = server.in_thread()
        contexts.append(context)
        return context.__enter__()

    start.root = root  # type: ignore[attr-defined]
    try:
        yield start
    finally:
        for terminal in terminals:
            if terminal.process.poll() is None:
                terminal.process.kill()
                terminal.process.wait(timeout=10)
            with contextlib.suppress(OSError):
                os.close(terminal.master)
        for context in contexts:
            context.__exit__(None, None, None)


def chats(server: FakeOpenAIServer) -> list[dict[str, Any]]:
    return [r.body for r in server.requests if r.path.endswith("/chat/completions")]


BASH_TOUCH = {"tool": "bash", "args": {"command": "touch ran.txt"}}


def test_a_pasted_block_of_four_lines_is_one_message(chat: Any) -> None:
    terminal, server = chat([{"text": "Read all four."}])
    lines = [b"first line", b"second line", b"third line", b"fourth line"]
    terminal.paste(b"\r".join(lines))
    terminal.send(b"\r")
    terminal.expect("Read all four.")
    terminal.expect("── ")
    assert terminal.leave() == 0
    sent = chats(server)
    assert len(sent) == 1
    assert sent[0]["messages"][-1]["content"] == "\n".join(line.decode() for line in lines)


def test_alt_enter_adds_a_line_to_the_message(chat: Any) -> None:
    terminal, server = chat([{"text": "Two lines."}])
    terminal.send(b"one\x1b\rtwo\r")
    terminal.expect("Two lines.")
    assert terminal.leave() == 0
    assert [c["messages"][-1]["content"] for c in chats(server)] == ["one\ntwo"]


def test_a_paste_with_a_blank_line_does_not_answer_a_question(chat: Any) -> None:
    terminal, server = chat([BASH_TOUCH, {"text": "Not run."}])
    terminal.send(b"make the file\r")
    terminal.expect(QUESTION)
    terminal.paste(b"some notes\r\rmore notes")
    terminal.send(b"\r")
    terminal.expect(QUESTION, 2)  # asked again
    terminal.send(b"some notes\r\rmore notes\r")  # a terminal without bracketed paste
    terminal.expect(QUESTION, 3)
    terminal.send(b"n\r")
    terminal.expect("Not run.")
    assert terminal.leave() == 0
    assert not (chat.root / "ran.txt").exists()
    assert "rejected" in chats(server)[-1]["messages"][-1]["content"]


def test_a_blank_enter_asks_again(chat: Any) -> None:
    terminal, _ = chat([BASH_TOUCH, {"text": "Made it."}])
    terminal.send(b"make the file\r")
    terminal.expect(QUESTION)
    terminal.send(b"\r")
    terminal.expect(QUESTION, 2)
    assert not (chat.root / "ran.txt").exists()
    terminal.send(b"y\r")
    terminal.expect("Made it.")
    assert terminal.leave() == 0
    assert (chat.root / "ran.txt").exists()


def test_keys_typed_before_the_question_do_not_answer_it(chat: Any) -> None:
    rules = "permission:\n  - {permission: bash, pattern: 'sleep *', action: allow}\n"
    sleep = {"tool": "bash", "args": {"command": "sleep 3"}}
    terminal, _ = chat([sleep, BASH_TOUCH, {"text": "Stopped there."}], rules)
    terminal.send(b"sleep, then make the file\r")
    terminal.expect("● bash sleep 3")
    terminal.send(b"y\r")  # typed while the sleep runs, before any question
    terminal.expect(QUESTION)
    terminal.send(b"n\r")
    terminal.expect("Stopped there.")
    assert terminal.leave() == 0
    assert not (chat.root / "ran.txt").exists()


def test_always_stores_exactly_what_the_question_shows(chat: Any) -> None:
    turns = [{"tool": "bash", "args": {"command": "ls | wc -l && rm -f p2.txt"}},
             {"text": "Removed."},
             {"tool": "bash", "args": {"command": "rm -f other.txt"}}, {"text": "Kept."}]
    terminal, _ = chat(turns)
    root: Path = chat.root
    (root / "p2.txt").write_text("x")
    (root / "other.txt").write_text("y")
    terminal.send(b"clean up\r")
    terminal.expect(QUESTION)
    assert "always allows, in this project: ls *, wc *, rm -f p2.txt" in terminal.screen
    terminal.send(b"a\r")
    terminal.expect("Removed.")
    terminal.send(b"and the other one\r")
    terminal.expect(QUESTION, 2)  # the rule for `rm -f p2.txt` does not cover it
    terminal.send(b"n\r")
    terminal.expect("Kept.")
    assert terminal.leave() == 0
    assert not (root / "p2.txt").exists() and (root / "other.txt").exists()
    store = SqliteStore(root.parent / "data" / "totem" / "totem.db")
    stored = {rule.pattern for rule in store.remembered_rules(str(root.resolve()))}
    assert stored == {"ls *", "wc *", "rm -f p2.txt"}



def test_in_the_sandbox_a_command_runs_unasked_and_leaving_it_is_asked(chat: Any) -> None:
    """The default config (no `sandbox:`): a command inside the sandbox runs with no question
    and cannot write outside the project; one the model asks to run outside it is a question
    of its own, with the reason, and the answer typed here lets it out."""
    require_bwrap()
    inside = {"tool": "bash", "args": {"command": "touch ran.txt; touch ../escaped.txt"}}
    leave = {"tool": "bash", "args": {"command": "touch ../outside.txt", "sandbox": False,
                                      "reason": "the build writes beside the project"}}
    terminal, server = chat([inside, {"text": "Inside."}, leave, {"text": "Outside."}],
                            sandbox=None)
    root: Path = chat.root
    terminal.send(b"make the files\r")
    terminal.expect("Inside.")
    assert QUESTION not in terminal.screen
    assert (root / "ran.txt").exists() and not (root.parent / "escaped.txt").exists()
    assert "Read-only file system" in chats(server)[-1]["messages"][-1]["content"]
    terminal.send(b"now the one outside\r")
    terminal.expect(QUESTION)
    assert "OUTSIDE the sandbox (reason: the build writes beside the project)" in terminal.screen
    assert not (root.parent / "outside.txt").exists()
    terminal.send(b"y\r")
    terminal.expect("Outside.")
    assert terminal.leave() == 0
    assert (root.parent / "outside.txt").exists()

SLEEP_RULE = "permission:\n  - {permission: bash, pattern: 'sleep *', action: allow}\n"


def test_a_paste_made_while_the_agent_works_is_one_message(chat: Any) -> None:
    turns = [{"tool": "bash", "args": {"command": "sleep 2"}}, {"text": "Slept."},
             {"text": "One message."}]
    terminal, server = chat(turns, SLEEP_RULE)
    terminal.send(b"sleep\r")
    terminal.expect("● bash sleep 2")
    terminal.paste(b"alpha\rbeta\rgamma")
    terminal.send(b"\r")
    terminal.expect("One message.")
    assert terminal.leave() == 0
    assert [c["messages"][-1]["content"] for c in chats(server)][-1] == "alpha\nbeta\ngamma"
    assert len(chats(server)) == 3


def test_ctrl_d_typed_while_the_agent_works_leaves_after_the_answer(chat: Any) -> None:
    terminal, _ = chat([{"tool": "bash", "args": {"command": "sleep 2"}}, {"text": "Slept."}],
                       SLEEP_RULE)
    terminal.send(b"sleep\r")
    terminal.expect("● bash sleep 2")
    terminal.send(b"\x04")
    terminal.expect("Slept.")
    assert terminal.process.wait(timeout=30) == 0


def test_an_mcp_resource_mention_and_a_server_prompt(chat: Any) -> None:
    from tests.support.mcp_servers import EVERYTHING, node

    doc = "demo://resource/static/document/architecture.md"
    mcp = f"mcp:\n  everything: {{command: '{node()}', args: ['{EVERYTHING}', 'stdio']}}\n"
    terminal, server = chat([{"text": "The architecture."}, {"text": "Prompted."}], mcp)
    terminal.send(f"what is @everything:{doc}?\r".encode())
    terminal.expect(QUESTION)  # the server asks before it starts, as in a run
    assert "start the MCP server 'everything'" in terminal.screen
    terminal.send(b"y\r")
    terminal.expect("The architecture.")
    assert f"Attached everything:{doc}." in terminal.screen
    terminal.expect("› ", 2)
    terminal.send(b"/everything:args-pr\t")  # Tab completes the server's prompt
    terminal.send(b" Paris\r")
    terminal.expect("Prompted.")
    terminal.send(b"/everything:args-prompt\r")
    terminal.expect("needs city")
    assert terminal.leave() == 0
    first, second = (c["messages"][-1]["content"] for c in chats(server))
    assert first.startswith(f"what is @everything:{doc}?\n\n<resource")
    assert "# Everything Server – Architecture" in first
    assert "Paris" in second and "/everything" not in second
