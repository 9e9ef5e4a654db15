"""`totem serve` probed as an attacker would, with raw sockets on 127.0.0.1: slow headers and
bodies are cut, tokenless bodies are refused unread, lenient parsing and bad JSON get a 4xx
(JSON, no traceback), and a foreign Origin or Host is refused on every route."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator

import pytest

from tests.support.raw_http import closed_by_server, connect, exchange, read_reply, rss_kib
from tests.support.web_serve import Served, project, scripted

HEADER_TIMEOUT = 1.0
BODY_TIMEOUT = 1.0
CUT_WITHIN = 20.0  # generous: the test says the cut happens, not how fast the machine is
LIMITS = {"TOTEM_SERVE_HEADER_TIMEOUT": str(HEADER_TIMEOUT),
          "TOTEM_SERVE_BODY_TIMEOUT": str(BODY_TIMEOUT), "TOTEM_SERVE_MAX_CONNECTIONS": "60"}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    tmp = tmp_path_factory.mktemp("hardening")
    with Served(project(tmp, scripted(tmp, [{"text": "hi"}] * 5)), env_extra=LIMITS) as served:
        yield served


def _head(server: Served, method: str, path: str, *, extra: str = "", token: bool = True,
          version: str = "1.1") -> bytes:
    auth = f"Authorization: Bearer {server.token}\r\n" if token else ""
    return (f"{method} {path} HTTP/{version}\r\nHost: 127.0.0.1:{server.port}\r\n{auth}{extra}"
            "Connection: close\r\n\r\n").encode()


def _no_traceback(body: bytes) -> None:
    assert b"Traceback" not in body and b'File "' not in body, body[:300]


def test_connections_stopped_mid_headers_are_closed(server: Served) -> None:
    sockets = [connect(server.port) for _ in range(20)]
    try:
        for sock in sockets:
            sock.sendall(f"GET /api/info HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\nX-A: "
                         .encode())
        assert all(closed_by_server(sock, within=CUT_WITHIN) for sock in sockets)
    finally:
        for sock in sockets:
            sock.close()
    assert server.request("GET", "/api/info")[0] == 200


def test_a_silent_connection_and_a_slow_second_request_are_closed(server: Served) -> None:
    with connect(server.port) as silent:
        assert closed_by_server(silent, within=CUT_WITHIN)
    with connect(server.port) as kept:
        kept.sendall(f"GET /api/info HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n"
                     f"Authorization: Bearer {server.token}\r\n\r\n".encode())
        first = kept.recv(65536)
        assert first.startswith(b"HTTP/1.1 200")
        kept.sendall(b"GET /api/info HTTP/1.1\r\nHost: ")  # and then nothing
        assert closed_by_server(kept, within=CUT_WITHIN)


def test_a_body_that_stops_midway_is_cut_with_408(server: Served) -> None:
    sid = server.new_session()
    with connect(server.port) as sock:
        sock.sendall(_head(server, "POST", f"/api/sessions/{sid}/runs",
                           extra="Content-Type: application/json\r\nContent-Length: 100\r\n")
                     + b'{"text": "sl')
        sock.settimeout(CUT_WITHIN)
        status, _, body = read_reply(sock)
    assert status == 408 and b"in time" in body
    assert server.json("GET", f"/api/sessions/{sid}")["live"] is None


def test_tokenless_big_bodies_are_refused_before_they_are_read(server: Served) -> None:
    assert server.process is not None
    before = rss_kib(server.process.pid, peak=True)
    size = 8 * 1024 * 1024
    statuses: list[int] = []

    def push() -> None:
        with connect(server.port) as sock:
            sock.sendall(_head(server, "POST", "/api/sessions", token=False,
                               extra=f"Content-Length: {size}\r\n"))
            try:
                for _ in range(size // 65536):
                    sock.sendall(b"x" * 65536)
            except OSError:
                pass  # the server closed the connection: the rest is not read
            statuses.append(read_reply(sock)[0])

    threads = [threading.Thread(target=push) for _ in range(20)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    grown = rss_kib(server.process.pid, peak=True) - before
    assert grown < 8 * 1024, f"the server's peak memory grew by {grown} KiB"
    assert set(statuses) <= {403, 0} and 403 in statuses


def test_a_body_over_the_limit_is_refused_unread_even_with_the_token(server: Served) -> None:
    status, _, body = exchange(server.port, _head(
        server, "POST", "/api/sessions", extra="Content-Length: 9000000\r\n"))
    assert status == 413 and json.loads(body)["error"]


@pytest.mark.parametrize("path", ["/api/sessions/SID/events%0A", "/api/info%0a",
                                  "/static/app.js%00", "/static/%00", "/%0d%0aX:y"])
def test_control_characters_in_the_path_are_refused(server: Served, path: str) -> None:
    sid = server.new_session()
    for origin in ("", "Origin: http://evil.example\r\n"):
        status, head, body = exchange(server.port, _head(
            server, "GET", path.replace("SID", sid), extra=origin))
        assert 400 <= status < 500 and b"text/event-stream" not in head, (path, status)
        _no_traceback(body)


@pytest.mark.parametrize("lengths", [["2", "5"], ["1_0"], ["+5"], ["-1"], ["0x5"], [" 5 5"]])
def test_lenient_content_lengths_are_refused(server: Served, lengths: list[str]) -> None:
    extra = "".join(f"Content-Length: {n}\r\n" for n in lengths)
    status, _, body = exchange(server.port, _head(server, "POST", "/api/sessions", extra=extra)
                               + b"{}" + b" " * 20)
    assert status == 400, (lengths, status, body)
    _no_traceback(body)


def test_http_1_0_is_not_kept_alive(server: Served) -> None:
    with connect(server.port) as sock:
        sock.sendall(f"GET /api/info HTTP/1.0\r\nHost: 127.0.0.1:{server.port}\r\n"
                     f"Authorization: Bearer {server.token}\r\nConnection: keep-alive\r\n\r\n"
                     .encode())
        status, head, _ = read_reply(sock)  # read_reply returns only once the server closed
    assert status == 200 and b"keep-alive" not in head.lower()


BAD_BODIES = [
    ("runs", b"[" * 100_000 + b"]" * 100_000),
    ("runs", b'{"text": ' + b"[" * 5000 + b"]" * 5000 + b"}"),
    ("runs", json.dumps({"text": 5}).encode()),
    ("runs", json.dumps({"text": ["a"]}).encode()),
    ("runs", json.dumps({"text": "hi", "model": "m" * 1_000_000}).encode()),
    ("runs", b"not json"),
    ("reply", json.dumps({"request_id": "x", "reply": "once", "message": 3}).encode()),
    ("fork", json.dumps({"message_id": {"a": 1}}).encode()),
    ("", json.dumps({"model": "label " * 200_000}).encode()),
    ("", json.dumps({"model": 7}).encode()),
]


@pytest.mark.parametrize(("route", "raw"), BAD_BODIES)
def test_bad_json_bodies_are_refused_with_a_json_error(
    server: Served, route: str, raw: bytes
) -> None:
    sid = server.new_session()
    path = f"/api/sessions/{sid}/{route}" if route else "/api/sessions"
    extra = f"Content-Type: application/json\r\nContent-Length: {len(raw)}\r\n"
    status, _, body = exchange(server.port, _head(server, "POST", path, extra=extra) + raw)
    assert status in (400, 413), (route, status, body[:200])
    assert json.loads(body)["error"]
    _no_traceback(body)
    assert server.json("GET", f"/api/sessions/{sid}")["live"] is None  # no run started
    listed = json.dumps(server.json("GET", "/api/sessions")).encode()
    assert len(listed) < 100_000  # no huge label was stored


def _routes(sid: str) -> list[tuple[str, str]]:
    return [("GET", "/"), ("GET", "/static/app.js"), ("GET", "/api/info"),
            ("GET", "/api/sessions"), ("GET", f"/api/sessions/{sid}"),
            ("GET", f"/api/sessions/{sid}/events"), ("GET", f"/api/sessions/{sid}/export"),
            ("GET", "/api/models"), ("GET", "/api/agents"), ("GET", "/api/settings/providers"),
            ("POST", "/api/sessions"), ("POST", f"/api/sessions/{sid}/runs"),
            ("PATCH", f"/api/sessions/{sid}"), ("DELETE", f"/api/sessions/{sid}"),
            ("POST", "/api/trust"), ("GET", "/nowhere")]


def test_a_foreign_origin_is_refused_on_every_route(server: Served) -> None:
    sid = server.new_session()
    for origin in ("http://evil.example", "null", f"http://localhost.evil:{server.port}"):
        for method, path in _routes(sid):
            status, head, body = exchange(server.port, _head(
                server, method, path, extra=f"Origin: {origin}\r\nContent-Length: 0\r\n"))
            assert status == 403 and b"origin" in body, (origin, method, path, status)
            assert b"event-stream" not in head
    assert server.json("GET", f"/api/sessions/{sid}")["session"]["id"] == sid  # not deleted


def test_a_rebinding_host_is_refused_on_every_route(server: Served) -> None:
    sid = server.new_session()
    for host in (f"evil.example:{server.port}", "127.0.0.1", f"127.0.0.1:{server.port + 1}"):
        for method, path in _routes(sid):
            request = (f"{method} {path} HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer "
                       f"{server.token}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
            status, head, body = exchange(server.port, request.encode())
            assert status == 400 and b"host" in body, (host, method, path, status)
            assert b"event-stream" not in head


def test_errors_are_json_and_the_security_headers_are_on_every_answer(server: Served) -> None:
    for method, path, expected in [("GET", "/api/nowhere", 404), ("PUT", "/api/sessions", 405),
                                   ("GET", "/api/sessions/", 404), ("GET", "/static/nope.js", 404)]:
        status, headers, body = server.request(method, path)
        assert status == expected and json.loads(body)["error"], (method, path)
        assert "script-src 'self'" in headers["content-security-policy"]
        assert headers["x-frame-options"] == "DENY"


def test_too_many_connections_get_503(tmp_path_factory: pytest.TempPathFactory) -> None:
    tmp = tmp_path_factory.mktemp("cap")
    cap = {**LIMITS, "TOTEM_SERVE_MAX_CONNECTIONS": "4", "TOTEM_SERVE_HEADER_TIMEOUT": "30"}
    with Served(project(tmp, scripted(tmp, [])), env_extra=cap) as capped:
        held = [connect(capped.port) for _ in range(4)]
        try:
            status, _, _ = exchange(capped.port, _head(capped, "GET", "/api/info"))
            assert status == 503
        finally:
            for sock in held:
                sock.close()
        assert capped.request("GET", "/api/info")[0] == 200


def test_the_listening_socket_gets_tcp_nodelay_on_its_connections() -> None:
    """asyncio sets TCP_NODELAY on accepted sockets only when the listener names TCP; without
    it every answer after the first on a keep-alive connection waits for a delayed ACK."""
    import socket

    from totem.server import listening_socket

    with listening_socket("127.0.0.1", 0) as sock:
        assert sock.proto == socket.IPPROTO_TCP


def test_the_server_stops_at_once_with_event_streams_open(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    tmp = tmp_path_factory.mktemp("stop")
    served = Served(project(tmp, scripted(tmp, [])))
    with served:
        sid = served.new_session()
        streams = [connect(served.port) for _ in range(3)]
        for sock in streams:
            sock.sendall(_head(served, "GET", f"/api/sessions/{sid}/events"))
            assert sock.recv(65536).startswith(b"HTTP/1.1 200")
    assert served.process is not None and served.process.returncode == 0
    assert all(closed_by_server(sock, within=CUT_WITHIN) for sock in streams)
    for sock in streams:
        sock.close()
    assert "graceful shutdown exceeded" not in "".join(served.output)

