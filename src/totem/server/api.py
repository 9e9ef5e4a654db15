"""The routes of `totem serve`: the page, its API, the event stream.

    GET    /                                  the page (`/?token=T` sets the cookie)
    GET    /static/FILE                       its scripts and styles
    GET    /api/info                          project, commands, agents, default model
    GET    /api/sessions?q=WORDS              the project's sessions (forks included), searched
    POST   /api/sessions                      a new session {model?}
    GET    /api/sessions/ID                   snapshot: stored messages + the live run's start
    PATCH  /api/sessions/ID                   rename {title}
    DELETE /api/sessions/ID                   delete it (and its sub-agents' threads)
    GET    /api/sessions/ID/events            server-sent events (Last-Event-ID or ?after=N)
    POST   /api/sessions/ID/runs              start a run {text, model?, agent?, mode?, plan?}
                                       (`/compact`; `plan`: an approved plan's steps)
    POST   /api/sessions/ID/abort             stop the current run
    POST   /api/sessions/ID/reply             permission {request_id, reply, message?}
    POST   /api/sessions/ID/answer            question {request_id, answer}
    POST   /api/sessions/ID/fork              {message_id?} -> the new session
    POST   /api/sessions/ID/undo              {redo?, steps?}: the last request's files back
    GET    /api/sessions/ID/export            JSON, secrets scrubbed
    GET    /api/models                        configured providers' models (picker, table)
    GET    /api/agents  POST /api/agents  DELETE /api/agents/SCOPE/NAME
    GET    /api/settings/providers  POST /api/settings/providers
    DELETE /api/settings/providers/NAME  POST /api/settings/providers/NAME/test
    GET    /api/settings/detect
    GET    /api/settings/hooks                the person's hooks (read-only), and those ignored
    GET    /api/settings/integrations  POST /api/settings/integrations/NAME/key  (session/
                                       integration_admin.py: state, a key to the key store)
    POST   /api/trust                         trust the folder: its own .totem config counts
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from totem.server.bodies import (
    AgentBody,
    AnswerBody,
    BadBody,
    ForkBody,
    IntegrationKeyBody,
    NewSessionBody,
    ProviderBody,
    RenameBody,
    ReplyBody,
    RunBody,
    UndoBody,
    parse,
)
from totem.server.hub import Refused
from totem.server.security import Guard
from totem.server.state import AnyHub, ServerState

__all__ = ["Api"]

STATIC = Path(__file__).with_name("static")
_TYPES = {".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8",
          ".css": "text/css; charset=utf-8", ".svg": "image/svg+xml", ".png": "image/png",
          ".ico": "image/x-icon"}
_ID = re.compile(r"[A-Za-z0-9_.\-]{1,100}\Z")
_FILE = re.compile(r"[A-Za-z0-9_\-]+\.[a-z]+\Z")
Handler = Callable[[Request], Awaitable[Response]]


def error(message: str, status: int = 400) -> JSONResponse:
    return JSONResponse({"error": message}, status)


def _json(data: Any, status: int = 200) -> JSONResponse:
    return JSONResponse(data, status)


def _guarded(handler: Handler) -> Handler:
    """Bad bodies and bad identifiers as 400 and 404, in one place."""

    async def run(request: Request) -> Response:
        for name, value in request.path_params.items():
            if not _ID.match(str(value)) and name != "file":
                return error("not found", 404)
        try:
            return await handler(request)
        except BadBody as exc:
            return error(str(exc))

    return run


class Api:
    def __init__(self, state: ServerState, guard: Guard) -> None:
        self.state = state
        self.guard = guard
        self._static: dict[str, tuple[int, bytes]] = {}

    def routes(self) -> list[Route]:
        s = "/api/sessions/{sid}"
        table: list[tuple[str, str, Handler]] = [
            ("/", "GET", self.page), ("/index.html", "GET", self.page),
            ("/static/{file}", "GET", self.static),
            ("/api/info", "GET", self.info),
            ("/api/sessions", "GET", self.sessions), ("/api/sessions", "POST", self.new_session),
            (s, "GET", self.snapshot), (s, "PATCH", self.rename), (s, "DELETE", self.delete),
            (f"{s}/events", "GET", self.events), (f"{s}/runs", "POST", self.start_run),
            (f"{s}/abort", "POST", self.abort), (f"{s}/reply", "POST", self.reply),
            (f"{s}/answer", "POST", self.answer), (f"{s}/fork", "POST", self.fork),
            (f"{s}/undo", "POST", self.undo), (f"{s}/export", "GET", self.export),
            ("/api/models", "GET", self.models),
            ("/api/agents", "GET", self.agents), ("/api/agents", "POST", self.save_agent),
            ("/api/agents/{scope}/{name}", "DELETE", self.delete_agent),
            ("/api/settings/providers", "GET", self.providers),
            ("/api/settings/providers", "POST", self.add_provider),
            ("/api/settings/providers/{name}", "DELETE", self.remove_provider),
            ("/api/settings/providers/{name}/test", "POST", self.test_provider),
            ("/api/settings/detect", "GET", self.detect),
            ("/api/settings/hooks", "GET", self.hooks),
            ("/api/settings/integrations", "GET", self.integrations),
            ("/api/settings/integrations/{name}/key", "POST", self.integration_key),
            ("/api/trust", "POST", self.trust),
        ]
        by_path: dict[str, dict[str, Handler]] = {}
        for path, method, handler in table:
            by_path.setdefault(path, {})[method] = handler
        return [Route(path, _dispatch(methods), methods=list(methods))
                for path, methods in by_path.items()]

    # the page -----------------------------------------------------------------------------

    async def page(self, request: Request) -> Response:
        port = self.guard.port or (request.url.port or 0)
        if self.guard.matches(request.query_params.get("token")):
            # first visit: the cookie, then a clean URL
            return Response(status_code=303, headers={"Location": "/",
                                                      "Set-Cookie": self.guard.cookie(port)})
        return self._file(request, "index.html")

    async def static(self, request: Request) -> Response:
        name = str(request.path_params["file"])
        if not _FILE.match(name):
            return error("not found", 404)
        return self._file(request, name)

    def _file(self, request: Request, name: str) -> Response:
        path = STATIC / name
        if not path.is_file():
            return error("not found", 404)
        stat = path.stat()
        tag = f'"{stat.st_mtime_ns:x}-{stat.st_size:x}"'
        headers = {"ETag": tag, "Cache-Control": "no-cache"}
        if request.headers.get("if-none-match") == tag:
            return Response(status_code=304, headers=headers)
        cached = self._static.get(name)
        if cached is None or cached[0] != stat.st_mtime_ns:
            cached = (stat.st_mtime_ns, path.read_bytes())
            self._static[name] = cached
        kind = _TYPES.get(path.suffix, "application/octet-stream")
        return Response(cached[1], headers=headers, media_type=kind)

    # sessions -----------------------------------------------------------------------------

    async def info(self, request: Request) -> Response:
        return _json(self.state.info())

    async def sessions(self, request: Request) -> Response:
        query = request.query_params.get("q", "")[:200]
        running = await self.state.running_ids()
        return _json({"sessions": self.state.session_list(query, running=running)})

    async def new_session(self, request: Request) -> Response:
        body = parse(NewSessionBody, await request.body())
        return _json({"session": self.state.new_session(body.model or "")}, 201)

    def _hub(self, request: Request) -> AnyHub | Response:
        hub = self.state.hub(str(request.path_params["sid"]))
        return hub if hub is not None else error("no such session in this project", 404)

    async def snapshot(self, request: Request) -> Response:
        hub = self._hub(request)
        if isinstance(hub, Response):
            return hub
        return _json(await self.state.snapshot(hub))

    async def rename(self, request: Request) -> Response:
        body = parse(RenameBody, await request.body())
        title = " ".join(body.title.split())
        if not title:
            return error("the title is empty")
        found = self.state.rename(str(request.path_params["sid"]), title)
        return _json({"session": found}) if found else error("no such session", 404)

    async def delete(self, request: Request) -> Response:
        if await self.state.busy(str(request.path_params["sid"])):
            return error("stop the run before deleting the session", 409)
        problem = self.state.delete(str(request.path_params["sid"]))
        if problem is not None:
            return error(problem, 409 if "run" in problem else 404)
        return _json({"ok": True})

    async def events(self, request: Request) -> Response:
        hub = self._hub(request)
        if isinstance(hub, Response):
            return hub
        given = request.headers.get("last-event-id") or request.query_params.get("after")
        if given is not None and not re.fullmatch(r"[0-9]{1,15}", given):
            return error("Last-Event-ID must be a number")
        after = int(given) if given else None
        stream = hub.watch(after, until=self.state.closing)
        return StreamingResponse(stream, media_type="text/event-stream; charset=utf-8",
                                 headers={"Cache-Control": "no-store",
                                          "X-Accel-Buffering": "no"})

    async def start_run(self, request: Request) -> Response:
        hub = self._hub(request)
        if isinstance(hub, Response):
            return hub
        body = parse(RunBody, await request.body())
        text = body.text.strip()
        if not text:
            return error("the message is empty")
        after = await hub.launch(text, model=body.model or None, agent=body.agent or None,
                                 generation=self.state.generation, mode=body.mode,
                                 plan=body.plan)
        if isinstance(after, Refused):
            return error(after.message, after.status)
        return _json({"started": True, "after": after}, 202)

    async def abort(self, request: Request) -> Response:
        hub = self._hub(request)
        if isinstance(hub, Response):
            return hub
        return _json({"aborted": await hub.halt()})

    async def reply(self, request: Request) -> Response:
        from totem.policy.permission import Reply

        hub = self._hub(request)
        if isinstance(hub, Response):
            return hub
        body = parse(ReplyBody, await request.body())
        done = await hub.give_reply(body.request_id, Reply(body.reply, body.message or ""))
        return _json({"ok": done}, 200 if done else 409)

    async def answer(self, request: Request) -> Response:
        hub = self._hub(request)
        if isinstance(hub, Response):
            return hub
        body = parse(AnswerBody, await request.body())
        done = await hub.give_answer(body.request_id, body.answer)
        return _json({"ok": done}, 200 if done else 409)

    async def fork(self, request: Request) -> Response:
        body = parse(ForkBody, await request.body())
        found = self.state.fork(str(request.path_params["sid"]), body.message_id or None)
        if isinstance(found, str):
            return error(found, 404)
        return _json({"session": found}, 201)

    async def undo(self, request: Request) -> Response:
        from totem.session.undo import redo, undo

        hub = self._hub(request)
        if isinstance(hub, Response):
            return hub
        body = parse(UndoBody, await request.body())
        if await hub.busy():
            return error("a run is in progress in this session", 409)
        act = redo if body.redo else undo
        done = act(self.state.store, session_id=str(request.path_params["sid"]),
                   root=self.state.root, steps=body.steps)
        if not done.ok:
            return error(done.summary, 409)
        return _json({"summary": done.summary, "files": done.files})

    async def export(self, request: Request) -> Response:
        session_id = str(request.path_params["sid"])
        data = self.state.export(session_id)
        if data is None:
            return error("no such session in this project", 404)
        body = json.dumps(data, ensure_ascii=False, indent=1).encode()
        name = f"totem-{session_id}.json"
        return Response(body, media_type="application/json; charset=utf-8",
                        headers={"Content-Disposition": f'attachment; filename="{name}"'})

    # models, agents, settings ---------------------------------------------------------------

    async def models(self, request: Request) -> Response:
        if request.query_params.get("refresh"):
            self.state.models.clear()
        return _json(await self.state.models.table(self.state.root))

    async def agents(self, request: Request) -> Response:
        return _json(self.state.agents())

    async def save_agent(self, request: Request) -> Response:
        body = parse(AgentBody, await request.body())
        problem = self.state.save_agent(body.model_dump())
        return error(problem) if problem else _json({"ok": True})

    async def delete_agent(self, request: Request) -> Response:
        scope, name = str(request.path_params["scope"]), str(request.path_params["name"])
        if scope not in ("global", "project"):
            return error("not found", 404)
        problem = self.state.delete_agent(scope, name)
        return error(problem, 404) if problem else _json({"ok": True})

    async def providers(self, request: Request) -> Response:
        from totem.server.settings import providers_view
        from totem.settings.config import ConfigError

        try:
            return _json(providers_view(self.state.root))
        except ConfigError as exc:
            return error(str(exc))

    async def trust(self, request: Request) -> Response:
        self.state.trust_folder()
        return _json({"ok": True, "trust": self.state.trust()})

    async def add_provider(self, request: Request) -> Response:
        body = parse(ProviderBody, await request.body())
        return self._settings_result(self.state.add_provider(body.model_dump()))

    async def remove_provider(self, request: Request) -> Response:
        return self._settings_result(self.state.remove_provider(str(request.path_params["name"])))

    def _settings_result(self, result: tuple[bool, str]) -> Response:
        ok, message = result
        return _json({"ok": ok, "message": message} if ok else {"error": message},
                     200 if ok else 400)

    async def test_provider(self, request: Request) -> Response:
        from totem.server.settings import test_provider

        return _json(await test_provider(self.state.root, str(request.path_params["name"])))

    async def integrations(self, request: Request) -> Response:
        from totem.session.integration_admin import integrations_view
        from totem.settings.config import ConfigError

        try:
            return _json({"integrations": integrations_view(self.state.root)})
        except ConfigError as exc:
            return error(str(exc))

    async def integration_key(self, request: Request) -> Response:
        from totem.session.integration_admin import set_integration_key
        from totem.settings.config import ConfigError
        from totem.settings.keys import KeyStoreError

        body = parse(IntegrationKeyBody, await request.body())
        try:
            message = set_integration_key(str(request.path_params["name"]), body.key,
                                          base_url=body.base_url, backend=body.backend)
        except (ValueError, ConfigError, KeyStoreError, OSError) as exc:
            return self._settings_result((False, str(exc)))
        self.state.settings_changed()
        return self._settings_result((True, message))

    async def hooks(self, request: Request) -> Response:
        config = self.state.config()
        return _json({"hooks": [{"event": h.event, "matcher": h.matcher, "command": h.command,
                                 "timeout": h.timeout, "source": h.source}
                                for h in config.hooks],
                      "ignored": [i for i in config.ignored if " hook: " in i],
                      "error": self.state.config_error})

    async def detect(self, request: Request) -> Response:
        from totem.server.settings import detect_servers

        return _json({"found": await detect_servers()})


def _dispatch(methods: dict[str, Handler]) -> Handler:
    """One endpoint for the methods of a path (Starlette answers 405 for the others)."""
    guarded = {method: _guarded(handler) for method, handler in methods.items()}

    async def endpoint(request: Request) -> Response:
        return await guarded[request.method if request.method != "HEAD" else "GET"](request)

    return endpoint

