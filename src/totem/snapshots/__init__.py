"""Snapshots of the work tree, so that undo covers what commands changed too.

    worktree.py   the store: a git directory of totem's own per project, tree snapshots
    calls.py      the snapshots around each call that may change files, and what each changed
    files.py      a file as the store sees it (mode, blob id), and putting one back
    prune.py      old requests' snapshots go (age and size limits)
    git.py        running the real git on the store
"""
