"""totem's MCP client as the official conformance suite drives it (scripts/mcp-conformance.sh).

    python -m totem.mcp.conformance_client SERVER_URL     (scenario in MCP_CONFORMANCE_SCENARIO)

The suite starts a test server per scenario and runs this with its URL. Everything goes
through the same path as a run: `McpManager` (start question allowed, as with --yes), the
`McpTool` adapter (argument check, permission, progress, result mapping), and elicitation
as questions, answered here the way a person who accepts the defaults would.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from totem.events import Event, Notice, QuestionAsked
from totem.mcp.config import HttpServer, IdentityProvider, OAuthSettings
from totem.mcp.elicitation import ANSWER
from totem.mcp.manager import SIGN_IN, McpManager
from totem.policy.permission import PermissionService
from totem.policy.questions import QuestionService
from totem.settings.config import Secret
from totem.tools.base import Tool, ToolContext, ToolError, ToolSettings, parse_arguments

__all__ = ["main", "run_scenario"]

CLIENT_METADATA_URL = "https://conformance-test.local/client-metadata.json"  # what the suite checks
# what each scenario's test server offers, and the arguments a model would send
CALLS: dict[str, tuple[str, dict[str, Any]]] = {
    "tools_call": ("add_numbers", {"a": 5, "b": 3}),
    "elicitation-sep1034-client-defaults": ("test_client_elicitation_defaults", {}),
    "sse-retry": ("test_reconnection", {}),
}


def _answer(event: QuestionAsked) -> str:
    """Accept the form, and take each field's default (an empty answer); agree to sign in."""
    if ANSWER in event.options:
        return ANSWER
    return SIGN_IN if SIGN_IN in event.options else ""


async def _follow(url: str) -> None:
    """The browser of a person who is already signed in: the suite's authorization endpoint
    redirects at once, and following it brings the code to totem's loopback address."""
    import httpx2

    async with httpx2.AsyncClient(follow_redirects=True, timeout=20.0) as http:
        await http.get(url)


def _oauth(context: dict[str, Any]) -> OAuthSettings:
    """The client registered beforehand when the scenario gives one; a client-id URL (which
    the suite only reads when the server says it takes one) otherwise; a machine's
    credentials (a secret, or a private key) for the client-credentials scenarios; the
    identity provider, its client and the person's ID token for cross-app access (the
    secrets as a person would configure them: `${env:...}` references, never the values)."""
    secret = Secret(context["client_secret"]) if context.get("client_secret") else None
    name = str(context.get("name", ""))
    if name.startswith("auth/client-credentials"):
        key = context.get("private_key_pem")
        return OAuthSettings(
            grant="client_credentials", client_id=context.get("client_id"),
            client_secret=secret, private_key=Secret(key) if key else None,
            signing_algorithm=context.get("signing_algorithm", "ES256"),
        )
    if "idp_token_endpoint" in context:
        os.environ["CONFORMANCE_CLIENT_SECRET"] = context["client_secret"]
        os.environ["CONFORMANCE_ID_TOKEN"] = context["idp_id_token"]
        return OAuthSettings(
            grant="cross_app_access", client_id=context["client_id"],
            client_secret=Secret("${env:CONFORMANCE_CLIENT_SECRET}"),
            idp=IdentityProvider(token_endpoint=context["idp_token_endpoint"],
                                 client_id=context["idp_client_id"],
                                 id_token=Secret("${env:CONFORMANCE_ID_TOKEN}")),
        )
    return OAuthSettings(
        client_id=context.get("client_id"),
        client_secret=secret,
        client_metadata_url=CLIENT_METADATA_URL,
    )


async def run_scenario(url: str, scenario: str, *, root: Path) -> int:
    permission = PermissionService(rules=[], mode="yes", project=str(root))
    questions = QuestionService(interactive=True)
    loop = asyncio.get_running_loop()

    def emit(event: Event) -> None:
        if isinstance(event, QuestionAsked):
            print(f"question: {event.question} -> {_answer(event)!r}")
            loop.call_soon(questions.reply, event.request_id, _answer(event))
        elif isinstance(event, Notice):
            print(f"notice: {event.text}")
        else:
            print(f"event: {event}")

    questions.emit = emit
    permission.emit = emit
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    server = HttpServer(name="conformance", url=url, timeout=20.0, startup_timeout=20.0,
                        oauth=_oauth(context))
    with tempfile.TemporaryDirectory(prefix="totem-conformance-") as logs:
        os.environ["XDG_CONFIG_HOME"] = logs  # the tokens go to a key store of its own
        manager = McpManager(
            root, {"conformance": server}, permission=permission, questions=questions,
            log_dir=Path(logs), open_url=_follow,
        )
        async with manager:
            status = manager.status()[0]
            print(f"server: {status.state} {status.detail} protocol={status.protocol}")
            print(f"tools: {', '.join(status.tools) or '(none)'}")
            if status.state != "ready":
                return 1
            call = CALLS.get(scenario)
            if call is None and scenario.startswith("auth/"):
                call = ("test-tool", {})
            if call is None:
                return 0
            tools = {t.name: t for t in manager.tools}
            tool = tools.get(f"conformance__{call[0]}")
            if tool is None:
                print(f"the server offers no tool {call[0]}")
                return 1
            return await _call(tool, call[1], root, permission, questions, emit)


async def _call(
    tool: Tool,
    arguments: dict[str, Any],
    root: Path,
    permission: PermissionService,
    questions: QuestionService,
    emit: Any,
) -> int:
    from totem.abort import AbortSignal

    ctx = ToolContext(
        root=root,
        session_id="conformance",
        call_id="call_1",
        abort=AbortSignal(),
        permission=permission,
        settings=ToolSettings(),
        emit=emit,
        tool_name=tool.name,
        questions=questions,
    )
    try:
        result = await tool.run(parse_arguments(tool, arguments), ctx)
    except ToolError as exc:
        print(f"tool error: {exc}")
        return 1
    print(f"result: {result.output}")
    return 0


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if not args:
        print("usage: python -m totem.mcp.conformance_client SERVER_URL", file=sys.stderr)
        return 2
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    return asyncio.run(run_scenario(args[-1], scenario, root=Path.cwd()))


if __name__ == "__main__":
    raise SystemExit(main())
