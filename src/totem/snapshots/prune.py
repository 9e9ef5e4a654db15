"""Old snapshots go: requests older than `keep_days`, then the oldest ones while the store is
larger than `max_store_size`; loose objects are packed.

A request's snapshots are kept by refs named `refs/requests/<time>-<message id>/<n>`
(WorkTreeStore.keep); dropping the refs and repacking frees what only they held. Objects
younger than `grace` seconds stay even when nothing names them yet: they are the snapshots of
a request still running (in this process or another), recorded when it ends.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from totem.settings.snapshots import SnapshotSettings
from totem.snapshots.worktree import WorkTreeStore

__all__ = ["Pruned", "maybe_prune", "prune", "store_size"]

HOUR = 3_600.0
DAY = 86_400.0
GRACE = 3_600.0  # seconds an unnamed object is kept
LOOSE_LIMIT = 5_000  # loose objects before they are packed (git gc --auto: 6,700)
_STAMP = "pruned"  # a file of the store: its time is the last pruning's
_CHECKED = "checked"  # and the last look at its size


@dataclass(frozen=True, slots=True)
class Pruned:
    """What a pruning dropped, and the store's size after it (bytes)."""

    requests: int
    size: int


def store_size(store: WorkTreeStore) -> tuple[int, int]:
    """The store's objects: bytes on disk, and how many are loose."""
    counts: dict[str, int] = {}
    for line in store.git("count-objects", "-v").decode().splitlines():
        key, _, value = line.partition(":")
        if value.strip().isdigit():
            counts[key.strip()] = int(value)
    size = (counts.get("size", 0) + counts.get("size-pack", 0)) * 1024
    return size, counts.get("count", 0)


def maybe_prune(store: WorkTreeStore, settings: SnapshotSettings) -> Pruned | None:
    """Prune when a day went by since the last time, when the store is over its size, or
    when many objects are loose; None when none of these holds. The size is looked at once
    an hour at most (one `count-objects`), or when this process hashed many files; else this
    costs a stat."""
    now = time.time()
    # a first snapshot of a large tree leaves its files loose: packed at once
    if now - _since(store, _CHECKED) < HOUR and store.added < LOOSE_LIMIT:
        return None
    store.added = 0
    (store.folder / _CHECKED).touch()
    size, loose = store_size(store)
    if now - _since(store, _STAMP) < DAY and size <= settings.max_store_size \
            and loose < LOOSE_LIMIT:
        return None
    return prune(store, keep_days=settings.keep_days, max_size=settings.max_store_size)


def _since(store: WorkTreeStore, stamp: str) -> float:
    try:
        return (store.folder / stamp).stat().st_mtime
    except OSError:
        return 0.0


def prune(
    store: WorkTreeStore, *, keep_days: float, max_size: int, grace: float = GRACE,
    now: float | None = None,
) -> Pruned:
    """Drop the requests older than `keep_days`, then the oldest while over `max_size`."""
    now = time.time() if now is None else now
    with store.locked():
        requests = _requests(store)
        old = [r for r in requests if now - r[0] > keep_days * DAY]
        _drop(store, old)
        kept = requests[len(old):]
        dropped = len(old)
        size = _pack(store, grace)
        while size > max_size and kept:
            oldest, kept = kept[: max(1, len(kept) // 4)], kept[max(1, len(kept) // 4):]
            _drop(store, oldest)
            dropped += len(oldest)
            size = _pack(store, grace)
        (store.folder / _STAMP).touch()
    return Pruned(dropped, size)


def _requests(store: WorkTreeStore) -> list[tuple[float, list[str]]]:
    """(time, its refs) of each kept request, oldest first."""
    out = store.git("for-each-ref", "--format=%(refname)", "refs/requests/").decode()
    grouped: dict[str, list[str]] = {}
    for ref in out.split():
        grouped.setdefault(ref.split("/")[2], []).append(ref)
    found = []
    for name, refs in grouped.items():
        stamp = name.partition("-")[0]
        found.append((float(stamp) if stamp.isdigit() else 0.0, refs))
    return sorted(found, key=lambda r: r[0])


def _drop(store: WorkTreeStore, requests: list[tuple[float, list[str]]]) -> None:
    lines = "".join(f"delete {ref}\n" for _, refs in requests for ref in refs)
    if lines:
        store.git("update-ref", "--stdin", stdin=lines.encode())


def _pack(store: WorkTreeStore, grace: float) -> int:
    """Pack what the refs and the index name; drop unnamed objects older than `grace`."""
    store.git("pack-refs", "--all", "--prune")
    store.git("repack", "-a", "-d", "-q", "--no-write-bitmap-index")
    expire = "now" if grace <= 0 else f"{int(grace)}.seconds.ago"
    store.git("prune", f"--expire={expire}")
    return store_size(store)[0]
