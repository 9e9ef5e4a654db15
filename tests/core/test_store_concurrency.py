"""The store shared by several totem processes at once: real processes on one SQLite file,
or on one real PostgreSQL database.

Several `totem run` may start together on a store that does not exist yet (all migrate it),
and several long runs may write to one store at the same time (each writes every part as it
streams). None of them may fail, and nothing written may be lost.
"""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from totem.messages import TextPart
from totem.store.location import open_store

SRC = str(Path(__file__).resolve().parents[2] / "src")

# One process: say it is ready, wait for the start signal, open the store, write a session
# as a run does (a message added, its text part saved as it grows, the message finished),
# print its id.
WRITER = """
import sys, time
from pathlib import Path
from totem.messages import Message, TextPart, new_id
from totem.store.location import open_store

db, go, count = sys.argv[1], Path(sys.argv[2]), int(sys.argv[3])
print("ready", flush=True)
while not go.exists():
    time.sleep(0.001)
store = open_store(db)
session = store.create_session(project="shared", model="m")
for number in range(count):
    message = Message(new_id("msg"), session.id, "user" if number % 2 == 0 else "assistant")
    store.add_message(message)
    part = TextPart("")
    for piece in range(5):
        part.text += f"{number}.{piece} "
        store.save_part(message.id, 0, part)
    message.finish = "stop"
    store.finish_message(message)
store.close()
print(session.id)
"""


def start_together(db: str, go: Path, *, processes: int, messages: int) -> list[str]:
    """Start `processes` writers, release them at once when all are ready; the session id
    each printed."""
    env = {"PYTHONPATH": SRC, "PATH": "/usr/bin:/bin"}
    running = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, db, str(go), str(messages)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for _ in range(processes)
    ]
    for process in running:
        assert process.stdout is not None
        assert process.stdout.readline() == "ready\n"
    go.touch()
    ids = []
    for process in running:
        out, err = process.communicate(timeout=120)
        assert process.returncode == 0 and not err, err
        ids.append(out.strip())
    return ids


def check_complete(db: str, ids: list[str], *, messages: int) -> None:
    """Every session has all its messages, each finished with its whole text; a SQLite file
    is sound."""
    store = open_store(db)
    try:
        for session_id in ids:
            found = store.messages(session_id)
            assert len(found) == messages
            for number, message in enumerate(found):
                assert message.finish == "stop"
                text = "".join(f"{number}.{piece} " for piece in range(5))
                assert message.parts == [TextPart(text)]
    finally:
        store.close()
    if "://" not in db:
        with sqlite3.connect(db) as check:
            assert check.execute("PRAGMA integrity_check").fetchone() == ("ok",)


def test_eight_processes_start_together_on_a_new_store(
    tmp_path: Path, new_store_location: Callable[[], str]
) -> None:
    for round_number in range(20):
        db = new_store_location()
        go = tmp_path / f"go{round_number}"
        ids = start_together(db, go, processes=8, messages=4)
        check_complete(db, ids, messages=4)


def test_four_long_runs_at_once_on_an_existing_store(
    tmp_path: Path, new_store_location: Callable[[], str]
) -> None:
    db = new_store_location()
    open_store(db).close()
    ids = start_together(db, tmp_path / "go", processes=4, messages=300)
    check_complete(db, ids, messages=300)
