"""Hooks run as real shell scripts, one event at a time (totem.hooks): what reaches them on
stdin, and what their exit codes and output say; a hook that hangs is killed with its
children at its timeout."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from tests.support.hook_scripts import alive, script
from totem.hooks import Hooks, HookSpec, parse_hooks
from totem.settings.errors import ConfigError


def test_a_pre_tool_hook_gets_the_event_as_json_and_may_block_with_exit_2(
        tmp_path: Path) -> None:
    seen = tmp_path / "seen.json"
    hook = script(tmp_path / "check.sh",
                  f'cat > {seen}\necho "no rm here" >&2\nexit 2\n')
    hooks = Hooks([HookSpec("pre_tool", hook, matcher="bash")], root=tmp_path)
    outcome = asyncio.run(hooks.pre_tool("ses_1", name="bash", args={"command": "rm -rf x"},
                                         call_id="call_1", mode="plan"))
    assert outcome.blocked and outcome.reason == "no rm here"
    event = json.loads(seen.read_text())
    assert event == {"session_id": "ses_1", "cwd": str(tmp_path),
                     "hook_event_name": "PreToolUse", "event": "pre_tool",
                     "permission_mode": "plan", "tool_name": "bash",
                     "tool_input": {"command": "rm -rf x"}, "tool_use_id": "call_1"}


def test_the_matcher_picks_the_tools(tmp_path: Path) -> None:
    marks = tmp_path / "marks"
    hooks = Hooks([
        HookSpec("pre_tool", f"echo bash >> {marks}", matcher="Bash"),
        HookSpec("pre_tool", f"echo edit-write >> {marks}", matcher="edit|write"),
        HookSpec("pre_tool", f"echo mcp >> {marks}", matcher="mcp__*"),
        HookSpec("pre_tool", f"echo every >> {marks}"),
    ], root=tmp_path)
    for name in ("bash", "write", "mcp__docs__search", "read"):
        asyncio.run(hooks.pre_tool("s", name=name, args={}, call_id="c"))
    assert sorted(marks.read_text().split()) == sorted(
        ["bash", "every", "edit-write", "every", "mcp", "every", "every"])


def test_json_on_stdout_blocks_or_adds_context(tmp_path: Path) -> None:
    block = script(tmp_path / "block.sh",
                   """echo '{"decision": "block", "reason": "tests fail"}'\n""")
    context = script(tmp_path / "context.sh", """echo '{"hookSpecificOutput": {"""
                     """"hookEventName": "PostToolUse", """
                     """"additionalContext": "3 lint errors"}}'\n""")
    deny = script(tmp_path / "deny.sh", """echo '{"hookSpecificOutput": {"permissionDecision":"""
                  """ "deny", "permissionDecisionReason": "not on main"}}'\n""")
    hooks = Hooks([HookSpec("post_tool", block), HookSpec("post_tool", context),
                   HookSpec("pre_tool", deny)], root=tmp_path)
    after = asyncio.run(hooks.post_tool("s", name="edit", args={}, call_id="c", output="ok",
                                        error=False))
    assert after.blocked and after.reason == "tests fail" and after.context == "3 lint errors"
    before = asyncio.run(hooks.pre_tool("s", name="bash", args={}, call_id="c"))
    assert before.blocked and before.reason == "not on main"


def test_exit_1_is_shown_and_ignored(tmp_path: Path) -> None:
    hook = script(tmp_path / "fails.sh", 'echo "linter crashed" >&2\nexit 1\n')
    outcome = asyncio.run(Hooks([HookSpec("pre_tool", hook)], root=tmp_path).pre_tool(
        "s", name="bash", args={}, call_id="c"))
    assert not outcome.blocked
    assert outcome.shown == [f"The pre_tool hook `{hook}` exited with 1: linter crashed "
                             "(ignored)."]


def test_garbage_on_stdout_is_ignored_and_broken_json_is_said(tmp_path: Path) -> None:
    garbage = script(tmp_path / "garbage.sh", "printf '\\001\\377 binary %s' noise\n")
    broken = script(tmp_path / "broken.sh", """echo '{"decision": "block", '\n""")
    hooks = Hooks([HookSpec("pre_tool", garbage)], root=tmp_path)
    outcome = asyncio.run(hooks.pre_tool("s", name="bash", args={}, call_id="c"))
    assert not outcome.blocked and outcome.shown == [] and outcome.context == ""
    hooks = Hooks([HookSpec("pre_tool", broken)], root=tmp_path)
    outcome = asyncio.run(hooks.pre_tool("s", name="bash", args={}, call_id="c"))
    assert not outcome.blocked and "not valid JSON" in outcome.shown[0]


def test_plain_stdout_is_context_for_a_prompt(tmp_path: Path) -> None:
    hook = script(tmp_path / "prompt.sh", 'echo "Branch: main"\n')
    outcome = asyncio.run(Hooks([HookSpec("user_prompt", hook)], root=tmp_path).user_prompt(
        "s", "fix it"))
    assert outcome.context == "Branch: main" and not outcome.blocked


def test_a_hook_that_hangs_is_killed_with_its_children_at_its_timeout(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    hook = script(tmp_path / "hangs.sh",
                  f"sleep 300 &\necho $! >> {pids}\n(sleep 300; echo late) &\n"
                  f"echo $! >> {pids}\necho $$ >> {pids}\nsleep 300\n")
    hooks = Hooks([HookSpec("pre_tool", hook, timeout=0.5)], root=tmp_path)
    outcome = asyncio.run(hooks.pre_tool("s", name="bash", args={}, call_id="c"))
    assert not outcome.blocked
    assert outcome.shown == [f"The pre_tool hook `{hook}` ran past its 0.5 s and was stopped."]
    started = [int(p) for p in pids.read_text().split()]
    assert len(started) == 3 and not any(alive(pid) for pid in started)


def test_session_start_runs_once_per_session(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    hooks = Hooks([HookSpec("session_start", f"cat >> {runs}; echo >> {runs}")],
                  root=tmp_path)
    for _ in range(2):
        asyncio.run(hooks.session_start("ses_a", resumed=False))
    asyncio.run(hooks.session_start("ses_b", resumed=True))
    seen = [json.loads(line) for line in runs.read_text().splitlines() if line.strip()]
    assert [(e["session_id"], e["source"]) for e in seen] == [("ses_a", "startup"),
                                                             ("ses_b", "resume")]


def test_the_config_form_and_its_mistakes() -> None:
    hooks = parse_hooks({"pre_tool": [{"matcher": "bash", "command": "~/bin/check.sh",
                                       "timeout": 5}],
                         "stop": [{"command": "make test"}]})
    assert hooks == [HookSpec("pre_tool", "~/bin/check.sh", "bash", 5.0),
                     HookSpec("stop", "make test", "", 60.0)]
    with pytest.raises(ConfigError, match="not an event"):
        parse_hooks({"PreToolUse": [{"command": "x"}]})
    with pytest.raises(ConfigError, match="needs a command"):
        parse_hooks({"stop": [{"matcher": ""}]})
    with pytest.raises(ConfigError, match="matcher is for pre_tool and post_tool"):
        parse_hooks({"stop": [{"matcher": "bash", "command": "x"}]})
    with pytest.raises(ConfigError, match="timeout"):
        parse_hooks({"stop": [{"command": "x", "timeout": 0}]})
