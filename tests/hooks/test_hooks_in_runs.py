"""The person's hooks in real `totem run` processes against the package's fake OpenAI
server, each hook a real shell script: every event, blocking, context, the stop hook's
bounded return to work, and a project's hooks only once its folder is trusted."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.support.headless import Project, json_lines
from tests.support.hook_scripts import script

TOUCH = {"tool": "bash", "args": {"command": "touch ran.txt"}}


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return Project(tmp_path)


def hooks_config(**events: list[dict[str, Any]]) -> str:
    return "hooks: " + json.dumps(events) + "\n"


def tool_results(chat: dict[str, Any]) -> list[str]:
    return [str(m["content"]) for m in chat["messages"] if m["role"] == "tool"]


def test_a_pre_tool_hook_that_exits_2_refuses_the_call_with_its_reason(
        project: Project) -> None:
    hook = script(project.tmp / "guard.sh", 'echo "bash is off limits today" >&2\nexit 2\n')
    project.config_extra = hooks_config(pre_tool=[{"matcher": "bash", "command": hook}])
    with project.serve([TOUCH, {"text": "It was blocked."}]):
        done = project.totem("run", "--yes", "--format", "json", "make ran.txt")
    assert done.returncode == 0, done.stderr
    assert not (project.root / "ran.txt").exists()
    assert tool_results(project.chats()[-1]) == [
        "Blocked by a hook before it ran: bash is off limits today"]
    notices = [e["text"] for e in json_lines(done.stdout) if e["type"] == "notice"]
    assert "A pre_tool hook blocked bash: bash is off limits today" in notices


def test_an_exit_1_is_shown_and_the_call_runs(project: Project) -> None:
    hook = script(project.tmp / "broken.sh", 'echo "checker missing" >&2\nexit 1\n')
    project.config_extra = hooks_config(pre_tool=[{"command": hook}])
    with project.serve([TOUCH, {"text": "Made it."}]):
        done = project.totem("run", "--yes", "--format", "json", "make ran.txt")
    assert done.returncode == 0, done.stderr
    assert (project.root / "ran.txt").exists()
    notices = [e["text"] for e in json_lines(done.stdout) if e["type"] == "notice"]
    assert f"The pre_tool hook `{hook}` exited with 1: checker missing (ignored)." in notices


def test_a_post_tool_hook_sees_the_result_and_adds_context(project: Project) -> None:
    seen = project.tmp / "post.json"
    hook = script(project.tmp / "post.sh", f"cat > {seen}\n"
                  """echo '{"hookSpecificOutput": {"additionalContext": "ran.txt is new"}}'\n""")
    project.config_extra = hooks_config(post_tool=[{"matcher": "bash", "command": hook}])
    with project.serve([TOUCH, {"text": "Made it."}]):
        done = project.totem("run", "--yes", "make ran.txt")
    assert done.returncode == 0, done.stderr
    event = json.loads(seen.read_text())
    assert event["hook_event_name"] == "PostToolUse" and event["tool_name"] == "bash"
    assert event["tool_input"]["command"] == "touch ran.txt"
    assert event["tool_response"]["is_error"] is False
    assert tool_results(project.chats()[-1])[0].endswith("[Hook context: ran.txt is new]")


def test_a_user_prompt_hook_adds_context_or_blocks_the_prompt(project: Project) -> None:
    hook = script(project.tmp / "prompt.sh",
                  'if grep -q secret; then echo "no secrets in prompts" >&2; exit 2; fi\n'
                  'echo "Today is release day."\n')
    project.config_extra = hooks_config(user_prompt=[{"command": hook}])
    with project.serve([{"text": "Noted."}]):
        fine = project.totem("run", "plan the release")
        blocked = project.totem("run", "--format", "json", "here is my secret")
    assert fine.returncode == 0, fine.stderr
    assert len(project.chats()) == 1  # the blocked prompt never reached the model
    sent = project.chats()[0]["messages"][-1]["content"]
    assert sent == "plan the release\n\nToday is release day."
    assert blocked.returncode == 3
    end = json_lines(blocked.stdout)[-2]
    assert end["type"] == "run_finished" and end["reason"] == "rejected"
    assert end["detail"] == "A user_prompt hook blocked the request: no secrets in prompts"


def test_session_start_runs_before_the_first_request(project: Project) -> None:
    seen = project.tmp / "start.json"
    hook = script(project.tmp / "start.sh", f"cat > {seen}\necho 'Use pnpm, not npm.'\n")
    project.config_extra = hooks_config(session_start=[{"command": hook}])
    with project.serve([{"text": "Hello."}]):
        done = project.totem("run", "--format", "json", "hi")
    assert done.returncode == 0, done.stderr
    event = json.loads(seen.read_text())
    assert event["hook_event_name"] == "SessionStart" and event["source"] == "startup"
    assert event["session_id"] == json_lines(done.stdout)[0]["session_id"]
    assert project.chats()[0]["messages"][-1]["content"] == "hi\n\nUse pnpm, not npm."


def test_a_stop_hook_sends_the_model_back_to_work_once(project: Project) -> None:
    count = project.tmp / "stops"
    hook = script(project.tmp / "stop.sh",
                  f"echo x >> {count}\n"
                  f'if [ "$(wc -l < {count})" -lt 2 ]; then echo "run the tests first" >&2;'
                  " exit 2; fi\nexit 0\n")
    project.config_extra = hooks_config(stop=[{"command": hook}])
    with project.serve([{"text": "Done."}, {"text": "Tests pass. Done."}]):
        done = project.totem("run", "--format", "json", "fix it")
    assert done.returncode == 0, done.stderr
    chats = project.chats()
    assert len(chats) == 2
    assert "run the tests first" in chats[1]["messages"][-1]["content"]
    assert json_lines(done.stdout)[-1]["answer"] == "Tests pass. Done."


def test_a_stop_hook_that_always_blocks_cannot_loop_forever(project: Project) -> None:
    hook = script(project.tmp / "never.sh", 'echo "not yet" >&2\nexit 2\n')
    project.config_extra = hooks_config(stop=[{"command": hook}])
    with project.serve([{"text": "Done."}]):  # past the script: the same fallback answer
        done = project.totem("run", "fix it")
    assert done.returncode == 0, done.stderr
    assert len(project.chats()) == 4  # the answer, then three returns to work


def test_an_unknown_hook_key_is_an_error(project: Project) -> None:
    project.config_extra = "hooks: {pre_tool: [{matchr: bash, command: x}]}\n"
    with project.serve([{"text": "never"}]):
        done = project.totem("run", "hi")
    assert done.returncode == 2
    assert "hooks.pre_tool.0.matchr: unknown key 'matchr' (did you mean 'matcher'?)" in \
        done.stderr
    assert not project.chats()


def test_a_project_hook_runs_only_once_the_folder_is_trusted(project: Project) -> None:
    marker = project.tmp / "project-hook-ran"
    hook = script(project.tmp / "mine.sh", f"touch {marker}\n")
    (project.root / ".totem").mkdir()
    (project.root / ".totem" / "config.yaml").write_text(
        hooks_config(session_start=[{"command": hook}]))
    with project.serve([{"text": "One."}, {"text": "Two."}]):
        untrusted = project.totem("run", "hi")
        assert untrusted.returncode == 0, untrusted.stderr
        assert not marker.exists()
        assert f"session_start hook: {hook}" in untrusted.stdout + untrusted.stderr
        trusted = project.totem("run", "--trust", "hi")
    assert trusted.returncode == 0, trusted.stderr
    assert marker.exists()
    listing = project.totem("hooks")
    assert listing.returncode == 0, listing.stderr
    assert f"session_start  {hook}  (project, timeout 60 s)" in listing.stdout
