from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

import pytest

from tests.support.tool_calls import Call, MakeContext, answering
from totem.abort import Aborted
from totem.policy.permission import PermissionDenied, Rule
from totem.tools.base import ToolContext, ToolError, ToolSettings
from totem.tools.bash import Bash, BashInput

SPAWN = 'sleep 100 & a=$!; sleep 100 & b=$!; echo "$$ $a $b" > pids.tmp; mv pids.tmp pids; '


def gone(pid: int) -> bool:
    """The process has exited (a zombie waiting for its reaper counts as gone)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] == "Z"


def assert_all_gone(pids: list[int]) -> None:
    deadline = time.monotonic() + 3
    while not all(gone(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert [pid for pid in pids if not gone(pid)] == []


def read_pids(project: Path) -> list[int]:
    return [int(pid) for pid in (project / "pids").read_text().split()]


async def wait_for_pids(project: Path) -> None:
    while not (project / "pids").exists():
        await asyncio.sleep(0.02)


def test_output_and_exit_code(project: Path, ctx: ToolContext, call: Call) -> None:
    result = call(Bash(), ctx, command="echo hello; echo oops >&2; pwd", description="greet")
    assert result.output == f"hello\noops\n{os.path.realpath(project)}\n\nExit code: 0"
    assert result.title == "greet"
    failed = call(Bash(), ctx, command="printf 'no newline'; exit 3")
    assert failed.output == "no newline\n\nExit code: 3"
    assert call(Bash(), ctx, command="true").output == "(no output)\n\nExit code: 0"


def test_empty_command(ctx: ToolContext, call: Call) -> None:
    with pytest.raises(ToolError, match="empty"):
        call(Bash(), ctx, command="  ")


def test_forbidden_command_is_refused_before_asking(
    project: Path, make_ctx: MakeContext, call: Call
) -> None:
    settings = ToolSettings(forbidden_commands=["git push *", "touch /*"])
    ctx = make_ctx(mode="headless", settings=settings)
    with pytest.raises(ToolError, match="git push.*forbid"):
        call(Bash(), ctx, command="touch made.txt && timeout 5 git push origin main")
    assert not (project / "made.txt").exists()


def test_asks_for_each_command(project: Path, make_ctx: MakeContext, call: Call) -> None:
    rules = [Rule("bash", "echo *", "allow"), Rule("bash", "touch *", "allow")]
    ctx = make_ctx(mode="headless", rules=rules)
    assert "Exit code: 0" in call(Bash(), ctx, command="echo a && touch ok.txt").output
    with pytest.raises(PermissionDenied):
        call(Bash(), ctx, command="echo a | touch no.txt | rm ok.txt")
    assert (project / "ok.txt").exists() and not (project / "no.txt").exists()


def test_always_remembers_each_command_with_its_subcommand(
    project: Path, make_ctx: MakeContext, call: Call
) -> None:
    ctx = make_ctx()
    asked = answering(ctx, "always")
    call(Bash(), ctx, command="git status && ls -la | wc -l")
    assert asked[0].patterns == ["git status", "ls -la", "wc -l"]
    assert asked[0].always == ["git status *", "ls *", "wc *"]
    assert ctx.permission.action_for("bash", "git status --short") == "allow"
    assert ctx.permission.action_for("bash", "git log --oneline") == "ask"
    assert ctx.permission.action_for("bash", "rm x") == "ask"


def test_output_keeps_head_and_tail(make_ctx: MakeContext, call: Call) -> None:
    ctx = make_ctx(settings=ToolSettings(output_limit=1000))
    result = call(Bash(), ctx, command="seq 1 100000")
    assert result.output.startswith("1\n2\n3\n")
    assert "100000\n\nExit code: 0" in result.output
    assert "bytes of output cut" in result.output
    assert len(result.output) < 1300


def test_timeout_kills_the_process_group(project: Path, ctx: ToolContext, call: Call) -> None:
    started = time.monotonic()
    result = call(Bash(), ctx, command=SPAWN + "echo started; wait", timeout=1)
    assert time.monotonic() - started < 10
    assert result.output.startswith("started\n")
    assert "Timed out after 1 s" in result.output
    assert_all_gone(read_pids(project))


def test_timeout_is_capped(make_ctx: MakeContext, call: Call) -> None:
    ctx = make_ctx(settings=ToolSettings(bash_max_timeout=1))
    result = call(Bash(), ctx, command="sleep 30", timeout=300)
    assert "Timed out after 1 s" in result.output


def test_background_jobs_do_not_outlive_the_command(
    project: Path, ctx: ToolContext, call: Call
) -> None:
    started = time.monotonic()
    result = call(Bash(), ctx, command=SPAWN + "echo done")
    assert time.monotonic() - started < 10
    assert result.output == "done\n\nExit code: 0"
    assert_all_gone(read_pids(project))


def test_cancellation_kills_and_reraises(project: Path, ctx: ToolContext) -> None:
    ctx.tool_name = "bash"
    args = BashInput(command=SPAWN + "wait")

    async def scenario() -> None:
        task = asyncio.create_task(Bash().run(args, ctx))
        await wait_for_pids(project)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(scenario())
    assert_all_gone(read_pids(project))


def test_abort_kills_and_raises_aborted(project: Path, ctx: ToolContext) -> None:
    ctx.tool_name = "bash"
    args = BashInput(command=SPAWN + "echo partial; wait")

    async def scenario() -> str:
        task = asyncio.create_task(Bash().run(args, ctx))
        await wait_for_pids(project)
        await asyncio.sleep(0.1)
        ctx.abort.abort()
        with pytest.raises(Aborted) as caught:
            await task
        return str(caught.value)

    message = asyncio.run(scenario())
    assert message == "partial\n[Aborted by user]"
    assert_all_gone(read_pids(project))


def test_already_aborted_runs_nothing(project: Path, ctx: ToolContext, call: Call) -> None:
    ctx.abort.abort()
    with pytest.raises(Aborted):
        call(Bash(), ctx, command="touch ran.txt")
    assert not (project / "ran.txt").exists()


def test_sigterm_ignored_means_sigkill(project: Path, ctx: ToolContext, call: Call) -> None:
    result = call(Bash(), ctx, command="trap '' TERM; " + SPAWN + "wait", timeout=1)
    assert "Timed out after 1 s" in result.output
    assert_all_gone(read_pids(project))
