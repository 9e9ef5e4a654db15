"""The model catalogue: the built-in table, what providers report, configuration, cost."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from totem.messages import Usage
from totem.providers.catalog.catalogue import (
    ModelInfo,
    Price,
    builtin_info,
    cost,
    model_info,
    normalize_id,
    reported_from_listing,
    tools_warning,
)
from totem.settings.config import ProviderConfig

TABLE = Path(__file__).resolve().parents[2] / "src/totem/providers/catalog/catalogue.json"


@pytest.mark.parametrize(
    ("model", "normal"),
    [
        ("claude-sonnet-4-5-20250929", "claude-sonnet-4-5"),
        ("us.anthropic.claude-sonnet-4-5-20250929-v1:0", "us.anthropic.claude-sonnet-4-5"),
        ("claude-sonnet-4-5@20250929", "claude-sonnet-4-5"),
        ("openai/gpt-4o-2024-08-06", "gpt-4o"),
        ("models/gemini-2.0-flash", "gemini-2.0-flash"),
        ("Qwen/Qwen2.5-Coder-32B-Instruct", "qwen2.5-coder-32b-instruct"),
        ("ollama_chat/qwen2.5-coder:1.5b", "qwen2.5-coder:1.5b"),
        ("llama3.1:latest", "llama3.1"),
        ("gpt-4-0613", "gpt-4"),
    ],
)
def test_ids_are_normalised_before_matching(model: str, normal: str) -> None:
    assert normalize_id(model) == normal


def test_a_well_known_model_comes_from_the_table() -> None:
    info = model_info(None, "gpt-4o-2024-08-06")
    assert (info.context_window, info.max_output, info.tools, info.vision) == (
        128_000, 16_384, True, True)
    assert info.price == Price(2.5, 10.0, 1.25, None)
    assert info.source == "builtin"
    bedrock = model_info(None, "us.anthropic.claude-sonnet-4-5-20250929-v1:0")
    assert bedrock.price == Price(3.0, 15.0, 0.3, 3.75)
    assert bedrock.reasoning is True


def test_an_unknown_model_stays_unknown() -> None:
    info = model_info(None, "totally-new-model-9000")
    assert info == ModelInfo(id="totally-new-model-9000", provider="")
    assert info.source == "unknown"
    assert cost(Usage(input=1000, output=1000), info.price) is None


def test_a_new_version_of_a_known_family_gets_no_guessed_numbers() -> None:
    info = model_info(None, "claude-opus-4-7")
    assert info.tools is True  # the family calls tools
    assert (info.context_window, info.max_output, info.price) == (None, None, None)
    assert model_info(None, "gpt-5.9").price is None


def test_what_the_provider_reports_wins_and_nulls_do_not_erase() -> None:
    reported = {"context_window": 64_000, "tools": None, "price": {"input": 1, "output": 2}}
    info = model_info(None, "gpt-4o", reported=reported)
    assert info.context_window == 64_000
    assert info.tools is True  # None reported: the table's value stays
    assert info.price == Price(1.0, 2.0)
    assert info.source == "provider"


def test_the_model_behind_an_alias_is_matched_first() -> None:
    info = model_info(None, "my-qwen", reported={"underlying": "ollama_chat/qwen2.5:0.5b"})
    assert info.context_window == 32_768
    assert info.tools_unreliable is True
    assert model_info(None, "gw-model", reported={"underlying": "openai/mock"}).source == "unknown"


def test_the_configuration_wins_over_everything() -> None:
    cfg = ProviderConfig(name="p", kind="openai", models={
        "gpt-4o": {"context": 50_000, "price": {"input": 0, "output": 0}, "vision": False}})
    info = model_info(cfg, "gpt-4o", reported={"context_window": 64_000})
    assert (info.context_window, info.vision, info.price) == (50_000, False, Price(0.0, 0.0))
    assert (info.provider, info.source) == ("p", "config")


def test_cost_bills_cached_tokens_at_cache_prices() -> None:
    price = Price(input=3.0, output=15.0, cache_read=0.3, cache_write=3.75)
    usage = Usage(input=1_000_000, output=100_000, cache_read=500_000, cache_write=100_000)
    # fresh 400k x 3 + read 500k x 0.3 + write 100k x 3.75 + out 100k x 15, per million
    assert cost(usage, price) == pytest.approx(1.2 + 0.15 + 0.375 + 1.5)


def test_cost_without_cache_prices_uses_the_input_price() -> None:
    usage = Usage(input=2_000_000, output=0, cache_read=1_000_000)
    assert cost(usage, Price(1.0, 2.0)) == pytest.approx(2.0)
    assert cost(Usage(), Price(1.0, 2.0)) == 0.0
    assert cost(usage, None) is None


def test_tools_warning_for_models_known_not_to_call_tools() -> None:
    assert tools_warning(model_info(None, "gpt-4o")) is None
    assert tools_warning(model_info(None, "totally-new-model")) is None
    small = tools_warning(model_info(ProviderConfig("local", "ollama"), "qwen2.5:0.5b"))
    assert small is not None and "local/qwen2.5:0.5b" in small and "reliably" in small
    none = model_info(None, "o1-mini")
    assert none.tools is False
    warning = tools_warning(none)
    assert warning is not None and "not to support tool calls" in warning
    assert tools_warning(model_info(None, "phi4")) is not None  # profiles: tools False


def test_listing_fields_of_openai_compatible_servers() -> None:
    vllm = {"id": "Qwen/Qwen3-8B", "object": "model", "owned_by": "vllm", "max_model_len": 32768}
    assert reported_from_listing(vllm) == {"context_window": 32768}
    openrouter = {
        "id": "openai/gpt-4o", "context_length": 128000,
        "top_provider": {"max_completion_tokens": 16384},
        "pricing": {"prompt": "0.0000025", "completion": "0.00001", "input_cache_read": "0"},
        "supported_parameters": ["tools", "temperature"],
        "architecture": {"input_modalities": ["text", "image"]},
    }
    assert reported_from_listing(openrouter) == {
        "context_window": 128000, "max_output": 16384, "tools": True, "reasoning": False,
        "vision": True, "price": Price(2.5, 10.0, 0.0, None)}
    groq = {"id": "llama-3.3-70b-versatile", "context_window": 131072,
            "max_completion_tokens": 32768}
    assert reported_from_listing(groq) == {"context_window": 131072, "max_output": 32768}
    assert reported_from_listing({"id": "x", "pricing": {"prompt": "-1", "completion": "-1"}}) == {}


def test_the_table_is_well_formed() -> None:
    data = json.loads(TABLE.read_text(encoding="utf-8"))
    keys = {"match", "family", "context", "max_output", "tools", "reasoning", "vision", "price",
            "tools_unreliable"}
    for entry in data["models"]:
        assert set(entry) <= keys, entry
        re.compile(entry["match"])
        if "price" in entry:
            # a price only where the id is recognised exactly
            assert entry["match"].endswith("$"), entry["match"]
            assert entry["price"]["input"] >= 0 and entry["price"]["output"] > 0


def test_every_priced_entry_is_reachable_by_its_own_name() -> None:
    data = json.loads(TABLE.read_text(encoding="utf-8"))
    for entry in data["models"]:
        if "price" in entry:
            info = builtin_info(entry["family"])
            assert info is not None and info.price is not None, entry["family"]
            assert info.price.input == entry["price"]["input"], entry["family"]
