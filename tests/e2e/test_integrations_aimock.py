"""Each integration in a real `totem run` in a terminal against the aimock simulator: the
model's tool call, the question the person answers, and the result the model gets back."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.aimock import Aimock, aimock_fixture, fixture
from tests.support.integration_servers import image_server, search_server, slack_server
from tests.support.terminal import in_terminal
from totem.cli.render import PERMISSION_CHOICES

pytestmark = pytest.mark.aimock

TOKEN = "xoxb-5555-6666-e2etokene2etoken"
KEY = "integration-key-0123456789"


def calls(prompt: str, name: str, arguments: dict[str, Any], answer: str) -> list[dict[str, Any]]:
    return [fixture(prompt, {"toolCalls": [{"name": name, "arguments": arguments}]}, 0),
            fixture(prompt, {"content": answer}, 1)]


FIXTURES = [
    *calls("tell the team the build is green", "slack",
           {"action": "post", "channel": "C0GENERAL", "text": "The build is green"},
           "Told the team."),
    *calls("search for python style", "websearch", {"query": "python style", "limit": 2},
           "Found PEP 8."),
    *calls("draw a fox", "image", {"prompt": "A red fox", "path": "fox.png"}, "Drew it."),
    *calls("say hello", "tts", {"text": "Hello from totem", "path": "hello.wav"}, "Said it."),
    *calls("make a reviewer agent", "agent_create",
           {"name": "reviewer", "description": "Reviews diffs", "prompt": "You review."},
           "Made it."),
]

aimock = aimock_fixture(FIXTURES)


@pytest.fixture
def servers() -> Iterator[dict[str, str]]:
    with slack_server(TOKEN) as (slack, _), search_server(KEY) as search, \
            image_server(KEY) as image:
        yield {"slack": slack.url, "search": search.url, "image": image.url}


def run(tmp: Path, aimock: Aimock, servers: dict[str, str], prompt: str) -> str:
    root = tmp / "project"
    root.mkdir(exist_ok=True)
    config = tmp / "totem.yaml"
    config.write_text(json.dumps({
        "model": "mock/totem-test",
        "knowledge": {"totaljs": "never"},  # no documentation server: nothing leaves the host
        "providers": {"mock": {"kind": "openai", "base_url": aimock.url}},
        "integrations": {
            "slack": {"token": "${env:TOTEM_E2E_SLACK}", "base_url": servers["slack"] + "/api"},
            "tts": {"engine": "espeak-ng"},
            "image": {"base_url": servers["image"] + "/v1", "key": "${env:TOTEM_E2E_KEY}",
                      "size": "4x3"},
            "agents": True,
        },
        "tools": {"websearch": {"backend": "brave", "key": "${env:TOTEM_E2E_KEY}",
                                "url": servers["search"] + "/res/v1/web/search"}},
    }))
    env = {**os.environ, "TOTEM_CONFIG": str(config), "XDG_DATA_HOME": str(tmp / "data"),
           "XDG_CONFIG_HOME": str(tmp / "cfg"), "TOTEM_E2E_SLACK": TOKEN,
           "TOTEM_E2E_KEY": KEY, "PYTHONPATH": str(Path(__file__).parents[2] / "src")}
    return in_terminal([sys.executable, "-m", "totem", "run", prompt], cwd=root, env=env,
                       prompt=PERMISSION_CHOICES.strip().encode(), answer=b"y\n", timeout=90)


CASES = {
    "slack": ("tell the team the build is green",
              "? slack wants to post to Slack C0GENERAL: The build is green",
              "Posted to C0GENERAL (ts 1700000001.000100).", "Told the team."),
    "websearch": ("search for python style", "? websearch wants to search the web for "
                  "'python style'", "1. Python docs", "Found PEP 8."),
    "image": ("draw a fox", "? image wants to generate an image with gpt-image-1 at 127.0.0.1 "
              "and save it as fox.png: A red fox", "Saved fox.png (4x3 PNG", "Drew it."),
    "tts": ("say hello", "? tts wants to speak 16 characters with espeak-ng into hello.wav",
            "Saved hello.wav (", "Said it."),
    "agent_create": ("make a reviewer agent", "? agent_create wants to save the agent "
                     "'reviewer' for this project:", "Saved the agent 'reviewer' for this "
                     "project.", "Made it."),
}


@pytest.mark.parametrize("tool", list(CASES))
def test_a_run_shows_the_call_the_question_and_the_result(
        tool: str, aimock: Aimock, servers: dict[str, str], tmp_path: Path) -> None:
    prompt, question, result, answer = CASES[tool]
    screen = run(tmp_path, aimock, servers, prompt)
    assert f"● {tool} " in screen, screen
    assert question in screen, screen
    assert f"└ {result}" in screen, screen
    assert screen.index(f"● {tool}") < screen.index(question) < screen.index(f"└ {result}") \
        < screen.rindex(answer), screen
    assert "mcp wants" not in screen
    assert TOKEN not in screen and KEY not in screen
    sent = [e for e in aimock.journal() if _user(e) == prompt][-1]["body"]["messages"]
    back = next(m for m in sent if m["role"] == "tool")
    assert result in back["content"]
    if tool == "websearch":
        assert "2. PEP 8\n   https://peps.python.org/pep-0008/" in back["content"]
    if tool == "tts":
        assert (tmp_path / "project/hello.wav").stat().st_size > 1000


def _user(entry: dict[str, Any]) -> str:
    users = [m for m in entry["body"].get("messages", []) if m["role"] == "user"]
    return str(users[-1]["content"]) if users else ""
