"""What stdin may hand the ACP SDK: one JSON-RPC object per line; every other line is answered
here, as JSON-RPC 2.0 says, and the agent goes on.

The SDK (agent-client-protocol 0.12.1, `_transport.NdjsonTransport` and `Connection`) reads a
line with `json.loads` and calls `.get` on it: a line that is JSON but not an object (`[]`,
`42`, `"text"`) ends the agent with an AttributeError, `null` reads as the end of input (the
agent exits 0), and a line that is not JSON is logged and dropped with no answer, so that a
request on it waits for ever. Its router also logs a traceback for a notification it does not
know. This gate sits between stdin and the SDK's reader and lets through only what the SDK
handles; the rest gets its error here:

- not JSON: -32700 Parse error, id null;
- JSON but not an object, or an object that is neither a request, a notification nor a
  response: -32600 Invalid Request (with the request's id where it has a usable one);
- a batch (an array): refused, one -32600 per request in it, in an array as the spec's batch
  answer (an empty array gets a single -32600); notifications in it get none, as always;
- a notification with a method the agent does not take: dropped with one line in the log
  (JSON-RPC never answers a notification).
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

from acp.meta import AGENT_METHODS

__all__ = ["LineGate", "screen"]

log = logging.getLogger("totem.acp")

PARSE_ERROR = -32700
INVALID_REQUEST = -32600

# the only notification an agent takes (the SDK's router); `_name` ones are extensions
AGENT_NOTIFICATIONS = frozenset({AGENT_METHODS["session_cancel"]})

Answer = dict[str, Any] | list[dict[str, Any]]


def _error(code: int, message: str, request_id: Any = None) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}


def _usable_id(value: Any) -> bool:
    return value is None or isinstance(value, str) or (
        isinstance(value, int) and not isinstance(value, bool))


def _object_problem(message: dict[str, Any]) -> str | None:
    """Why `message` is not a request, notification or response the SDK can take (None: it is)."""
    if not _usable_id(message.get("id")):
        return "the id must be a string, a number or null"
    if "method" in message:
        if not isinstance(message["method"], str):
            return "the method must be a string"
        params = message.get("params")
        if params is not None and not isinstance(params, dict | list):
            return "params must be an object or an array"
        return None
    if "id" in message and ("result" in message or "error" in message):
        return None
    return "a message needs a method (a request or notification) or a result or error (a response)"


def _json_kind(value: object) -> str:
    """What JSON calls the value's type (null, a boolean, a number, a string)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    return "a number" if isinstance(value, int | float) else "a string"


def screen(line: bytes) -> tuple[bool, Answer | None]:
    """For one line from the editor: whether the SDK gets it, and the answer sent from here."""
    text = line.strip()
    if not text:
        return False, None
    try:
        message = json.loads(text)
    except (ValueError, UnicodeDecodeError) as exc:
        return False, _error(PARSE_ERROR, f"Parse error: {exc}")
    if isinstance(message, list):
        return False, _refuse_batch(message)
    if not isinstance(message, dict):
        return False, _error(INVALID_REQUEST, "Invalid Request: a message must be a JSON object, "
                                              f"not {_json_kind(message)}")
    problem = _object_problem(message)
    if problem is not None:
        request_id = message.get("id") if _usable_id(message.get("id")) else None
        return False, _error(INVALID_REQUEST, f"Invalid Request: {problem}", request_id)
    method = message.get("method")
    if (isinstance(method, str) and "id" not in message and not method.startswith("_")
            and method not in AGENT_NOTIFICATIONS):
        log.warning("acp: dropped a notification this agent does not take: %s", method[:200])
        return False, None
    return True, None


def _refuse_batch(batch: list[Any]) -> Answer | None:
    if not batch:
        return _error(INVALID_REQUEST, "Invalid Request: an empty batch")
    answers = []
    for item in batch:
        if isinstance(item, dict) and "method" in item and "id" not in item:
            continue  # a notification: never answered
        request_id = None
        if isinstance(item, dict) and _usable_id(item.get("id")):
            request_id = item.get("id")
        answers.append(_error(INVALID_REQUEST, "Invalid Request: this agent does not take "
                                               "batches; send one message per line", request_id))
    return answers or None


class LineGate:
    """Reads stdin's lines, gives the SDK those `screen` lets through (on `reader`), and writes
    the other lines' answers on the SDK's own writer (a whole line per write, so that they never
    interleave with the SDK's)."""

    def __init__(self, source: asyncio.StreamReader, writer: asyncio.StreamWriter,
                 *, limit: int) -> None:
        self._source = source
        self._writer = writer
        self.reader = asyncio.StreamReader(limit=limit)

    async def pump(self) -> None:
        try:
            while line := await self._read_line():
                passes, answer = screen(line)
                if passes:
                    self.reader.feed_data(line if line.endswith(b"\n") else line + b"\n")
                if answer is not None:
                    self._writer.write((json.dumps(answer, separators=(",", ":")) + "\n").encode())
                    await self._writer.drain()
        finally:
            self.reader.feed_eof()

    async def _read_line(self) -> bytes:
        # as the SDK's NdjsonTransport: a line longer than the buffer is read in parts
        chunks: list[bytes] = []
        try:
            while True:
                try:
                    chunks.append(await self._source.readuntil(b"\n"))
                    return b"".join(chunks)
                except asyncio.LimitOverrunError as exc:
                    chunks.append(await self._source.readexactly(exc.consumed))
        except asyncio.IncompleteReadError as exc:
            chunks.append(exc.partial)
            return b"".join(chunks)
