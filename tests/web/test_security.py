"""plain HTTP requests: the token, the cookie, Origin, Host, and the loud warning."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.web_serve import Served, project, scripted


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    tmp = tmp_path_factory.mktemp("security")
    with Served(project(tmp, scripted(tmp, [{"text": "hi"}]))) as served:
        yield served


PATHS = ["/", "/static/app.js", "/api/info", "/api/sessions", "/api/models", "/api/agents",
         "/api/settings/providers"]


@pytest.mark.parametrize("path", PATHS)
def test_a_request_without_the_token_is_refused(server: Served, path: str) -> None:
    status, _, body = server.request("GET", path, token=False)
    assert status in (401, 403), body
    assert b"token" in body


def test_a_wrong_token_is_refused_everywhere(server: Served) -> None:
    wrong = {"Authorization": "Bearer not-the-token"}
    for method, path in [("GET", "/api/sessions"), ("POST", "/api/sessions")]:
        status, _, _ = server.request(method, path, {} if method == "POST" else None,
                                      headers=wrong, token=False)
        assert status == 403
    status, _, _ = server.request("GET", "/?token=wrong", token=False)
    assert status == 401
    sid = server.new_session()
    status, _, _ = server.request("GET", f"/api/sessions/{sid}/events", headers=wrong,
                                  token=False)
    assert status == 403


def test_the_printed_url_sets_a_cookie_that_opens_the_page(server: Served) -> None:
    status, headers, _ = server.request("GET", f"/?token={server.token}", token=False)
    assert status == 303 and headers["location"] == "/"
    cookie = headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie
    pair = cookie.split(";")[0]
    status, headers, body = server.request("GET", "/", headers={"Cookie": pair}, token=False)
    assert status == 200 and b"<title>totem</title>" in body
    assert "script-src 'self'" in headers["content-security-policy"]
    status, _, _ = server.request("GET", "/api/sessions", headers={"Cookie": pair}, token=False)
    assert status == 200


def test_a_foreign_origin_is_refused_for_changes_and_the_stream(server: Served) -> None:
    evil = {"Origin": "http://evil.example"}
    status, _, body = server.request("POST", "/api/sessions", {}, headers=evil)
    assert status == 403 and b"origin" in body
    sid = server.new_session()
    for path in [f"/api/sessions/{sid}/runs", f"/api/sessions/{sid}/abort",
                 "/api/agents", "/api/settings/providers"]:
        status, _, _ = server.request("POST", path, {"text": "x"}, headers=evil)
        assert status == 403, path
    status, _, _ = server.request("GET", f"/api/sessions/{sid}/events", headers=evil)
    assert status == 403
    cross = {"Sec-Fetch-Site": "cross-site"}
    status, _, _ = server.request("POST", "/api/sessions", {}, headers=cross)
    assert status == 403


def test_the_page_s_own_origin_is_accepted(server: Served) -> None:
    own = {"Origin": server.base}
    status, _, _ = server.request("POST", "/api/sessions", {}, headers=own)
    assert status == 201


def test_another_host_name_is_refused(server: Served) -> None:
    """A page of another site that resolves its own name to 127.0.0.1 (DNS rebinding)."""
    status, _, _ = server.request("GET", "/api/sessions",
                                  headers={"Host": f"evil.example:{server.port}"})
    assert status == 400


def test_static_files_do_not_leave_their_folder(server: Served) -> None:
    for path in ["/static/../app.py", "/static/%2e%2e/app.py", "/static/../../config.py"]:
        status, _, body = server.request("GET", path)
        assert status == 404, (path, body[:100])


def test_a_non_loopback_host_warns_loudly(tmp_path: Path) -> None:
    """The warning is printed before listening; `--port -1` then fails at once."""
    done = subprocess.run(
        [sys.executable, "-m", "totem.cli.serve", "--host", "0.0.0.0", "--port", "-1"],
        cwd=tmp_path, capture_output=True, text=True, timeout=30,
    )
    assert "WARNING" in done.stderr and "token" in done.stderr
    assert done.returncode == 2
