"""`totem batch --local` as a user runs it: a real process pool, real clones of real
repositories, each task's run against the fake model server with a script of its own."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.support.batch_repos import (
    batch_env,
    check_result,
    conversations,
    make_repos,
    mark,
    run_batch,
    task_id,
    untouched,
    write_tasks,
)
from totem.store.location import open_store
from totem.testing.fake_server import FakeOpenAIServer


def results_of(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def first_requests(server: FakeOpenAIServer, number: int) -> int:
    """How many times task `number`'s conversation was started."""
    return sum(1 for r in server.requests if r.path.endswith("/chat/completions")
               and mark(number) in json.dumps(r.body["messages"])
               and not any(m["role"] == "assistant" for m in r.body["messages"]))


def test_each_task_runs_in_its_own_copy_and_a_rerun_skips_what_is_done(tmp_path: Path) -> None:
    repos = make_repos(tmp_path / "repos", count=5)
    plain = tmp_path / "repos" / "plain"  # a folder that is not a repository
    plain.mkdir()
    (plain / "greeting.py").write_text('NAME = "world"\n')
    tasks = tmp_path / "tasks.jsonl"
    write_tasks(tasks, repos, extra=[
        {"id": "plain", "repo": "repos/plain", "prompt": f"{mark(5)} Rename the greeting."},
        {"id": "missing", "repo": "repos/none", "prompt": "anything"},
    ])
    server = FakeOpenAIServer(conversations=conversations(6, pause=0), models=["m"])
    with server.in_thread() as url:
        env = batch_env(tmp_path, url)
        done = run_batch([str(tasks), "--local", "--parallel", "3"], env=env, cwd=tmp_path)
        assert done.returncode == 1, done.stderr  # one task failed, the others ran
        results = {r["id"]: r for r in results_of(tmp_path / "tasks.results.jsonl")}
        assert sorted(results) == sorted([task_id(n) for n in range(5)] + ["plain", "missing"])
        for number, repo in enumerate(repos):
            check_result(results[task_id(number)], number)
            assert untouched(repo)
        assert results["plain"]["status"] == "ok" and '+NAME = "task05"' in results["plain"]["diff"]
        assert (plain / "greeting.py").read_text() == 'NAME = "world"\n'
        assert not (plain / ".git").exists()
        missing = results["missing"]
        assert missing["status"] == "failed" and "no working copy" in missing["detail"]
        assert "6/7 ok, 1 failed" in done.stdout and "missing  failed" in done.stdout
        assert "7/7 done, 1 failed, 0 running" in done.stderr
        store = open_store(str(tmp_path / "data" / "totem" / "totem.db"))
        session = store.get_session(results["t03"]["session_id"])
        assert session is not None and session.project.endswith("/repo")
        assert store.messages(session.id)[-1].text() == "Renamed the greeting to task03."
        store.close()
        scratch = [line for line in done.stdout.splitlines() if line.startswith("copies:")]
        assert scratch == []  # nothing kept without --keep

        again = run_batch([str(tasks), "--local", "--parallel", "3"], env=env, cwd=tmp_path)
    assert again.returncode == 1
    assert "6 of 7 tasks already done" in again.stderr
    assert all(first_requests(server, n) == 1 for n in range(6))  # no task ran twice
    rerun = results_of(tmp_path / "tasks.results.jsonl")[7:]
    assert [r["id"] for r in rerun] == ["missing"]  # only the failed task ran again


