"""Runs the small-model micro-tasks against a totem source tree and prints the pass table.

    /work/main/.venv/bin/python bench/smallmodel/run.py --model 1.5b --model 0.5b \
        --rounds 1 --timeout 240 --totem-src /work/wt/baseline --out /tmp/sb/results.json

See bench/smallmodel/README.md.
"""

from __future__ import annotations

import argparse
import datetime
import json
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from bench.smallmodel.agent import Setup, run_task, warm_up  # noqa: E402
from bench.smallmodel.catalog import Task, load_tasks  # noqa: E402
from bench.smallmodel.report import table  # noqa: E402
from bench.smallmodel.server import SCRIPTS, ModelServer, model_paths  # noqa: E402


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", action="append", choices=sorted(SCRIPTS), dest="models")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--first-round", type=int, default=1,
                        help="number of the first round (to add rounds to earlier results)")
    parser.add_argument("--tasks", action="append", help="task names or globs (repeatable)")
    parser.add_argument("--timeout", type=float, default=300, help="seconds per task")
    parser.add_argument("--totem-src", type=Path, default=REPO, help="checkout whose src/ runs")
    parser.add_argument("--out", type=Path, default=Path("smallmodel-results/results.json"))
    parser.add_argument("--scratch", type=Path, default=Path("/tmp/totem-smallbench"),
                        help="where the projects are made (one runner at a time per folder)")
    parser.add_argument("--threads", type=int, default=2, help="llama-server -t")
    parser.add_argument("--no-warm-up", dest="warm_up", action="store_false",
                        help="skip the unrecorded run that fills the server's prompt cache")
    parser.add_argument("--name-as-file", action="store_true",
                        help="serve the model under its file name instead of the alias 'local'")
    return parser.parse_args()


def _revision(tree: Path) -> str:
    done = subprocess.run(["git", "-C", str(tree), "rev-parse", "--short", "HEAD"],
                          capture_output=True, text=True, check=False)
    dirty = subprocess.run(["git", "-C", str(tree), "status", "--porcelain", "--", "src"],
                           capture_output=True, text=True, check=False).stdout.strip()
    return done.stdout.strip() + ("+dirty" if dirty else "")


def _save(out: Path, meta: dict[str, Any], rows: list[dict[str, Any]]) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"meta": meta, "results": rows}, indent=1))


def _run_model(
    model: str, args: argparse.Namespace, *, tasks: list[Task], meta: dict[str, Any],
    rows: list[dict[str, Any]],
) -> None:
    """Every round of every task on one model, under one llama-server."""
    out_dir = args.out.resolve().parent
    gguf, binary = model_paths(model, repo=REPO)
    alias = None if args.name_as_file else "local"
    log = out_dir / f"llama-server-{model}.log"
    with ModelServer(gguf, binary, log=log, alias=alias, threads=args.threads) as server:
        meta["models"][model] = {"file": gguf.name, "served_as": server.model_id}
        for round_no in range(args.first_round, args.first_round + args.rounds):
            setup = Setup(
                totem_src=args.totem_src.resolve(), base_url=server.base_url,
                model_id=server.model_id, timeout=args.timeout,
                scratch=args.scratch / model,
                transcripts=out_dir / "transcripts" / model / f"round{round_no}",
            )
            if args.warm_up and round_no == args.first_round:
                print(f"[{model}] warm-up run: {warm_up(setup):.0f} s", flush=True)
            for task in tasks:
                outcome = run_task(task, setup, model=model, round_no=round_no)
                if not server.alive():
                    outcome.server_crashed = True
                    print(f"[{model}] llama-server died during {task.name}; restarting it",
                          flush=True)
                    server.restart()
                rows.append(outcome.to_dict())
                _save(args.out, meta, rows)
                verdict = "PASS" if outcome.passed else f"fail ({outcome.reason[:70]})"
                print(f"[{model} r{round_no}] {task.name}: {verdict} {outcome.wall_s:.0f}s "
                      f"tools={outcome.tools}", flush=True)


def main() -> int:
    # SIGTERM unwinds like Ctrl-C, so that the servers and agents started here are stopped
    signal.signal(signal.SIGTERM, lambda number, frame: sys.exit(128 + number))
    args = _arguments()
    tasks = load_tasks(args.tasks)
    if not tasks:
        raise SystemExit("no task matches --tasks")
    meta: dict[str, Any] = {
        "totem_src": str(args.totem_src.resolve()), "revision": _revision(args.totem_src),
        "started": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "timeout_s": args.timeout, "threads": args.threads,
        "name_as_file": args.name_as_file, "models": {},
    }
    rows: list[dict[str, Any]] = []
    for model in args.models or ["0.5b"]:
        _run_model(model, args, tasks=tasks, meta=meta, rows=rows)
    print(table(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
