"""One task, one totem run: the fixture in a fresh directory, the agent, the check, the record."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from bench.smallmodel.catalog import Task

GIT_ID = ["-c", "user.name=bench", "-c", "user.email=bench@localhost", "-c", "commit.gpgsign=false"]


@dataclass(slots=True)
class Outcome:
    """What one run of one task gave; saved as JSON, one per task and round."""

    task: str
    model: str
    round: int
    passed: bool
    reason: str  # why the check failed, or "" when it passed
    wall_s: float
    exit_code: int | None  # None: killed at the timeout
    timed_out: bool
    wording: str = "direct"  # which of the task's wordings the request was put in
    prompt_tokens: int = 0
    completion_tokens: int = 0
    steps: int = 0
    finish: str = ""
    tools: list[str] = field(default_factory=list)
    tool_errors: int = 0
    from_text: int = 0  # tool calls totem recovered from the model's text
    notices: list[str] = field(default_factory=list)
    answer: str = ""
    server_crashed: bool = False  # llama-server died during the run (it aborts on some output)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True, slots=True)
class Setup:
    """How to start the agent: which totem, which server, where to keep the transcripts."""

    totem_src: Path
    base_url: str
    model_id: str
    timeout: float
    scratch: Path  # the same path for every task of a model, emptied before each
    transcripts: Path


def _fresh_dirs(scratch: Path) -> tuple[Path, Path]:
    shutil.rmtree(scratch, ignore_errors=True)
    project, home = scratch / "project", scratch / "home"
    project.mkdir(parents=True)
    for sub in (".config", ".local/share", ".local/state", ".cache"):
        (home / sub).mkdir(parents=True)
    return project, home


def _git_commit(project: Path) -> None:
    def git(*args: str) -> None:
        subprocess.run(["git", *GIT_ID, *args], cwd=project, capture_output=True, check=True)

    git("init", "-q", "-b", "main")
    git("add", "-A")
    git("commit", "-q", "--allow-empty", "-m", "fixture")


def _environment(setup: Setup, home: Path) -> dict[str, str]:
    config = home / "totem-bench.yaml"
    config.write_text(
        "providers:\n"
        f"  local: {{kind: openai, base_url: {json.dumps(setup.base_url)}}}\n"
        f"model: {json.dumps('local/' + setup.model_id)}\n"
    )
    venv_bin = str(Path(sys.executable).parent)
    keep = {k: os.environ[k] for k in ("LANG", "LC_ALL", "TERM", "TZ") if k in os.environ}
    return {
        **keep,
        "PATH": f"{venv_bin}:/usr/local/bin:/usr/bin:/bin",
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_DATA_HOME": str(home / ".local/share"),
        "XDG_STATE_HOME": str(home / ".local/state"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "TOTEM_CONFIG": str(config),
        "PYTHONPATH": str(setup.totem_src / "src"),
        "PYTHONDONTWRITEBYTECODE": "1",
    }


def _run_agent(
    prompt: str, setup: Setup, *, project: Path, env: dict[str, str], log: Path
) -> tuple[int | None, float]:
    command = [sys.executable, "-m", "totem", "run", "--yes", "--format", "json", prompt]
    started = time.monotonic()
    with log.open("wb") as out, log.with_suffix(".stderr").open("wb") as err:
        process = subprocess.Popen(
            command, cwd=project, env=env, stdout=out, stderr=err,
            stdin=subprocess.DEVNULL, start_new_session=True,
        )
        try:
            code: int | None = process.wait(timeout=setup.timeout)
        except subprocess.TimeoutExpired:
            _kill_group(process)
            code = None
        except BaseException:  # the runner itself is stopped: leave no agent behind
            _kill_group(process)
            raise
    return code, time.monotonic() - started


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()


def run_task(
    task: Task, setup: Setup, *, model: str, round_no: int, wording: str = "direct"
) -> Outcome:
    """Runs `task` once, put in `wording`, under `setup` and judges the result; the
    transcript goes to `setup.transcripts`/WORDING/TASK.jsonl."""
    prompt = task.wordings[wording].prompt
    project, home = _fresh_dirs(setup.scratch)
    task.materialise(project)
    _git_commit(project)
    folder = setup.transcripts / wording
    folder.mkdir(parents=True, exist_ok=True)
    log = folder / f"{task.name}.jsonl"
    code, wall = _run_agent(prompt, setup, project=project, env=_environment(setup, home),
                            log=log)
    outcome = Outcome(task=task.name, model=model, round=round_no, passed=False, reason="",
                      wall_s=round(wall, 1), exit_code=code, timed_out=code is None,
                      wording=wording)
    read_events(log, into=outcome)
    dump_messages(home, log.with_suffix(".messages.json"))
    try:
        verdict = task.judge(project, outcome.answer, wording=wording)
    except Exception as exc:  # a check that crashes on odd output is a failed task
        verdict = f"check raised {type(exc).__name__}: {exc}"
    outcome.passed = verdict is None
    outcome.reason = verdict or ""
    return outcome


def warm_up(setup: Setup) -> float:
    """One unrecorded run in an empty project, so that the server has the system prompt and
    tool list (the same for every task, as the project path is the same) in its cache; without
    it the first task alone pays for them. Returns its wall seconds."""
    project, home = _fresh_dirs(setup.scratch)
    # a Python file, as most fixtures have: a folder without one gets another system prompt
    (project / "main.py").write_text("print('hi')\n")
    _git_commit(project)
    setup.transcripts.mkdir(parents=True, exist_ok=True)
    slow = replace(setup, timeout=max(setup.timeout, 900))
    log = setup.transcripts / "_warm_up.jsonl"
    _, wall = _run_agent("Reply with the single word: ready", slow, project=project,
                         env=_environment(slow, home), log=log)
    return wall


def dump_messages(home: Path, target: Path) -> None:
    """Copies the session's stored messages (with each tool call's raw arguments, as the model
    wrote them) out of the run's store, which the next task's fresh HOME would lose."""
    rows: list[dict[str, Any]] = []
    for db in sorted((home / ".local/share").rglob("*.db")):
        try:
            with contextlib.closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as conn:
                query = ("select m.seq, m.role, p.idx, p.type, p.data from messages m "
                         "join parts p on p.message_id = m.id order by m.created, m.seq, p.idx")
                for seq, role, idx, kind, data in conn.execute(query):
                    rows.append({"seq": seq, "role": role, "idx": idx, "type": kind,
                                 "data": json.loads(data)})
        except (sqlite3.Error, ValueError):  # another store layout: the events still tell most
            continue
    target.write_text(json.dumps(rows, indent=1, ensure_ascii=False))


def read_events(log: Path, *, into: Outcome) -> None:
    """Fills tokens, tools, notices and the final answer of `into` from a JSON event log.

    The answer is the text of the last step that called no tool (an answer sent back by a
    nudge and given again is the second one), or the run's `result` event where there is one.
    """
    texts: list[str] = []  # text of the current step since its last tool call
    answer = ""
    everything: list[str] = []
    steps_usage = [0, 0]
    for line in log.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            event = json.loads(line)
        except json.JSONDecodeError:
            continue
        kind = event.get("type")
        if kind == "text":
            texts.append(event["text"])
            everything.append(event["text"])
        elif kind == "tool_start":
            texts = []
            answer = ""
            into.tools.append(event["name"])
            into.from_text += bool(event.get("from_text"))
        elif kind == "tool_end":
            into.tool_errors += bool(event.get("is_error"))
        elif kind == "notice":
            into.notices.append(f"{event.get('level')}: {event.get('text')}"[:300])
        elif kind == "step_finished":
            steps_usage[0] += event["usage"]["input"]
            steps_usage[1] += event["usage"]["output"]
            if "".join(texts).strip():
                answer = "".join(texts)
            texts = []
        elif kind == "run_finished":
            into.finish = event["reason"] + (f" ({event['detail']})" if event["detail"] else "")
            into.steps = event["steps"]
        elif kind == "result" and isinstance(event.get("answer"), str) and event["answer"]:
            answer = event["answer"]
    into.prompt_tokens, into.completion_tokens = steps_usage
    into.answer = ((answer or "".join(texts)).strip() or "".join(everything).strip())[-4000:]
