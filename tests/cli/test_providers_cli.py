"""`totem providers` and `totem models`, run in-process with the XDG folders in tmp_path.

The parsers come from the modules' own `add_parsers`, exactly what `totem` wires in; the
key store is the real file; the servers are the fake OpenAI server shipped in the package.
"""

from __future__ import annotations

import argparse
import io
import json
import stat
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from totem.cli import models as models_cli
from totem.cli import providers as providers_cli
from totem.testing.fake_server import FakeOpenAIServer

KEY = "gsk_test_4f1b9c2d7e3a5b6c8d9e0f1a2b3c"
SERVER_KEY = "sk-local-server-5e6f7a8b9c0d"


@dataclass
class Cli:
    tmp: Path
    capsys: pytest.CaptureFixture[str]
    monkeypatch: pytest.MonkeyPatch

    @property
    def config_dir(self) -> Path:
        return self.tmp / "config" / "totem"

    def config(self) -> dict[str, Any]:
        data: dict[str, Any] = yaml.safe_load((self.config_dir / "config.yaml").read_text())
        return data

    def __call__(self, *argv: str, stdin: str = "") -> tuple[int, str, str]:
        parser = argparse.ArgumentParser(prog="totem")
        sub = parser.add_subparsers(dest="command")
        providers_cli.add_parsers(sub)
        models_cli.add_parsers(sub)
        args = parser.parse_args(list(argv))
        self.monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
        code: int = args.handler(args)
        out, err = self.capsys.readouterr()
        return code, out, err


