"""Runs the small-model micro-tasks against a totem source tree and prints the pass table.

    /work/main/.venv/bin/python bench/smallmodel/run.py --model 1.5b --model 0.5b \
        --rounds 1 --timeout 240 --totem-src /work/wt/baseline --out /tmp/sb/results.json \
        [--wording direct --wording terse ... | --wording all] [--model-file model.gguf]

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
from bench.smallmodel.catalog import WORDINGS, Task, load_tasks, runs  # noqa: E402
from bench.smallmodel.report import table  # noqa: E402
from bench.smallmodel.server import (  # noqa: E402
    SCRIPTS,
    SLOTS,
    ModelServer,
    model_paths,
    under_name,
)


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", action="append", choices=sorted(SCRIPTS), dest="models")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--first-round", type=int, default=1,
                        help="number of the first round (to add rounds to earlier results)")
    parser.add_argument("--tasks", action="append", help="task names or globs (repeatable)")
    parser.add_argument("--wording", action="append", dest="wordings",
                        choices=[*WORDINGS, "all"],
                        help="which wordings of each task to run (repeatable; default direct; "
                        "a task without that wording is left out of it)")
    parser.add_argument("--timeout", type=float, default=300, help="seconds per task")
    parser.add_argument("--totem-src", type=Path, default=REPO, help="checkout whose src/ runs")
    parser.add_argument("--out", type=Path, default=Path("smallmodel-results/results.json"))
    parser.add_argument("--scratch", type=Path, default=Path("/tmp/totem-smallbench"),
                        help="where the projects are made (one runner at a time per folder)")
    parser.add_argument("--threads", type=int, default=2, help="llama-server -t")
    parser.add_argument("--slots", type=int, default=SLOTS,
                        help="llama-server -np (each slot a window of 8192)")
    parser.add_argument("--no-warm-up", dest="warm_up", action="store_false",
                        help="skip the unrecorded run that fills the server's prompt cache")
    parser.add_argument("--name-as-file", action="store_true",
                        help="serve the model under its file name instead of the alias 'local'")
    parser.add_argument("--model-file", metavar="NAME",
                        help="give the server the GGUF under this file name (a link in the "
                        "scratch folder), say model.gguf: a round with the file renamed")
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
    model: str, args: argparse.Namespace, *, plan: list[tuple[Task, str]],
    meta: dict[str, Any], rows: list[dict[str, Any]],
) -> None:
    """Every round of every task in every wording on one model, under one llama-server."""
    out_dir = args.out.resolve().parent
    gguf, binary = model_paths(model, repo=REPO)
    served = gguf if args.model_file is None else under_name(
        gguf, args.model_file, folder=args.scratch.resolve() / "model-files" / model)
    alias = None if args.name_as_file else "local"
    log = out_dir / f"llama-server-{model}.log"
    with ModelServer(served, binary, log=log, alias=alias, threads=args.threads,
                     slots=args.slots) as server:
        meta["models"][model] = {"file": served.name, "original_file": gguf.name,
                                 "served_as": server.model_id}
        for round_no in range(args.first_round, args.first_round + args.rounds):
            setup = Setup(
                totem_src=args.totem_src.resolve(), base_url=server.base_url,
                model_id=server.model_id, timeout=args.timeout,
                scratch=args.scratch / model,
                transcripts=out_dir / "transcripts" / model / f"round{round_no}",
            )
            if args.warm_up and round_no == args.first_round:
                print(f"[{model}] warm-up run: {warm_up(setup):.0f} s", flush=True)
            for task, wording in plan:
                outcome = run_task(task, setup, model=model, round_no=round_no, wording=wording)
                if not server.alive():
                    outcome.server_crashed = True
                    print(f"[{model}] llama-server died during {task.name} ({wording}); "
                          "restarting it", flush=True)
                    server.restart()
                rows.append(outcome.to_dict())
                _save(args.out, meta, rows)
                verdict = "PASS" if outcome.passed else f"fail ({outcome.reason[:70]})"
                print(f"[{model} r{round_no}] {task.name} ({wording}): {verdict} "
                      f"{outcome.wall_s:.0f}s tools={outcome.tools}", flush=True)


def main() -> int:
    # SIGTERM unwinds like Ctrl-C, so that the servers and agents started here are stopped
    signal.signal(signal.SIGTERM, lambda number, frame: sys.exit(128 + number))
    args = _arguments()
    try:
        plan = runs(load_tasks(args.tasks), args.wordings or ["direct"])
    except ValueError as exc:
        raise SystemExit(str(exc)) from None
    if not plan:
        raise SystemExit("no task matches --tasks in the --wording asked")
    meta: dict[str, Any] = {
        "totem_src": str(args.totem_src.resolve()), "revision": _revision(args.totem_src),
        "started": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "timeout_s": args.timeout, "threads": args.threads, "slots": args.slots,
        "name_as_file": args.name_as_file, "model_file": args.model_file,
        "wordings": sorted({wording for _, wording in plan}), "models": {},
    }
    rows: list[dict[str, Any]] = []
    for model in args.models or ["0.5b"]:
        _run_model(model, args, plan=plan, meta=meta, rows=rows)
    print(table(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
