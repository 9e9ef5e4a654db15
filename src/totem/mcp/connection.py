"""One MCP server: a process over stdio or a connection over HTTP, owned by a task of its own.

The SDK's client keeps anyio task groups open for as long as it is connected, and those must
be left in the task that entered them. So each server gets an owner task that connects,
lists the tools, says it is ready, and waits to be told to stop; tool calls come from the
run's tasks and only send requests through the connected client. Stopping closes the pipes
and, for stdio, ends the process group (the SDK closes stdin, waits, then SIGTERM/SIGKILL).

Everything here raises `McpServerError` with a message written for a person or the model.
This module imports the MCP SDK: import it only when a server is configured.
"""

from __future__ import annotations

import asyncio
import contextvars
import os
import time
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from pathlib import Path
from typing import IO, Any, Literal, TextIO, TypeAlias, TypeVar, cast

import httpx2
import mcp_types as types
from mcp import Client
from mcp.client.auth import OAuthFlowError
from mcp.client.sse import sse_client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.dispatcher import ProgressFnT
from mcp.shared.exceptions import MCPError
from mcp_types import CONNECTION_CLOSED, REQUEST_TIMEOUT, UNSUPPORTED_PROTOCOL_VERSION
from pydantic import ValidationError

from totem import __version__
from totem.mcp.config import HttpServer, ServerConfig, StdioServer, resolve_secrets
from totem.mcp.oauth import SignIn, SignInError, oauth_auth, open_in_browser
from totem.settings.config import ConfigError

__all__ = ["Connection", "Handlers", "McpServerError", "State"]

State: TypeAlias = Literal["stopped", "starting", "ready", "failed", "crashed", "disabled"]
ElicitFn: TypeAlias = Callable[[str, types.ElicitRequestParams], Awaitable[types.ElicitResult]]
SignInAsk: TypeAlias = Callable[[str, str], Awaitable[bool]]
SampleFn: TypeAlias = Callable[
    [str, types.CreateMessageRequestParams], Awaitable[types.CreateMessageResult | types.ErrorData]
]
T = TypeVar("T")
STOP_GRACE = 10.0  # the SDK's own shutdown of a stdio server takes at most about 6 s
MAX_TOOL_PAGES = 50
NOTE = "totem: "  # totem's own lines in a server's log, left out of "its last output"