@pytest.fixture
def cli(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> Iterator[Cli]:
    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.delenv("TOTEM_CONFIG", raising=False)
    monkeypatch.delenv("GROQ_API_KEY", raising=False)
    monkeypatch.chdir(project)
    yield Cli(tmp_path, capsys, monkeypatch)


def test_add_from_a_template_stores_the_key_outside_the_config(cli: Cli) -> None:
    code, out, err = cli("providers", "add", "groq", stdin=KEY + "\n")
    assert code == 0, err
    spec = cli.config()["providers"]["groq"]
    assert spec == {
        "kind": "openai",
        "base_url": "https://api.groq.com/openai/v1",
        "key": "${key:groq}",
    }
    keys = cli.config_dir / "keys.json"
    assert json.loads(keys.read_text()) == {"groq": KEY}
    assert stat.S_IMODE(keys.stat().st_mode) == 0o600
    assert stat.S_IMODE(cli.config_dir.stat().st_mode) == 0o700
    assert KEY not in out + err
    assert KEY not in (cli.config_dir / "config.yaml").read_text()
    assert KEY[-4:] in out  # masked: the last four characters at most
    code, out, err = cli("providers")
    assert code == 0
    assert "groq" in out and "stored" in out and KEY not in out + err


def test_add_keeps_the_rest_of_the_user_config(cli: Cli) -> None:
    cli.config_dir.mkdir(parents=True)
    (cli.config_dir / "config.yaml").write_text(
        "model: local/qwen\nmaxsteps: 7\nproviders:\n"
        "  local: {kind: openai, base_url: 'http://127.0.0.1:8080/v1'}\n"
        "permission:\n  bash: {'git status*': allow}\n"
    )
    code, _, err = cli(
        "providers", "add", "other", "--url", "http://127.0.0.1:9/v1/", "--name", "mine"
    )
    assert code == 0, err
    data = cli.config()
    assert data["model"] == "local/qwen" and data["maxsteps"] == 7
    assert data["permission"] == {"bash": {"git status*": "allow"}}
    assert data["providers"]["local"] == {"kind": "openai", "base_url": "http://127.0.0.1:8080/v1"}
    assert data["providers"]["mine"] == {"kind": "openai", "base_url": "http://127.0.0.1:9/v1"}
    assert (cli.config_dir / "config.yaml.bak").read_text().startswith("model: local/qwen")
    assert not (cli.config_dir / "keys.json").exists()  # `other` asks for no key


def test_add_refuses_what_it_cannot_do(cli: Cli) -> None:
    assert cli("providers", "add", "other")[0] == 2  # no --url
    code, _, err = cli("providers", "add", "perplexity")
    assert code == 2 and "known:" in err and "groq" in err
    assert cli("providers", "add", "groq", "--key-env", "GROQ_API_KEY")[0] == 0
    code, _, err = cli("providers", "add", "groq", stdin=KEY)
    assert code == 2 and "exists already" in err
    assert cli("providers", "add", "groq", "--force", stdin=KEY)[0] == 0
    assert cli.config()["providers"]["groq"]["key"] == "${key:groq}"
    assert cli("providers", "add", "groq", "--name", "a/b")[0] == 2


def test_a_key_from_the_environment_is_referenced_not_copied(cli: Cli) -> None:
    code, out, _ = cli("providers", "add", "groq", "--key-env", "GROQ_API_KEY")
    assert code == 0 and "$GROQ_API_KEY" in out
    assert cli.config()["providers"]["groq"]["key"] == "${env:GROQ_API_KEY}"
    assert "$GROQ_API_KEY (not set)" in cli("providers")[1]
    cli.monkeypatch.setenv("GROQ_API_KEY", KEY)
    _, out, err = cli("providers")
    assert "$GROQ_API_KEY" in out and "not set" not in out and KEY not in out + err
    # no key typed: the template's usual variable is referenced
    code, out, _ = cli("providers", "add", "openai", stdin="")
    assert code == 0 and cli.config()["providers"]["openai"]["key"] == "${env:OPENAI_API_KEY}"
    assert cli.config()["providers"]["openai"]["options"] == {
        "max_tokens_field": "max_completion_tokens"
    }


def test_remove_forgets_the_provider_and_its_key(cli: Cli) -> None:
    cli("providers", "add", "groq", stdin=KEY)
    cli("providers", "add", "deepseek", stdin="sk-deepseek-0123456789abcdef")
    code, out, _ = cli("providers", "remove", "groq")
    assert code == 0 and "stored key" in out
    assert "groq" not in cli.config()["providers"]
    assert json.loads((cli.config_dir / "keys.json").read_text()) == {
        "deepseek": "sk-deepseek-0123456789abcdef"
    }
    code, _, err = cli("providers", "remove", "groq")
    assert code == 2 and "no provider named groq" in err


def test_test_and_models_against_a_server_that_wants_the_key(cli: Cli) -> None:
    server = FakeOpenAIServer(models=["gpt-4o", "house-model"], api_key=SERVER_KEY)
    with server.in_thread() as url:
        assert (
            cli(
                "providers",
                "add",
                "other",
                "--url",
                url,
                "--name",
                "house",
                "--ask-key",
                stdin=SERVER_KEY + "\n",
            )[0]
            == 0
        )
        code, out, err = cli("providers", "test", "house")
        assert code == 0, out + err
        assert "house: OK, 2 models: gpt-4o, house-model" in out
        code, out, err = cli("models", "house")
        assert code == 0, err
        table = out.splitlines()
        gpt = next(line for line in table if line.startswith("gpt-4o"))
        assert "128,000" in gpt and "2.50 / 10.00" in gpt and "builtin" in gpt
        house = next(line for line in table if line.startswith("house-model"))
        assert house.split()[1:] == ["unknown"] * 7  # never a guessed number, source unknown
        code, out, _ = cli("models", "--json")
        rows = json.loads(out)
        assert rows[1] == {
            "id": "house-model",
            "provider": "house",
            "context_window": None,
            "max_output": None,
            "tools": None,
            "reasoning": None,
            "vision": None,
            "price": None,
            "source": "unknown",
            "tools_unreliable": False,
        }
        # a wrong key: the error is shown plainly, the key is not
        cli(
            "providers",
            "add",
            "other",
            "--url",
            url,
            "--name",
            "wrong",
            "--ask-key",
            stdin="sk-wrong-key-000000000000\n",
        )
        code, out, err = cli("providers", "test", "wrong")
        assert code == 1 and "401" in out and "Incorrect API key" in out
        assert "sk-wrong-key-000000000000" not in out + err
        code, out, err = cli("models")
        assert code == 1 and "wrong:" in err and "house-model" in out
    assert all(SERVER_KEY not in text for text in (out, err))


def test_unknown_provider_names_are_usage_errors(cli: Cli) -> None:
    assert cli("providers", "test", "nope")[0] == 2
    assert cli("models", "nope")[0] == 2
    code, out, _ = cli("providers")
    assert code == 0 and "No provider is configured" in out


def test_detect_prints_what_answers(cli: Cli) -> None:
    server = FakeOpenAIServer(models=["m1"])
    with server.in_thread() as url:
        port = url.split(":")[2].split("/")[0]
        code, out, _ = cli("providers", "detect", "--port", f"vllm={port}")
    assert code == 0
    assert f"vllm  {url}" in out and "models: m1" in out
    assert f"totem providers add vllm --url {url}" in out
    code, out, _ = cli("providers", "detect", "--port", "vllm=1")
    assert code == 0 and "No model server found" in out
    assert cli("providers", "detect", "--port", "vllm")[0] == 2


def test_templates_are_listed(cli: Cli) -> None:
    code, out, _ = cli("providers", "templates")
    assert code == 0
    for wanted in ("groq", "huggingface", "nvidia", "litellm", "other", "$GROQ_API_KEY"):
        assert wanted in out
