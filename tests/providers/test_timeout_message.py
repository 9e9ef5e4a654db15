"""A provider that waits past its timeout says how long it waited (a real server that never
answers: the package's fake, scripted to hang)."""

from __future__ import annotations

import asyncio

import pytest

from tests.support.streams import ask
from totem.providers.base import RetryableError
from totem.providers.registry import make_provider
from totem.settings.config import ProviderConfig
from totem.testing.fake_server import FakeOpenAIServer


def test_a_read_timeout_says_how_long_it_waited() -> None:
    server = FakeOpenAIServer([{"error": "hang"}], models=["m"])
    with server.in_thread() as url:
        provider = make_provider(ProviderConfig(name="slow", kind="openai", base_url=url,
                                                options={"timeout": 0.5}))

        async def main() -> None:
            try:
                async for _ in provider.stream(ask("hi", model="m")):
                    pass
            finally:
                await provider.aclose()

        with pytest.raises(RetryableError) as caught:
            asyncio.run(main())
    assert f"no answer from {url} within 0.5 s" in caught.value.message
    assert "`timeout` option" in caught.value.message