class McpServerError(Exception):
    """A server could not be started, or a call to it failed; the message says why, and
    `output` holds the last lines the server wrote to stderr, when they may tell more."""

    def __init__(self, message: str, *, output: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.output = output

    def __str__(self) -> str:
        if not self.output:
            return self.message
        indented = "\n".join(f"  {line}" for line in self.output.splitlines())
        return f"{self.message}\nIts last output:\n{indented}"


class Handlers:
    """What a server may ask of totem: a person's answer, the model, the project's roots,
    and a sign-in (`sign_in`: the question before the browser opens, and the opener)."""

    def __init__(
        self,
        *,
        elicit: ElicitFn | None,
        sample: SampleFn | None,
        roots: list[types.Root],
        sign_in: SignInAsk | None = None,
        open_url: Callable[[str], Awaitable[None]] | None = None,
        tell: Callable[[str], None] | None = None,
    ) -> None:
        self.elicit = elicit
        self.sample = sample
        self.roots = roots
        self.sign_in = sign_in
        self.open_url = open_url
        self.tell = tell


class Connection:
    def __init__(self, config: ServerConfig, *, root: Path, handlers: Handlers, log: Path) -> None:
        self.config = config
        self.name = config.name
        self.root = root
        self.handlers = handlers
        self.log_path = log
        self.state: State = "stopped"
        self.detail = ""
        self.protocol = ""
        self.tools: list[types.Tool] = []
        self.resources: list[types.Resource] = []  # what `@server:uri` completes from
        self.prompts: list[types.Prompt] = []  # offered as `/server:prompt`
        self.capabilities: types.ServerCapabilities | None = None
        self._client: Client | None = None
        self._log: IO[str] | None = None
        self._sign_in: Any = None  # oauth.SignIn, for an HTTP server that may ask for OAuth
        self._ready = asyncio.Event()
        self._stop = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self.starts = 0
        self.tools_version = 0  # grows when the server's tool list changed (list_changed)
        self._listing: asyncio.Task[None] | None = None
        self.catalogue_stale = False  # its resources or prompts changed since listed

    # lifecycle ----------------------------------------------------------------------------

    async def start(self) -> None:
        """Connect and list the tools, within the server's startup timeout."""
        self.state = "starting"
        self._ready = asyncio.Event()
        self._stop = asyncio.Event()
        self._log = self._open_log(fresh=self.starts == 0)
        self.starts += 1
        # A task of its own, in a fresh context: it outlives the run that started it and
        # must not carry that run's context variables along.
        self._task = asyncio.create_task(self._own(), name=f"mcp-{self.name}",
                                         context=contextvars.Context())
        await self._wait_ready()
        if not self.ready:
            self.state = "failed"
            raise McpServerError(self.detail, output=self._output())

    async def _wait_ready(self) -> None:
        """Wait for the connection within the startup timeout, moved on by the time the
        person spends signing in (theirs is not the server's), then give up and stop it."""
        limit = self.config.startup_timeout
        began = time.monotonic()
        while True:
            person = self._sign_in.person_time() if self._sign_in is not None else 0.0
            left = began + limit + person - time.monotonic()
            if self._sign_in is not None and self._sign_in.in_progress:
                left = max(left, limit)  # look again at most `limit` later
            if left <= 0:
                self.detail = f"it did not answer within {limit:g} s"
                await self.stop()
                return
            try:
                await asyncio.wait_for(self._ready.wait(), left)
                return
            except TimeoutError:
                continue

    @property
    def ready(self) -> bool:
        return self.state == "ready"

    def exited(self) -> bool:
        """True when a ready server's connection is gone (its process exited, say): marked
        crashed, to be restarted on next use. A request sent now would never reach it."""
        if self.state == "ready" and _closed(self._client):
            self.state = "crashed"
            self.detail = "it exited"
            self._write_log(f"{NOTE}the connection closed")
        return self.state == "crashed"

    async def restart(self) -> None:
        """Stop what is left of the connection and start the server again."""
        await self.stop()
        await self.start()

    async def stop(self) -> None:
        """Close the connection and end the server's process; safe to call more than once."""
        self._stop.set()
        task = self._task
        if task is not None and not task.done():
            try:
                await asyncio.wait_for(asyncio.shield(task), STOP_GRACE)
            except TimeoutError:
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)
        if self.state in ("ready", "starting"):
            self.state = "stopped"
        if self._log is not None:
            self._log.close()
            self._log = None

    async def _own(self) -> None:
        try:
            async with AsyncExitStack() as stack:
                client = await self._connect(stack)
                self.tools = await _list_tools(client)
                self.protocol = client.protocol_version
                self.capabilities = client.server_capabilities
                self._client = client
                self.state = "ready"
                self._ready.set()
                await self._stop.wait()
        except Exception as exc:  # the SDK's task groups raise groups; a server must not end a run
            if self.state == "starting":
                self.detail = _explain_start(self.config, exc)
            elif not self._stop.is_set():
                self.state = "crashed"
                self.detail = f"the connection failed: {_first(exc)}"
            self._write_log(f"{NOTE}{type(_first(exc)).__name__}: {_first(exc)}")
        finally:
            self._client = None
            self._ready.set()

    async def _connect(self, stack: AsyncExitStack) -> Client:
        mode = self.config.protocol
        try:
            return await stack.enter_async_context(self._client_for(mode, stack))
        except MCPError as exc:
            if mode != "legacy" or exc.code != UNSUPPORTED_PROTOCOL_VERSION:
                raise
        # a server of the stateless protocol only: let the SDK negotiate it
        self._write_log(f"{NOTE}the server refused the 2025-11-25 handshake; trying auto")
        return await stack.enter_async_context(self._client_for("auto", stack))

    def _client_for(self, mode: str, stack: AsyncExitStack) -> Client:
        server: Any
        config = self.config
        if isinstance(config, StdioServer):
            env = resolve_secrets(config.env, what="it")
            cwd = self.root / config.cwd if config.cwd else self.root
            params = StdioServerParameters(
                command=config.command, args=list(config.args), env=env or None, cwd=cwd
            )
            server = stdio_client(params, errlog=cast(TextIO, self._log))
        else:
            server = _http_transport(config, stack, self._oauth(config))
        handlers = self.handlers
        return Client(
            server,
            mode=mode,
            read_timeout_seconds=config.startup_timeout,
            client_info=types.Implementation(name="totem", version=__version__),
            elicitation_callback=self._on_elicit if handlers.elicit is not None else None,
            sampling_callback=self._on_sample if handlers.sample is not None else None,
            list_roots_callback=self._on_roots,
            logging_callback=self._on_log,
            message_handler=self._on_message,
            cache=None,
        )

    def _oauth(self, config: HttpServer) -> Any:
        """The OAuth auth for the server's HTTP client, or None when it is not to sign in."""
        if not config.oauth.enabled:
            return None
        handlers = self.handlers
        if self._sign_in is None:
            self._sign_in = SignIn(ask=handlers.sign_in, open_url=handlers.open_url
                                   or open_in_browser, tell=handlers.tell)
        return oauth_auth(config, self._sign_in)

    # calls --------------------------------------------------------------------------------

    async def call(
        self, tool: str, arguments: dict[str, Any], *, progress: ProgressFnT | None = None
    ) -> types.CallToolResult:
        client = self._client
        if client is None or self.state != "ready":
            raise McpServerError(self._not_running())
        timeout = self.config.timeout
        try:
            return await client.call_tool(
                tool, arguments, read_timeout_seconds=timeout, progress_callback=progress
            )
        except MCPError as exc:
            if exc.code == REQUEST_TIMEOUT:
                raise McpServerError(
                    f"The MCP server '{self.name}' did not answer the call to {tool} within "
                    f"{timeout:g} s; the call was cancelled."
                ) from None
            if exc.code == CONNECTION_CLOSED:
                self.state = "crashed"
                self.detail = f"it stopped while {tool} was running"
                raise McpServerError(
                    f"The MCP server '{self.name}' stopped while {tool} was running; it is "
                    f"{'started' if self.config.kind == 'stdio' else 'connected'} again when "
                    "one of its tools is used next.",
                    output=self._output(),
                ) from None
            raise McpServerError(
                f"The MCP server '{self.name}' answered the call to {tool} with an error: "
                f"{exc.message}"
            ) from None
        except ValidationError as exc:
            raise McpServerError(
                f"The MCP server '{self.name}' returned a malformed result for {tool}: "
                f"{_first_validation(exc)}"
            ) from None
        except RuntimeError as exc:  # the SDK checks structured content against outputSchema
            raise McpServerError(f"The MCP server '{self.name}' returned: {exc}") from None

    async def request(self, what: str, send: Callable[[Client], Awaitable[T]]) -> T:
        """One request other than a tool call (`what` names it in messages: "resources/read
        of demo://x"), through the connected client, within the call timeout."""
        client = self._client
        if client is None or self.exited():
            raise McpServerError(self._not_running())
        try:
            return await asyncio.wait_for(send(client), self.config.timeout)
        except TimeoutError:
            raise McpServerError(f"The MCP server '{self.name}' did not answer {what} within "
                                 f"{self.config.timeout:g} s.") from None
        except MCPError as exc:
            raise McpServerError(
                f"The MCP server '{self.name}' answered {what} with an error: {exc.message}"
            ) from None
        except ValidationError as exc:
            raise McpServerError(f"The MCP server '{self.name}' answered {what} with a "
                                 f"malformed result: {_first_validation(exc)}") from None

    # server → client ----------------------------------------------------------------------

    async def _on_elicit(
        self, context: Any, params: types.ElicitRequestParams
    ) -> types.ElicitResult | types.ErrorData:
        assert self.handlers.elicit is not None
        return await self.handlers.elicit(self.name, params)

    async def _on_sample(
        self, context: Any, params: types.CreateMessageRequestParams
    ) -> types.CreateMessageResult | types.ErrorData:
        assert self.handlers.sample is not None
        return await self.handlers.sample(self.name, params)

    async def _on_roots(self, context: Any) -> types.ListRootsResult:
        return types.ListRootsResult(roots=self.handlers.roots)

    async def _on_log(self, params: types.LoggingMessageNotificationParams) -> None:
        self._write_log(f"[{params.level}] {params.data}")

    async def _on_message(self, message: Any) -> None:
        if isinstance(message, Exception):
            self._write_log(f"{NOTE}transport: {type(message).__name__}: {message}")
        elif isinstance(message, types.ToolListChangedNotification):
            # listed from a task of its own: a request awaited here would wait on the very
            # loop that delivers its answer
            self._listing = asyncio.ensure_future(self._relist())
        elif isinstance(message, types.ResourceListChangedNotification
                        | types.PromptListChangedNotification):
            self.catalogue_stale = True  # listed again by the manager, between steps

    async def _relist(self) -> None:
        client = self._client
        if client is None:
            return
        try:
            self.tools = await _list_tools(client)
        except Exception as exc:  # the old list stays; the next change tries again
            self._write_log(f"{NOTE}listing the changed tools failed: {_first(exc)}")
            return
        self.tools_version += 1
        self._write_log(f"{NOTE}the tool list changed ({len(self.tools)} tools)")

    async def settled(self) -> None:
        """Wait for a tool list being fetched after a change notice, if any."""
        listing = self._listing
        if listing is not None and not listing.done():
            await asyncio.wait({listing}, timeout=self.config.timeout)

    # reporting ----------------------------------------------------------------------------

    def _open_log(self, *, fresh: bool) -> IO[str]:
        """The server's stderr and totem's notes about it; opened for appending, so that the
        server's own writes (through its copy of the descriptor) never overwrite ours. A
        restart appends to the log of the start before."""
        try:
            self.log_path.parent.mkdir(parents=True, exist_ok=True)
            if fresh:
                self.log_path.write_text("", encoding="utf-8")
            return open(self.log_path, "a", encoding="utf-8")  # noqa: SIM115 - kept open
        except OSError:
            return open(os.devnull, "a", encoding="utf-8")  # noqa: SIM115

    def note(self, text: str) -> None:
        """A line of totem's own in the server's log."""
        self._write_log(text)

    def _write_log(self, text: str) -> None:
        """Append totem's own note (every line marked, so `stderr_tail` leaves it out)."""
        if self._log is not None and not self._log.closed:
            lines = text.rstrip().splitlines() or [""]
            self._log.write("".join(f"{NOTE}{line.removeprefix(NOTE)}\n" for line in lines))
            self._log.flush()

    def stderr_tail(self, lines: int = 8) -> str:
        try:
            with open(self.log_path, "rb") as file:
                file.seek(0, 2)
                file.seek(max(0, file.tell() - 4000))
                text = file.read().decode("utf-8", errors="replace")
        except OSError:
            return ""
        kept = [ln for ln in text.splitlines() if ln.strip() and not ln.startswith(NOTE)]
        kept = kept[-lines:]
        return "\n".join(kept)

    def _output(self) -> str:
        return self.stderr_tail() if isinstance(self.config, StdioServer) else ""

    def _not_running(self) -> str:
        why = f" ({self.detail})" if self.detail else ""
        return f"The MCP server '{self.name}' is not running{why}; its tools cannot be used now."


