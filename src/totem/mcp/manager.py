"""The MCP servers of a session: asked for, started, offered as tools, stopped.

    async with McpManager(root, load_mcp_config(root), permission=..., questions=...) as mcp:
        tools = [*builtin, *mcp.tools]          # McpTool: `server__tool`, spec() per tool

Each server asks before it starts (permission `mcp-start`, pattern = its name; the question
says what will run: the command line, or the URL). Servers that are refused, fail to start,
or offer a tool with an unusable schema are reported as notices and the run goes on without
them. The SDK (about a second to import) is loaded while the first question waits, and only
when a server is configured; importing this module loads nothing of it.
"""

from __future__ import annotations

import asyncio
import importlib
import json
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

from totem.events import Event, Notice
from totem.mcp.config import McpConfig, ServerConfig, describe_server
from totem.mcp.sampling import Sampler, SamplingRequest
from totem.policy.permission import PermissionDenied, PermissionService
from totem.policy.questions import QuestionService
from totem.providers.base import ToolSpec
from totem.settings.paths import cache_dir
from totem.tools.base import Tool, is_offered, kind_of

if TYPE_CHECKING:
    import mcp_types as types

    from totem.mcp.connection import Connection

__all__ = ["McpManager", "ServerStatus", "is_mcp_tool"]

DEFAULT_WINDOW = 32_000  # tokens assumed when the model's window is unknown
# tokens of MCP tool definitions offered in full; past it, by name and one line each (a
# tenth of the window when that is less: 800 tokens for an 8k model)
DEFAULT_SCHEMA_BUDGET = 2_000
SIGN_IN = "Open the browser"
NOT_NOW = "Not now"


@dataclass(slots=True)
class ServerStatus:
    name: str
    kind: str  # stdio | http | sse
    target: str  # the command line or the URL
    state: str  # disabled | not started | refused | ready | failed | crashed | stopped
    detail: str = ""
    protocol: str = ""
    tools: list[str] = field(default_factory=list)
    log: str = ""


def is_mcp_tool(tool: Tool) -> bool:
    """True for a tool that came from an MCP server (sub-agents get none of these)."""
    return kind_of(tool) == "mcp"


