"""Provider templates: data only, every one usable by `providers add`."""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest

from totem.providers.catalog.detect import default_ports
from totem.providers.catalog.templates import template, templates
from totem.providers.registry import OPENAI_KINDS

ADAPTER_KINDS = OPENAI_KINDS | {"ollama", "anthropic", "gemini", "bedrock", "litellm"}
SPEC_P7 = ["vllm", "xai", "fireworks", "cerebras", "huggingface", "nvidia", "moonshot", "cohere",
           "openai", "openrouter", "groq", "deepseek", "mistral", "other"]
OTHERS = ["anthropic", "gemini", "bedrock", "ollama", "lmstudio", "llamacpp", "litellm"]


def test_every_template_the_spec_names_is_there() -> None:
    ids = [t.id for t in templates()]
    assert len(ids) == len(set(ids))
    for wanted in SPEC_P7 + OTHERS:
        assert wanted in ids


def test_templates_are_well_formed() -> None:
    for tpl in templates():
        assert tpl.kind in ADAPTER_KINDS, tpl
        assert tpl.label
        if tpl.needs_key:
            assert tpl.key_env, tpl
        if tpl.local:
            parts = urlsplit(tpl.base_url)
            assert (parts.scheme, parts.hostname, parts.port) == ("http", "127.0.0.1", tpl.port)
        elif tpl.base_url:
            assert tpl.base_url.startswith("https://") or tpl.id == "litellm", tpl
        assert not tpl.base_url.endswith("/")


def test_the_usual_variables_and_addresses() -> None:
    groq = template("groq")
    assert (groq.kind, groq.base_url, groq.key_env) == (
        "openai", "https://api.groq.com/openai/v1", "GROQ_API_KEY")
    assert template("huggingface").base_url == "https://router.huggingface.co/v1"
    assert template("cohere").base_url.endswith("/compatibility/v1")
    assert template("openai").options == {"max_tokens_field": "max_completion_tokens"}
    other = template("other")
    assert (other.kind, other.base_url, other.needs_key) == ("openai", "", False)


def test_lookup_ignores_case_and_names_the_known_ids() -> None:
    assert template(" Groq ").id == "groq"
    with pytest.raises(KeyError, match="known: ollama, "):
        template("perplexity")


def test_local_servers_are_probed_on_their_usual_ports() -> None:
    assert default_ports() == {"ollama": 11434, "lmstudio": 1234, "llamacpp": 8080,
                               "vllm": 8000, "litellm": 4000}
    assert template("litellm").local is False  # listed with the remote providers