def _http_transport(config: HttpServer, stack: AsyncExitStack, auth: Any) -> Any:
    headers = resolve_secrets(config.headers, what="it")
    if config.transport == "sse":
        return sse_client(config.url, headers=headers, timeout=config.startup_timeout, auth=auth)
    from mcp.shared._httpx_utils import create_mcp_http_client

    http = create_mcp_http_client(
        headers=headers,
        timeout=httpx2.Timeout(config.startup_timeout, read=config.timeout),
        auth=auth,
    )
    stack.push_async_callback(http.aclose)
    return streamable_http_client(config.url, http_client=http)


async def _list_tools(client: Client) -> list[types.Tool]:
    tools: list[types.Tool] = []
    cursor: str | None = None
    for _ in range(MAX_TOOL_PAGES):
        page = await client.list_tools(cursor=cursor)
        tools.extend(page.tools)
        cursor = page.next_cursor
        if cursor is None:
            break
    return tools


def _closed(client: Client | None) -> bool:
    """Whether the client's connection is closed. The SDK keeps this on its dispatcher and
    answers a request sent after it with CONNECTION_CLOSED, without sending it; read here
    so that such a request is never mistaken for one the server died running."""
    if client is None:
        return True
    try:
        dispatcher = getattr(client.session, "_dispatcher", None)
    except RuntimeError:  # no session: not connected
        return True
    return bool(getattr(dispatcher, "_closed", False))