class McpManager:
    def __init__(
        self,
        root: Path,
        config: McpConfig | Mapping[str, ServerConfig],
        *,
        permission: PermissionService,
        questions: QuestionService | None = None,
        emit: Callable[[Event], None] | None = None,
        sampler: Sampler | None = None,
        context_window: int | None = None,
        schema_share: float = 0.1,
        schema_budget: int | None = None,
        log_dir: Path | None = None,
        open_url: Callable[[str], Awaitable[None]] | None = None,
        sign_in: Callable[[str, str], Awaitable[bool]] | None = None,
    ) -> None:
        self.root = root.resolve()
        self.config = config if isinstance(config, McpConfig) else McpConfig(dict(config))
        self.permission = permission
        self.questions = questions
        self.emit = emit
        self.sampler = sampler
        self.schema_budget = schema_budget if schema_budget is not None else min(
            DEFAULT_SCHEMA_BUDGET, int(schema_share * (context_window or DEFAULT_WINDOW)))
        self.log_dir = log_dir or cache_dir() / "mcp" / _slug(str(self.root))
        self.connections: dict[str, Connection] = {}
        self.refused: dict[str, str] = {}
        self.tools: list[Tool] = []
        self.deferred = False
        self.open_url = open_url  # how a sign-in opens the browser; None: the default one
        self.sign_in = sign_in  # whether to open it; None: ask the person (self.questions)
        self.start_notices = True  # False: refusals and failures only in status()
        self._started = False
        self.reviver: Any = None  # lifecycle.Reviver (restarts), once the SDK is loaded
        self._offered: dict[str, Any] = {}  # what each server's tools were when last built
        self.loaded: set[str] = set()  # listed tools the model loaded (offered in full)
        self._loading = False  # some were loaded since the tools were last built
        self._problems: set[str] = set()  # notices about unusable schemas, said once

    def attach(self, emit: Callable[[Event], None] | None) -> None:
        """Where the servers' questions and notices go from now on: the run in progress
        (servers outlive a run; each run attaches its own event sink)."""
        self.emit = emit

    async def __aenter__(self) -> McpManager:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    # start and stop -----------------------------------------------------------------------

    async def start(self, names: list[str] | None = None) -> None:
        """Ask for, start and list every enabled server (or those named); once."""
        if self._started:
            return
        self._started = True
        for problem in self.config.problems:
            self._notice(f"MCP configuration: {problem}", "warning")
        wanted = [s for n, s in self.config.enabled.items() if names is None or n in names]
        if not wanted:
            return
        loading = asyncio.ensure_future(
            asyncio.to_thread(importlib.import_module, "totem.mcp.connection")
        )
        allowed: list[ServerConfig] = []
        try:
            for server in wanted:
                if await self._may_start(server):
                    allowed.append(server)
        finally:
            try:
                module = await loading
            except ImportError as exc:
                self._notice(
                    f"MCP servers are configured, but the MCP SDK cannot be loaded ({exc}); "
                    "install it with: pip install 'totem[mcp]'. The run goes on without them.",
                    "warning",
                )
                return
        handlers = module.Handlers(
            elicit=self._elicit,
            sample=self._sample if self.sampler is not None else None,
            roots=self._roots(),
            sign_in=self.sign_in or (self._may_sign_in if self.questions is not None else None),
            open_url=self.open_url,
            tell=lambda text: self._notice(text),
        )
        for server in allowed:
            log = self.log_dir / f"{_slug(server.name)}.log"
            self.connections[server.name] = module.Connection(
                server, root=self.root, handlers=handlers, log=log
            )
        results = await asyncio.gather(
            *(c.start() for c in self.connections.values()), return_exceptions=True
        )
        for connection, result in zip(self.connections.values(), results, strict=True):
            if isinstance(result, module.McpServerError):
                result.message = (
                    f"The MCP server '{connection.name}' could not start: {result.message}. "
                    "The run goes on without its tools."
                )
                self._notice(str(result), "warning", start=True)
            elif isinstance(result, BaseException):
                raise result
        from totem.mcp.primitives import catalogue

        await asyncio.gather(*(catalogue(c) for c in self.connections.values() if c.ready))
        self._build_tools()

    async def aclose(self) -> None:
        """Stop every server: pipes closed, processes ended; safe to call more than once."""
        connections = list(self.connections.values())
        await asyncio.gather(*(c.stop() for c in connections), return_exceptions=True)

    async def _may_start(self, server: ServerConfig) -> bool:
        target = describe_server(server)
        verb = "run" if server.kind == "stdio" else "connect to"
        try:
            await self.permission.ask(
                tool="mcp",
                permission="mcp-start",
                patterns=[server.name],
                title=f"start the MCP server '{server.name}' ({verb}: {target})",
                emit=self.emit,
            )
        except PermissionDenied as exc:
            self.refused[server.name] = exc.message
            self._notice(
                f"The MCP server '{server.name}' was not started: {exc.message} "
                "The run goes on without its tools.",
                "warning",
                start=True,
            )
            return False
        return True

    # tools --------------------------------------------------------------------------------

    async def refresh(self) -> bool:
        """Between steps: rebuild the tools when a server changed its list (list_changed),
        came back with other tools after a restart, or was disabled, or the model loaded
        listed tools. True when they changed."""
        from totem.mcp.primitives import catalogue

        for connection in self.connections.values():
            await connection.settled()
            if connection.catalogue_stale and connection.ready:
                connection.catalogue_stale = False
                await catalogue(connection)
        if not self._loading and self._offers() == self._offered:
            return False
        self._build_tools()
        return True

    def _offers(self) -> dict[str, Any]:
        """Each offered server's tools, as names and schemas. A server that stopped still
        offers them: using one starts it again."""
        return {
            c.name: [(t.name, t.description, json.dumps(t.input_schema, sort_keys=True))
                     for t in c.tools]
            for c in self.connections.values() if c.state in ("ready", "crashed")
        }

    def _build_tools(self) -> None:
        from totem.mcp.lifecycle import Reviver
        from totem.mcp.offer import make_offer, make_tools

        if self.reviver is None:
            self.reviver = Reviver(self._notice)
        self._offered = self._offers()
        self._loading = False
        tools = make_tools(self.connections.values(), reviver=self.reviver,
                           problem=self._schema_problem)
        offer = make_offer(tools, budget=self.schema_budget, loaded=self.loaded, load=self._load)
        was_deferred = self.deferred
        self.deferred = bool(offer.listed)
        self.tools = offer.tools
        if self.deferred and not was_deferred:
            self._notice(
                f"The MCP tools' definitions would take about {offer.tokens} tokens (the "
                f"budget is {self.schema_budget}); they are listed by name, and the model "
                "loads the ones it needs."
            )

    def _load(self, names: list[str]) -> None:
        """The model asked for these listed tools: offered in full from the next step."""
        self.loaded.update(names)
        self._loading = True

    def _schema_problem(self, text: str) -> None:
        if text not in self._problems:
            self._problems.add(text)
            self._notice(text, "warning")

    def specs(self) -> list[ToolSpec]:
        """What the model sees of the MCP tools, in order."""
        return [t.spec() for t in self.tools if is_offered(t)]  # type: ignore[attr-defined]

    def status(self) -> list[ServerStatus]:
        rows: list[ServerStatus] = []
        for name, server in self.config.servers.items():
            kind = "sse" if getattr(server, "transport", "") == "sse" else server.kind
            row = ServerStatus(name, kind, describe_server(server), "not started")
            connection = self.connections.get(name)
            if not server.enabled:
                row.state = "disabled"
            elif name in self.refused:
                row.state, row.detail = "refused", self.refused[name]
            elif connection is not None:
                row.state, row.detail = connection.state, connection.detail
                row.protocol = connection.protocol
                row.tools = [t.name for t in connection.tools]
                row.log = str(connection.log_path)
            rows.append(row)
        return rows

    # what servers ask of us ---------------------------------------------------------------

    async def _elicit(self, server: str, params: types.ElicitRequestParams) -> types.ElicitResult:
        from totem.mcp.elicitation import elicit

        return await elicit(server, params, self.questions, emit=self.emit)

    async def _sample(
        self, server: str, params: types.CreateMessageRequestParams
    ) -> types.CreateMessageResult | types.ErrorData:
        import mcp_types as types

        assert self.sampler is not None
        request = _sampling_request(params)
        last = request.messages[-1][1] if request.messages else ""
        shown = last if len(last) <= 200 else last[:199] + "…"
        try:
            await self.permission.ask(
                tool="mcp",
                permission="mcp-sampling",
                patterns=[server],
                title=f"let the MCP server '{server}' ask the model (up to "
                f"{request.max_tokens} tokens): {shown}",
                emit=self.emit,
            )
        except PermissionDenied as exc:
            return types.ErrorData(code=-1, message=f"Sampling was refused: {exc.message}")
        try:
            reply = await self.sampler(request)
        except Exception as exc:  # the provider failed; the server gets an error, not a crash
            return types.ErrorData(code=types.INTERNAL_ERROR, message=f"Sampling failed: {exc}")
        return types.CreateMessageResult(
            role="assistant",
            content=types.TextContent(text=reply.text),
            model=reply.model,
            stop_reason=reply.stop_reason,
        )

    async def _may_sign_in(self, server: str, where: str) -> bool:
        """The question before the browser opens; False when declined or nobody answers
        (then the server does not start, and `totem mcp login` is the way)."""
        assert self.questions is not None
        answer = await self.questions.ask(
            f"The MCP server '{server}' asks you to sign in (at {where}). Open the browser "
            "to sign in? Its tokens are kept in totem's key store.",
            [SIGN_IN, NOT_NOW],
            allow_free=False,
            emit=self.emit,
        )
        if answer is None:  # nobody to ask (a headless run)
            from totem.mcp.oauth import SignInError, login_advice

            raise SignInError(login_advice(server, where))
        return answer == SIGN_IN

    def _roots(self) -> list[types.Root]:
        import mcp_types as types

        return [types.Root(uri=self.root.as_uri(), name=self.root.name)]  # type: ignore[arg-type]

    def _notice(self, text: str, level: str = "info", *, start: bool = False) -> None:
        if start and not self.start_notices:
            return
        emit = self.emit or self.permission.emit
        if emit is not None:
            emit(Notice(text, "warning" if level == "warning" else "info"))


def _sampling_request(params: types.CreateMessageRequestParams) -> SamplingRequest:
    import mcp_types as types

    messages: list[Any] = []
    for message in params.messages:
        texts = [
            block.text if isinstance(block, types.TextContent) else f"[{block.type}]"
            for block in message.content_as_list
        ]
        messages.append((message.role, "\n".join(texts)))
    return SamplingRequest(
        messages=messages,
        max_tokens=params.max_tokens,
        system=params.system_prompt,
        temperature=params.temperature,
        stop=list(params.stop_sequences or []),
    )


def _slug(text: str) -> str:
    import hashlib
    import re

    tail = re.sub(r"[^A-Za-z0-9_.-]", "_", text.rstrip("/").rsplit("/", 1)[-1])[:40]
    return f"{tail}-{hashlib.sha256(text.encode()).hexdigest()[:8]}" if "/" in text else tail
