"""The routes of `totem serve`: the page, its API, the event stream.

    GET    /                                  the page (`/?token=T` sets the cookie)
    GET    /static/FILE                       its scripts and styles
    GET    /api/info                          project, commands, agents, default model
    GET    /api/sessions                      the project's sessions (forks included)
    POST   /api/sessions                      a new session {model?}
    GET    /api/sessions/ID                   snapshot: stored messages + the live run's start
    GET    /api/sessions/ID/events            server-sent events (Last-Event-ID or ?after=N)
    POST   /api/sessions/ID/runs              start a run {text, model?, agent?}
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
    GET    /api/settings/integrations  POST /api/settings/integrations/NAME/key  (session/
                                       integration_admin.py: state, a key to the key store)
    POST   /api/trust                         trust the folder: its own .totem config counts
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from totem.server.http import EventStream, Request, Response, json_response
from totem.server.hub import Hub
from totem.server.security import Guard
from totem.server.state import ServerState

__all__ = ["App"]

STATIC = Path(__file__).with_name("static")
_TYPES = {".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8",
          ".css": "text/css; charset=utf-8", ".svg": "image/svg+xml", ".png": "image/png",
          ".ico": "image/x-icon"}
Route = Callable[..., Awaitable[Response | EventStream]]


def _error(message: str, status: int = 400) -> Response:
    return json_response({"error": message}, status)


def _body(request: Request) -> dict[str, Any]:
    try:
        data = request.json()
    except ValueError:
        raise _Invalid("the body is not JSON") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise _Invalid("the body must be a JSON object")
    return data


class _Invalid(Exception):
    pass


class App:
    def __init__(self, state: ServerState, guard: Guard) -> None:
        self.state = state
        self.guard = guard
        self._static: dict[str, tuple[float, bytes]] = {}
        s = r"([A-Za-z0-9_\-]+)"
        table: list[tuple[str, str, Route]] = [
            ("GET", r"/api/info", self.info),
            ("GET", r"/api/sessions", self.sessions),
            ("POST", r"/api/sessions", self.new_session),
            ("GET", rf"/api/sessions/{s}", self.snapshot),
            ("GET", rf"/api/sessions/{s}/events", self.events),
            ("POST", rf"/api/sessions/{s}/runs", self.start_run),
            ("POST", rf"/api/sessions/{s}/abort", self.abort),
            ("POST", rf"/api/sessions/{s}/reply", self.reply),
            ("POST", rf"/api/sessions/{s}/answer", self.answer),
            ("POST", rf"/api/sessions/{s}/fork", self.fork),
            ("POST", rf"/api/sessions/{s}/undo", self.undo),
            ("GET", rf"/api/sessions/{s}/export", self.export),
            ("GET", r"/api/models", self.models),
            ("GET", r"/api/agents", self.agents),
            ("POST", r"/api/agents", self.save_agent),
            ("DELETE", rf"/api/agents/(global|project)/{s}", self.delete_agent),
            ("GET", r"/api/settings/providers", self.providers),
            ("POST", r"/api/settings/providers", self.add_provider),
            ("DELETE", r"/api/settings/providers/([A-Za-z0-9_.\-]+)", self.remove_provider),
            ("POST", r"/api/settings/providers/([A-Za-z0-9_.\-]+)/test", self.test_provider),
            ("GET", r"/api/settings/detect", self.detect),
            ("GET", r"/api/settings/integrations", self.integrations),
            ("POST", r"/api/settings/integrations/([a-z]+)/key", self.integration_key),
            ("POST", r"/api/trust", self.trust),
        ]
        self.routes = [(m, re.compile(p + "$"), f) for m, p, f in table]

    async def handle(self, request: Request) -> Response | EventStream:
        """Answer `request` (in one place: `front`, then `api`)."""
        return self.front(request) or await self.api(request)

    def front(self, request: Request) -> Response | None:
        """What can be answered without the sessions: refusals, the page, static files.

        Runs in the server's front thread; None hands the request to `api`."""
        stream = request.path.endswith("/events")
        refused = self.guard.refusal(request, stream=stream)
        if refused is not None:
            if request.path == "/" and refused == "missing or wrong token":
                return Response(401, _LOCKED, "text/html; charset=utf-8")
            return _error(f"refused: {refused}", 403 if refused != "unknown host" else 400)
        if request.path in ("/", "/index.html") and request.method in ("GET", "HEAD"):
            return self.page(request)
        if request.path.startswith("/static/") and request.method in ("GET", "HEAD"):
            return self.static(request, request.path.removeprefix("/static/"))
        return None

    async def api(self, request: Request) -> Response | EventStream:
        """The API, on the main loop (`front` has let the request through)."""
        allowed = []
        for method, pattern, route in self.routes:
            match = pattern.match(request.path)
            if match is None:
                continue
            if method != request.method:
                allowed.append(method)
                continue
            try:
                return await route(request, *match.groups())
            except _Invalid as exc:
                return _error(str(exc))
        if allowed:
            return _error("method not allowed", 405)
        return _error("not found", 404)

    # the page -----------------------------------------------------------------------------

    def page(self, request: Request) -> Response:
        if self.guard.token_in_query(request):  # first visit: the cookie, then a clean URL
            return Response(303, b"", headers={"Location": "/", "Set-Cookie": self.guard.cookie()})
        return self.static(request, "index.html")

    def static(self, request: Request, name: str) -> Response:
        path = (STATIC / name).resolve()
        if not path.is_file() or STATIC.resolve() not in path.parents:
            return _error("not found", 404)
        stat = path.stat()
        tag = f'"{stat.st_mtime_ns:x}-{stat.st_size:x}"'
        headers = {"ETag": tag, "Cache-Control": "no-cache"}
        if request.headers.get("if-none-match") == tag:
            return Response(304, b"", headers=headers)
        cached = self._static.get(name)
        if cached is None or cached[0] != stat.st_mtime_ns:
            cached = (stat.st_mtime_ns, path.read_bytes())
            self._static[name] = cached
        kind = _TYPES.get(path.suffix, "application/octet-stream")
        return Response(200, cached[1], kind, headers)

    # sessions -----------------------------------------------------------------------------

    async def info(self, request: Request) -> Response:
        return json_response(self.state.info())

    async def sessions(self, request: Request) -> Response:
        return json_response({"sessions": self.state.session_list()})

    async def new_session(self, request: Request) -> Response:
        body = _body(request)
        model = body.get("model")
        return json_response({"session": self.state.new_session(str(model or ""))}, 201)

    def _hub(self, session_id: str) -> Hub | Response:
        hub = self.state.hub(session_id)
        return hub if hub is not None else _error("no such session in this project", 404)

    async def snapshot(self, request: Request, session_id: str) -> Response:
        hub = self._hub(session_id)
        if isinstance(hub, Response):
            return hub
        return json_response(self.state.snapshot(hub))

    async def events(self, request: Request, session_id: str) -> Response | EventStream:
        hub = self._hub(session_id)
        if isinstance(hub, Response):
            return hub
        given = request.headers.get("last-event-id") or request.query.get("after")
        try:
            after = int(given) if given else hub.last_id
        except ValueError:
            return _error("Last-Event-ID must be a number")
        return EventStream(hub.watch(after))

    async def start_run(self, request: Request, session_id: str) -> Response:
        hub = self._hub(session_id)
        if isinstance(hub, Response):
            return hub
        body = _body(request)
        text = str(body.get("text") or "").strip()
        if not text:
            return _error("the message is empty")
        if hub.running:
            return _error("a run is in progress in this session", 409)
        model = str(body.get("model") or "") or None
        agent = str(body.get("agent") or "") or None
        from totem.settings.config import ConfigError

        try:
            hub.start(text, model=model, agent=agent, generation=self.state.generation)
        except ConfigError as exc:  # the configuration cannot be read: nothing started
            return _error(str(exc))
        return json_response({"started": True, "after": hub.run_start}, 202)

    async def abort(self, request: Request, session_id: str) -> Response:
        hub = self._hub(session_id)
        if isinstance(hub, Response):
            return hub
        return json_response({"aborted": hub.stop()})

    async def reply(self, request: Request, session_id: str) -> Response:
        from totem.policy.permission import Reply

        hub = self._hub(session_id)
        if isinstance(hub, Response):
            return hub
        body = _body(request)
        kind = body.get("reply")
        if kind not in ("once", "always", "reject"):
            return _error("reply must be once, always or reject")
        done = hub.reply(str(body.get("request_id")), Reply(kind, str(body.get("message") or "")))
        return json_response({"ok": done}, 200 if done else 409)

    async def answer(self, request: Request, session_id: str) -> Response:
        hub = self._hub(session_id)
        if isinstance(hub, Response):
            return hub
        body = _body(request)
        answer = body.get("answer")
        done = hub.answer(str(body.get("request_id")), None if answer is None else str(answer))
        return json_response({"ok": done}, 200 if done else 409)

    async def fork(self, request: Request, session_id: str) -> Response:
        until = _body(request).get("message_id")
        found = self.state.fork(session_id, str(until) if until else None)
        if isinstance(found, str):
            return _error(found, 404)
        return json_response({"session": found}, 201)

    async def undo(self, request: Request, session_id: str) -> Response:
        from totem.session.undo import redo, undo

        hub = self._hub(session_id)
        if isinstance(hub, Response):
            return hub
        if hub.running:
            return _error("a run is in progress in this session", 409)
        body = _body(request)
        act = redo if body.get("redo") else undo
        given = body.get("steps")
        steps = given if isinstance(given, int) else 1
        done = act(self.state.store, session_id=session_id, root=self.state.root, steps=steps)
        if not done.ok:
            return _error(done.summary, 409)
        return json_response({"summary": done.summary, "files": done.files})

    async def export(self, request: Request, session_id: str) -> Response:
        import json

        data = self.state.export(session_id)
        if data is None:
            return _error("no such session in this project", 404)
        body = json.dumps(data, ensure_ascii=False, indent=1).encode()
        name = f"totem-{session_id}.json"
        return Response(200, body, "application/json; charset=utf-8",
                        {"Content-Disposition": f'attachment; filename="{name}"'})

    # models, agents, settings ---------------------------------------------------------------

    async def models(self, request: Request) -> Response:
        if request.query.get("refresh"):
            self.state.models.clear()
        return json_response(await self.state.models.table(self.state.root))

    async def agents(self, request: Request) -> Response:
        return json_response(self.state.agents())

    async def save_agent(self, request: Request) -> Response:
        problem = self.state.save_agent(_body(request))
        return _error(problem) if problem else json_response({"ok": True})

    async def delete_agent(self, request: Request, scope: str, name: str) -> Response:
        problem = self.state.delete_agent(scope, name)
        return _error(problem, 404) if problem else json_response({"ok": True})

    async def providers(self, request: Request) -> Response:
        from totem.server.settings import providers_view
        from totem.settings.config import ConfigError

        try:
            return json_response(providers_view(self.state.root))
        except ConfigError as exc:
            return _error(str(exc))

    async def trust(self, request: Request) -> Response:
        self.state.trust_folder()
        return json_response({"ok": True, "trust": self.state.trust()})

    async def add_provider(self, request: Request) -> Response:
        return self._settings_result(self.state.add_provider(_body(request)))

    async def remove_provider(self, request: Request, name: str) -> Response:
        return self._settings_result(self.state.remove_provider(name))

    def _settings_result(self, result: tuple[bool, str]) -> Response:
        ok, message = result
        return json_response({"ok": ok, "message": message} if ok else {"error": message},
                             200 if ok else 400)

    async def test_provider(self, request: Request, name: str) -> Response:
        from totem.server.settings import test_provider

        return json_response(await test_provider(self.state.root, name))

    async def integrations(self, request: Request) -> Response:
        from totem.session.integration_admin import integrations_view
        from totem.settings.config import ConfigError

        try:
            return json_response({"integrations": integrations_view(self.state.root)})
        except ConfigError as exc:
            return _error(str(exc))

    async def integration_key(self, request: Request, name: str) -> Response:
        from totem.session.integration_admin import set_integration_key
        from totem.settings.config import ConfigError
        from totem.settings.keys import KeyStoreError

        data = _body(request)
        try:
            message = set_integration_key(name, str(data.get("key") or ""),
                                          base_url=str(data.get("base_url") or ""),
                                          backend=str(data.get("backend") or ""))
        except (ValueError, ConfigError, KeyStoreError, OSError) as exc:
            return self._settings_result((False, str(exc)))
        self.state.settings_changed()
        return self._settings_result((True, message))

    async def detect(self, request: Request) -> Response:
        from totem.server.settings import detect_servers

        return json_response({"found": await detect_servers()})


_LOCKED = b"""<!doctype html><meta charset="utf-8"><title>totem</title>
<body style="font:16px system-ui;margin:4em auto;max-width:36em">
<h1>totem</h1><p>This page needs its token. Open the URL that <code>totem serve</code>
printed (it ends in <code>?token=...</code>).</p></body>"""
