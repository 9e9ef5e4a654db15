"""The protocol's methods: what `totem acp` answers to an editor.

Each editor session is an `EditorSession` on a `SessionService` of its folder; the store is
one for the connection. Sessions are new, loaded (the conversation replayed to the editor),
resumed (no replay) and listed; prompts, cancel, the mode and the model go to the session.
A folder the person has not trusted keeps its own `.totem` config inert, as `totem run`
does without `--trust`; the run's first notice says so in the editor.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from acp import PROTOCOL_VERSION, RequestError
from acp.interfaces import Agent, Client
from acp.schema import (
    AcpMcpServer,
    AgentCapabilities,
    AuthenticateResponse,
    ClientCapabilities,
    CloseSessionResponse,
    ForkSessionResponse,
    HttpMcpServer,
    Implementation,
    InitializeResponse,
    ListSessionsResponse,
    LoadSessionResponse,
    McpServerStdio,
    NewSessionResponse,
    PromptCapabilities,
    PromptResponse,
    ResumeSessionResponse,
    SessionCapabilities,
    SessionCloseCapabilities,
    SessionInfo,
    SessionListCapabilities,
    SessionResumeCapabilities,
    SetSessionConfigOptionResponse,
    SetSessionModeResponse,
    SseMcpServer,
)

from totem import __version__
from totem.acp.prompt import Block
from totem.acp.session import EditorSession
from totem.settings.config import ConfigError
from totem.store.base import Store

__all__ = ["TotemAgent"]

McpServers = list[HttpMcpServer | SseMcpServer | AcpMcpServer | McpServerStdio] | None


class TotemAgent(Agent):
    def __init__(self, *, store: Store | None = None) -> None:
        self._client: Client | None = None
        self._store = store
        self.capabilities: ClientCapabilities | None = None
        self.sessions: dict[str, EditorSession] = {}

    def on_connect(self, conn: Client) -> None:
        self._client = conn

    @property
    def client(self) -> Client:
        assert self._client is not None, "the connection is made before the first request"
        return self._client

    @property
    def store(self) -> Store:
        if self._store is None:
            from totem.session.service import default_store

            self._store = default_store()
        return self._store

    async def initialize(self, protocol_version: int,
                         client_capabilities: ClientCapabilities | None = None,
                         client_info: Implementation | None = None,
                         **kwargs: Any) -> InitializeResponse:
        self.capabilities = client_capabilities
        return InitializeResponse(
            protocol_version=min(protocol_version, PROTOCOL_VERSION),
            agent_capabilities=AgentCapabilities(
                load_session=True,
                prompt_capabilities=PromptCapabilities(image=True, embedded_context=True),
                session_capabilities=SessionCapabilities(
                    list=SessionListCapabilities(), resume=SessionResumeCapabilities(),
                    close=SessionCloseCapabilities()),
            ),
            agent_info=Implementation(name="totem", title="totem", version=__version__),
            auth_methods=[],
        )

    async def authenticate(self, method_id: str, **kwargs: Any) -> AuthenticateResponse | None:
        return AuthenticateResponse()  # providers' keys are totem's own configuration

    # sessions --------------------------------------------------------------------------------

    async def _session(self, cwd: str, session_id: str | None) -> EditorSession:
        """A new session in `cwd`, or the stored one (its folder must be `cwd`)."""
        from totem.session.service import SessionService

        root = Path(cwd)
        if not root.is_absolute() or not root.is_dir():
            raise RequestError.invalid_params({"cwd": f"{cwd} is not an absolute folder path"})
        service = SessionService(root, mode="interactive", store=self.store)
        try:
            await service.prepare()
            info = service.open(session_id=session_id)
        except ConfigError as exc:
            await service.aclose()
            raise RequestError.invalid_params({"sessionId": str(exc)}) from None
        if session_id and os.path.realpath(info.project) != os.path.realpath(root):
            await service.aclose()
            raise RequestError.invalid_params(
                {"sessionId": f"session {session_id} belongs to {info.project}, not {cwd}"})
        old = self.sessions.pop(info.id, None)
        if old is not None:
            old.cancel()
            await old.service.aclose()
        session = EditorSession(client=self.client, service=service, info=info,
                                capabilities=self.capabilities)
        self.sessions[info.id] = session
        return session

    def _get(self, session_id: str) -> EditorSession:
        session = self.sessions.get(session_id)
        if session is None:
            raise RequestError.invalid_params({"sessionId": f"no open session {session_id}"})
        return session

    async def new_session(self, cwd: str, additional_directories: list[str] | None = None,
                          mcp_servers: McpServers = None, **kwargs: Any) -> NewSessionResponse:
        session = await self._session(cwd, None)
        return NewSessionResponse(session_id=session.info.id, modes=session.mode_state(),
                                  config_options=session.config_options())

    async def load_session(self, cwd: str, session_id: str, mcp_servers: McpServers = None,
                           additional_directories: list[str] | None = None,
                           **kwargs: Any) -> LoadSessionResponse | None:
        session = await self._session(cwd, session_id)
        await session.replay()
        return LoadSessionResponse(modes=session.mode_state(),
                                   config_options=session.config_options())

    async def resume_session(self, session_id: str, cwd: str,
                             additional_directories: list[str] | None = None,
                             mcp_servers: McpServers = None,
                             **kwargs: Any) -> ResumeSessionResponse:
        session = await self._session(cwd, session_id)
        return ResumeSessionResponse(modes=session.mode_state(),
                                     config_options=session.config_options())

    async def fork_session(self, session_id: str, cwd: str,
                           additional_directories: list[str] | None = None,
                           mcp_servers: McpServers = None, **kwargs: Any) -> ForkSessionResponse:
        raise RequestError.method_not_found("session/fork")

    async def list_sessions(self, cwd: str | None = None, cursor: str | None = None,
                            **kwargs: Any) -> ListSessionsResponse:
        project = os.path.realpath(cwd or os.getcwd())
        return ListSessionsResponse(sessions=[
            SessionInfo(session_id=s.id, cwd=s.project, title=s.title or None,
                        updated_at=datetime.fromtimestamp(s.updated, UTC).isoformat())
            for s in self.store.list_sessions(project)])

    async def close_session(self, session_id: str, **kwargs: Any) -> CloseSessionResponse | None:
        session = self.sessions.pop(session_id, None)
        if session is not None:
            session.cancel()
            await session.service.aclose()
        return CloseSessionResponse()

    # within a session ------------------------------------------------------------------------

    async def set_session_mode(self, session_id: str, mode_id: str,
                               **kwargs: Any) -> SetSessionModeResponse | None:
        self._get(session_id).set_mode(mode_id)
        return SetSessionModeResponse()

    async def set_config_option(self, config_id: str, session_id: str, value: str | bool,
                                **kwargs: Any) -> SetSessionConfigOptionResponse | None:
        session = self._get(session_id)
        if config_id == "mode" and isinstance(value, str):
            session.set_mode(value)
        elif config_id == "model" and isinstance(value, str):
            session.set_model(value)
        else:
            raise RequestError.invalid_params({"configId": f"no option {config_id}={value!r}"})
        return SetSessionConfigOptionResponse(config_options=session.config_options())

    async def prompt(self, session_id: str, prompt: list[Block], **kwargs: Any) -> PromptResponse:
        return await self._get(session_id).prompt(prompt)

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        session = self.sessions.get(session_id)
        if session is not None:
            session.cancel()

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        raise RequestError.method_not_found(method)

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        return None

    async def aclose(self) -> None:
        for session in list(self.sessions.values()):
            session.cancel()
            await session.service.aclose()
        self.sessions.clear()
        if self._store is not None:
            self._store.close()
