"""Pruning with the real git: requests past their age go, then the oldest while the store is
over its size; what newer requests and the current index hold stays."""

from __future__ import annotations

import os
import time
from pathlib import Path

from totem.snapshots.files import current_blob
from totem.snapshots.prune import prune, store_size
from totem.snapshots.worktree import WorkTreeStore, store_folder
from totem.store.base import Blob

DAY = 86_400


def _requests(tmp_path: Path, count: int) -> tuple[WorkTreeStore, list[Blob]]:
    """A store holding `count` requests a day apart, each with a file of its own content
    (random, so that it does not compress away); the blobs, oldest first."""
    root = tmp_path / "project"
    root.mkdir()
    store = WorkTreeStore(root, store_folder(tmp_path / "data", root))
    blobs = []
    start = time.time() - count * DAY
    for index in range(count):
        (root / "data.bin").write_bytes(os.urandom(200_000))
        before = store.snapshot().tree
        blob = current_blob(root / "data.bin")
        assert blob is not None
        blobs.append(blob)
        store.keep(f"msg_{index}", [before], now=start + index * DAY)
    return store, blobs


def test_requests_older_than_the_limit_go_and_newer_ones_stay(tmp_path: Path) -> None:
    store, blobs = _requests(tmp_path, 4)
    pruned = prune(store, keep_days=2.5, max_size=10**9, grace=0)
    assert pruned.requests == 2
    assert not store.has([blobs[0]]) and not store.has([blobs[1]])
    assert store.has([blobs[2]]) and store.has([blobs[3]])
    refs = store.git("for-each-ref", "--format=%(refname)", "refs/requests/").decode()
    assert "msg_0" not in refs and "msg_3" in refs


def test_past_the_size_limit_the_oldest_go_first(tmp_path: Path) -> None:
    store, blobs = _requests(tmp_path, 8)
    assert store_size(store)[0] > 1_000_000
    pruned = prune(store, keep_days=365, max_size=700_000, grace=0)
    assert pruned.size <= 700_000 and pruned.requests >= 5
    assert not store.has([blobs[0]])
    assert store.has([blobs[-1]])  # the newest, also what the index holds
    assert store_size(store)[1] == 0  # nothing left loose


def test_a_young_object_nothing_names_yet_stays(tmp_path: Path) -> None:
    store, blobs = _requests(tmp_path, 2)
    (store.root / "running.txt").write_text("a request still running\n")
    running = store.snapshot().tree
    (store.root / "running.txt").unlink()
    store.snapshot()
    prune(store, keep_days=0, max_size=10**9)  # the default grace: an hour
    assert store.git("cat-file", "-t", running).decode().strip() == "tree"