def _first(exc: BaseException) -> BaseException:
    """The first real error inside (possibly nested) exception groups."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def _first_validation(exc: ValidationError) -> str:
    errors = exc.errors()
    if not errors:
        return str(exc)
    first = errors[0]
    where = ".".join(str(p) for p in first["loc"])
    return f"{where}: {first['msg']}" if where else str(first["msg"])


def _explain_start(config: ServerConfig, exc: BaseException) -> str:
    error = _first(exc)
    if isinstance(error, ConfigError):
        return str(error)
    if isinstance(error, SignInError):
        return str(error)
    if isinstance(error, OAuthFlowError):
        return f"signing in failed: {error}"
    if isinstance(config, StdioServer):
        if isinstance(error, FileNotFoundError):
            return f"the command '{config.command}' was not found"
        if isinstance(error, PermissionError):
            return f"the command '{config.command}' cannot be run ({error.strerror})"
        if isinstance(error, MCPError) and error.code == CONNECTION_CLOSED:
            return "the program exited before it answered the MCP handshake"
    if isinstance(error, MCPError):
        if error.code == REQUEST_TIMEOUT:
            return f"it did not answer within {config.startup_timeout:g} s"
        return f"it refused the MCP handshake: {error.message}"
    if isinstance(error, ValidationError):
        return f"it sent an answer that breaks the MCP schema ({_first_validation(error)})"
    if isinstance(error, OSError | ConnectionError | httpx2.TransportError):
        return f"the connection failed: {error or type(error).__name__}"
    if isinstance(error, httpx2.HTTPStatusError):
        return f"the server answered HTTP {error.response.status_code}"
    return f"{type(error).__name__}: {error}"
