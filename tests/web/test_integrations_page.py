"""The integrations in the page's Settings: each one's state, and a key typed there going to
the 0600 key store (never into the configuration, never back to the page)."""

from __future__ import annotations

import json
import stat
from collections.abc import Iterator
from typing import Any

import pytest

from tests.support.web_page import wait_js
from tests.support.web_serve import Served, browser, project, scripted

pytestmark = pytest.mark.web

SLACK = "xoxb-typed-into-the-page-0123456789"
BRAVE = "BSA-typed-into-the-page-0123456789"


@pytest.fixture(scope="module")
def chromium() -> Iterator[Any]:
    with browser() as found:
        yield found


def row(page: Any, name: str) -> str:
    text: str = page.inner_text(f".integrations tr[data-integration={name}]")
    return text


def test_settings_show_the_integrations_and_store_a_typed_key(
        tmp_path: Any, chromium: Any) -> None:
    with Served(project(tmp_path, scripted(tmp_path, [{"text": "hi"}]))) as server:
        listed = server.json("GET", "/api/settings/integrations")["integrations"]
        assert [i["name"] for i in listed] == ["websearch", "slack", "tts", "image", "agents"]
        context = chromium.new_context()
        page = context.new_page()
        page.goto(server.url)
        wait_js(page, "window.totem && window.totem.info !== null")
        page.click("#tabs >> text=Settings")
        page.wait_for_selector(".integrations tr[data-integration=slack]")
        assert "off" in row(page, "slack") and "no `integrations.slack.token`" in row(page, "slack")
        page.fill(".integrations tr[data-integration=slack] input[name=key]", SLACK)
        page.click(".integrations tr[data-integration=slack] >> text=Save key")
        page.wait_for_selector(".integrations >> text=Stored the key of slack")
        slack = row(page, "slack")
        assert "on" in slack.split() and "token from the key store" in slack
        page.select_option(".integrations tr[data-integration=websearch] select", "tavily")
        page.fill(".integrations tr[data-integration=websearch] input[name=key]", BRAVE)
        page.click(".integrations tr[data-integration=websearch] >> text=Save key")
        page.wait_for_selector(".integrations >> text=Stored the key of websearch")
        assert "Tavily at https://api.tavily.com/search" in row(page, "websearch")
        page.fill(".integrations tr[data-integration=image] input[name=key]", BRAVE)
        page.click(".integrations tr[data-integration=image] >> text=Save key")
        page.wait_for_selector(".integrations >> text=needs a base_url too")
        html = page.content()
        context.close()
        again = json.dumps(server.json("GET", "/api/settings/integrations"))
    keys = server.home / "config/totem/keys.json"
    assert json.loads(keys.read_text()) == {"integration-slack": SLACK,
                                            "integration-websearch": BRAVE}
    assert stat.S_IMODE(keys.stat().st_mode) == 0o600
    config = (server.home / "config/totem/config.yaml").read_text()
    assert "${key:integration-slack}" in config and "backend: tavily" in config
    for secret in (SLACK, BRAVE):
        assert secret not in config and secret not in html and secret not in again
