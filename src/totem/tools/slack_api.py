"""A small client of the Slack Web API, for the slack tool: three methods over httpx.

    chat.postMessage        POST, a JSON body
    conversations.history   POST, the arguments form-encoded
    conversations.replies   POST, the arguments form-encoded

as the official slack_sdk sends them (the tests compare the two).

Each call goes through the shared retry policy (`call_with_retry`): a 429 waits the
`Retry-After` Slack gives, a 5xx or a dropped connection is tried again. Slack's own refusal
(`{"ok": false, "error": ...}`) is a `SlackRefused` with a sentence saying what to do.
"""

from __future__ import annotations

from typing import Any

import httpx

from totem import __version__
from totem.abort import AbortSignal
from totem.providers.base import ProviderError
from totem.providers.transport.retry import call_with_retry, classify_status, parse_retry_after

__all__ = ["SlackClient", "SlackRefused"]

TIMEOUT = 30.0
_HINTS = {
    "channel_not_found": "the channel does not exist, or the bot cannot see it (invite it)",
    "not_in_channel": "the bot is not a member of the channel; invite it with /invite",
    "invalid_auth": "the token is not valid; check integrations.slack.token",
    "not_authed": "no token was sent; check integrations.slack.token",
    "token_revoked": "the token was revoked; make a new one",
    "missing_scope": "the token lacks a permission scope the method needs",
    "thread_not_found": "there is no thread with that ts in the channel",
    "msg_too_long": "the message is too long for Slack",
    "no_text": "the message is empty",
    "is_archived": "the channel is archived",
    "ratelimited": "Slack limits how often this can be called; try again later",
}


class SlackRefused(Exception):
    """Slack answered, and said no; the message is for the model."""


class SlackClient:
    def __init__(self, base_url: str, token: str, *, abort: AbortSignal) -> None:
        self.base_url = base_url.rstrip("/")
        self.token = token
        self.abort = abort

    async def call(self, method: str, arguments: dict[str, Any], *, json: bool) -> dict[str, Any]:
        """The answer of the API method `method`, `ok` checked."""
        headers = {"Authorization": f"Bearer {self.token}",
                   "User-Agent": f"totem/{__version__}"}
        url = f"{self.base_url}/{method}"
        async with httpx.AsyncClient(timeout=TIMEOUT) as client:

            async def send() -> httpx.Response:
                if json:
                    response = await client.post(url, json=arguments, headers={
                        **headers, "Content-Type": "application/json;charset=utf-8"})
                else:
                    response = await client.post(url, data=arguments, headers=headers)
                if response.status_code >= 400:
                    raise classify_status(response.status_code,
                                          f"Slack answered HTTP {response.status_code}",
                                          retry_after=parse_retry_after(response.headers))
                return response

            try:
                response = await call_with_retry(send, abort=self.abort)
            except ProviderError as exc:
                raise SlackRefused(f"{method}: {exc.message}.") from None
            except httpx.HTTPError as exc:
                raise SlackRefused(f"{method}: Slack could not be reached ({exc}).") from None
        return _checked(method, response)


def _checked(method: str, response: httpx.Response) -> dict[str, Any]:
    try:
        data = response.json()
    except ValueError:
        raise SlackRefused(f"{method}: Slack did not answer JSON.") from None
    if not isinstance(data, dict):
        raise SlackRefused(f"{method}: Slack's answer is not an object.")
    if data.get("ok") is not True:
        error = str(data.get("error") or "unknown_error")
        hint = _HINTS.get(error, "")
        needed = f" (needed: {data['needed']})" if data.get("needed") else ""
        raise SlackRefused(f"Slack refused {method}: {error}{needed}"
                           f"{' — ' + hint if hint else ''}.")
    return data
