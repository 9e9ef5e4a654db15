"""`totem batch TASKS.jsonl`: run many headless tasks, each in its own copy of its repository.

    totem batch tasks.jsonl                       # on Ray on this machine, 4 at a time
    totem batch tasks.jsonl --parallel 8 --ray 10.0.0.5:6379
    totem batch tasks.jsonl --local               # a process pool, without Ray
"""

from __future__ import annotations

import argparse
import sys

from totem.cli.exit_codes import EXIT_ERROR, EXIT_OK, EXIT_USAGE

TYPE_CHECKING = False  # typing is not imported for `totem --help`
if TYPE_CHECKING:
    # `totem --help` builds this parser: nothing more is imported for it
    from typing import Any

__all__ = ["add_parser", "batch_command"]


def add_parser(sub: Any) -> None:
    batch = sub.add_parser("batch", help="run many tasks headless, each in its own copy")
    batch.add_argument("tasks", help="a JSON Lines file: {id, repo, prompt, ref?, model?, "
                                     "agent?, maxsteps?} per line")
    batch.add_argument("--out", "-o", help="the results file (JSON Lines; default: "
                                           "TASKS.results.jsonl); a rerun skips tasks done")
    batch.add_argument("--parallel", "-p", type=int, default=4, help="tasks at once (4)")
    where = batch.add_mutually_exclusive_group()
    where.add_argument("--ray", metavar="ADDRESS", help="a Ray cluster (default: Ray here)")
    where.add_argument("--local", action="store_true", help="a process pool here, no Ray")
    batch.add_argument("--keep", action="store_true", help="keep each task's working copy")
    batch.add_argument("--workdir", help="where working copies are made (default: a new "
                                         "temporary folder)")
    batch.add_argument("--timeout", type=float, default=3600.0,
                       help="seconds one task may run (3600)")


def _pool(args: argparse.Namespace) -> Any:
    if args.local:
        from totem.batch.local_pool import LocalPool

        return LocalPool()
    try:
        import ray  # noqa: F401  (only to say clearly that it is missing)
    except ImportError:
        raise SystemExit("totem: batch runs on Ray: pip install 'totem[batch]', "
                         "or pass --local for a process pool") from None
    from totem.batch.ray_pool import RayPool

    return RayPool(address=args.ray)


def batch_command(args: argparse.Namespace) -> int:
    import tempfile
    from pathlib import Path

    from totem.batch.progress import summary_table
    from totem.batch.runner import run_batch
    from totem.batch.task import TaskOptions
    from totem.batch.tasks import read_tasks
    from totem.settings.errors import ConfigError

    if args.parallel < 1:
        print("totem: --parallel must be at least 1", file=sys.stderr)
        return EXIT_USAGE
    path = Path(args.tasks)
    try:
        tasks = read_tasks(path)
    except ConfigError as exc:
        print(f"totem: {exc}", file=sys.stderr)
        return EXIT_USAGE
    out = Path(args.out) if args.out else path.with_name(f"{path.stem}.results.jsonl")
    scratch = args.workdir or tempfile.mkdtemp(prefix="totem-batch-")
    options = TaskOptions(scratch=str(Path(scratch).resolve()), keep=args.keep,
                          timeout=args.timeout)
    from totem.batch.ray_pool import RayUnreachable

    try:
        results = run_batch(tasks, out=out, pool=_pool(args), parallel=args.parallel,
                            options=options, stream=sys.stderr)
    except RayUnreachable as exc:
        print(f"totem: {exc}", file=sys.stderr)
        return EXIT_ERROR
    print(summary_table(results))
    print(f"results: {out}" + (f"\ncopies: {options.scratch}" if args.keep else ""))
    if not args.keep and not args.workdir:
        import shutil

        shutil.rmtree(scratch, ignore_errors=True)
    return EXIT_OK if all(r.get("status") == "ok" for r in results) else EXIT_ERROR