def test_a_task_acts_only_inside_its_copy_which_keep_keeps(tmp_path: Path) -> None:
    repos = make_repos(tmp_path / "repos", count=1)
    outside = tmp_path / "outside"
    outside.mkdir()
    tasks = tmp_path / "tasks.jsonl"
    write_tasks(tasks, repos)
    script = {mark(0): [
        {"tool": "write", "args": {"path": str(outside / "escaped.txt"), "content": "out"}},
        {"tool": "bash", "args": {"command": f"echo out > {outside / 'redirected.txt'}"}},
        {"tool": "write", "args": {"path": "inside.txt", "content": "in\n"}},
        {"text": "Done."},
    ]}
    server = FakeOpenAIServer(conversations=script, models=["m"])
    with server.in_thread() as url:
        env = batch_env(tmp_path, url)
        # the person's own config allows the outside folder: a batch still never goes there
        config = Path(env["TOTEM_CONFIG"])
        config.write_text(config.read_text() + "permission:\n  - {permission: "
                          f"external_directory, pattern: '{outside}/*', action: allow}}\n")
        done = run_batch([str(tasks), "--local", "--parallel", "1", "--keep",
                          "--workdir", str(tmp_path / "work"), "--out",
                          str(tmp_path / "out.jsonl")], env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    [result] = results_of(tmp_path / "out.jsonl")
    assert list(outside.iterdir()) == []
    copy = Path(str(result["copy"]))
    assert copy.is_relative_to(tmp_path / "work") and (copy / "inside.txt").read_text() == "in\n"
    assert "+in" in str(result["diff"]) and "escaped" not in str(result["diff"])
    assert untouched(repos[0]) and not (repos[0] / "inside.txt").exists()


def test_a_bad_task_file_says_which_line(tmp_path: Path) -> None:
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text('{"id": "a", "repo": ".", "prompt": "x"}\n\n{"id": "b", "repo": "."}\n')
    done = run_batch([str(tasks), "--local"], env=batch_env(tmp_path, "http://127.0.0.1:9"),
                     cwd=tmp_path)
    assert done.returncode == 2
    assert f"{tasks}:3: 'prompt' must be a non-empty string" in done.stderr
    tasks.write_text('{"id": "a", "repo": ".", "prompt": "x", "max_steps": 3}\n')
    done = run_batch([str(tasks), "--local"], env=batch_env(tmp_path, "http://127.0.0.1:9"),
                     cwd=tmp_path)
    assert done.returncode == 2 and "unknown key 'max_steps'" in done.stderr
    assert not (tmp_path / "tasks.results.jsonl").exists()


def test_ray_and_psycopg_stay_off_the_start_up_path(tmp_path: Path) -> None:
    probe = ("import sys\nfrom totem.cli.main import _parser\n_parser()\n"
             "from totem.session.service import SessionService, default_store\n"
             "default_store().close()\n"
             "print([m for m in ('ray', 'psycopg', 'totem.batch.runner', 'totem.store.postgres')"
             " if m in sys.modules])")
    env = batch_env(tmp_path, "http://127.0.0.1:9")
    done = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True,
                          text=True, timeout=60, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_a_task_starts_from_its_ref_and_from_a_git_url(tmp_path: Path) -> None:
    [repo] = make_repos(tmp_path / "repos", count=1)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid"]
    subprocess.run([*git, "checkout", "-qb", "feature"], cwd=repo, check=True)
    (repo / "greeting.py").write_text('NAME = "world"\nEXTRA = 1\n')
    subprocess.run([*git, "commit", "-qam", "extra"], cwd=repo, check=True)
    subprocess.run([*git, "checkout", "-q", "-"], cwd=repo, check=True)
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text(
        json.dumps({"id": "ref", "repo": "repos/repo00", "ref": "feature",
                    "prompt": f"{mark(0)} rename"}) + "\n"
        + json.dumps({"id": "url", "repo": repo.as_uri(), "prompt": f"{mark(1)} rename"}) + "\n")
    script = {mark(n): [{"tool": "read", "args": {"path": "greeting.py"}},
                        {"tool": "edit", "args": {"path": "greeting.py",
                                                  "old_string": 'NAME = "world"',
                                                  "new_string": f'NAME = "n{n}"'}},
                        {"text": "Done."}] for n in (0, 1)}
    server = FakeOpenAIServer(conversations=script, models=["m"])
    with server.in_thread() as url:
        done = run_batch([str(tasks), "--local", "--keep", "--workdir", str(tmp_path / "w")],
                         env=batch_env(tmp_path, url), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    results = {r["id"]: r for r in results_of(tmp_path / "tasks.results.jsonl")}
    kept = Path(str(results["ref"]["copy"]))
    assert (kept / "greeting.py").read_text() == 'NAME = "n0"\nEXTRA = 1\n'
    changed = [line for line in str(results["ref"]["diff"]).splitlines()
               if line[:1] in "+-" and line[:3] not in ("+++", "---")]
    assert changed == ['-NAME = "world"', '+NAME = "n0"']  # against the ref, not main
    assert (Path(str(results["url"]["copy"])) / "greeting.py").read_text().startswith(
        'NAME = "n1"\n\n\ndef greet()')
    assert untouched(repo)
