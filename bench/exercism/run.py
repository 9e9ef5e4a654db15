"""Runs Exercism's Python exercises Aider's way for totem and Aider on one llama-server.

    .venv/bin/python bench/exercism/run.py --model 1.5b --totem-src /path/to/checkout \
        --out /tmp/exercism/results.json

See bench/exercism/README.md.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import json
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from bench.exercism.agents import Agent, NoAgent, ReferenceAgent  # noqa: E402
from bench.exercism.aider_agent import AiderAgent  # noqa: E402
from bench.exercism.exercise import Exercise, ExerciseError, load_exercises  # noqa: E402
from bench.exercism.harness import TRIES, run_exercise  # noqa: E402
from bench.exercism.report import line, table  # noqa: E402
from bench.exercism.totem_agent import TotemAgent  # noqa: E402
from bench.smallmodel.server import SCRIPTS, SLOTS, ModelServer, model_paths  # noqa: E402

AGENTS = ("totem", "aider", "reference", "none")


def arguments(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", action="append", choices=sorted(SCRIPTS), dest="models",
                        help="repeatable (default 0.5b); each gets its own llama-server")
    parser.add_argument("--agent", action="append", choices=AGENTS, dest="agents",
                        help="repeatable (default: totem and aider)")
    parser.add_argument("--exercises", type=Path, default=REPO / "bench/exercism/exercises",
                        help="a folder of exercises laid out as Exercism's (NAME/.meta/...)")
    parser.add_argument("--only", action="append", help="exercise names (repeatable)")
    parser.add_argument("--timeout", type=float, default=300, help="seconds per agent per try")
    parser.add_argument("--tries", type=int, default=TRIES)
    parser.add_argument("--totem-src", type=Path, default=REPO, help="checkout whose src/ runs")
    parser.add_argument("--aider-python", type=Path, default=None,
                        help="python of Aider's venv (default: what scripts/aider.sh installs)")
    parser.add_argument("--out", type=Path, default=Path("exercism-results/results.json"))
    parser.add_argument("--scratch", type=Path, default=Path("/tmp/totem-exercism"),
                        help="where the working copies are made (one runner per folder)")
    parser.add_argument("--threads", type=int, default=2, help="llama-server -t")
    parser.add_argument("--slots", type=int, default=SLOTS,
                        help="llama-server -np (each slot a window of 8192)")
    parser.add_argument("--totem-options", type=_options, default={},
                        help="a JSON object added to totem's provider options, e.g. "
                             "'{\"assist\": {\"tests_ahead\": false}}' to measure one help")
    parser.add_argument("--resume", action="store_true",
                        help="keep the rows already in --out and skip what they record")
    parser.add_argument("--baseline", type=Path, action="append", default=[],
                        help="results JSON of an earlier run (Aider's, in "
                             "bench/exercism/baseline/) shown beside this run's (repeatable)")
    return parser.parse_args(argv)


def _aider_python(args: argparse.Namespace) -> Path:
    if args.aider_python is not None:
        return Path(args.aider_python)
    done = subprocess.run(["bash", str(REPO / "scripts/aider.sh")], capture_output=True,
                          text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"scripts/aider.sh failed:\n{done.stderr[-2000:]}")
    return Path(done.stdout.strip().splitlines()[-1]).with_name("python")


def _revision(tree: Path) -> str:
    done = subprocess.run(["git", "-C", str(tree), "rev-parse", "--short", "HEAD"],
                          capture_output=True, text=True, check=False)
    return done.stdout.strip() or "unknown"


@contextlib.contextmanager
def _server(model: str, args: argparse.Namespace, meta: dict[str, Any]) -> Iterator[
        ModelServer | None]:
    """llama-server for `model` when an agent needs one, else nothing."""
    if not set(args.agents) & {"totem", "aider"}:
        yield None
        return
    gguf, binary = model_paths(model, repo=REPO)
    log = args.out.resolve().parent / f"llama-server-{model}.log"
    with ModelServer(gguf, binary, log=log, alias="local", threads=args.threads,
                     slots=args.slots) as server:
        meta["models"][model] = {"file": gguf.name, "served_as": server.model_id,
                                 "command": server.command}
        yield server


def _agents(names: list[str], server: ModelServer | None, args: argparse.Namespace,
            aider_python: Path | None) -> list[Agent]:
    agents: list[Agent] = []
    for name in names:
        if name == "reference":
            agents.append(ReferenceAgent())
        elif name == "none":
            agents.append(NoAgent())
        elif name == "totem":
            assert server is not None
            agents.append(TotemAgent(totem_src=args.totem_src.resolve(),
                                     base_url=server.base_url, model_id=server.model_id,
                                     options=args.totem_options))
        else:
            assert server is not None and aider_python is not None
            agents.append(AiderAgent(python=aider_python, base_url=server.base_url,
                                     model_id=server.model_id))
    return agents


def _options(value: str) -> dict[str, Any]:
    try:
        options = json.loads(value)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"not JSON: {exc}") from None
    if not isinstance(options, dict):
        raise argparse.ArgumentTypeError("a JSON object, such as {\"read_ahead\": false}")
    return options


def run(args: argparse.Namespace) -> list[dict[str, Any]]:
    """Every exercise for every agent, interleaved per exercise, per model; returns the rows
    (also saved to --out after each exercise)."""
    try:
        exercises: list[Exercise] = load_exercises(args.exercises, args.only)
    except ExerciseError as exc:
        raise SystemExit(str(exc)) from exc
    if not exercises:
        raise SystemExit(f"no exercise in {args.exercises}")
    args.agents = args.agents or ["totem", "aider"]
    needs_model = bool(set(args.agents) & {"totem", "aider"})
    models = (args.models or ["0.5b"]) if needs_model else ["-"]
    aider_python = _aider_python(args) if "aider" in args.agents else None
    out_dir = args.out.resolve().parent
    meta: dict[str, Any] = {
        "totem_src": str(args.totem_src.resolve()), "revision": _revision(args.totem_src),
        "started": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "exercises": str(args.exercises.resolve()), "timeout_s": args.timeout,
        "tries": args.tries, "threads": args.threads, "slots": args.slots, "agents": args.agents,
        "aider_python": str(aider_python) if aider_python else None, "models": {},
        "totem_options": args.totem_options,
    }
    rows: list[dict[str, Any]] = _recorded(args.out) if args.resume else []
    done = {(r["model"], r["agent"], r["exercise"]) for r in rows}
    for model in models:
        with _server(model, args, meta) as server:
            agents = _agents(args.agents, server, args, aider_python)
            for exercise in exercises:
                for agent in agents:
                    if (model, agent.name, exercise.name) in done:
                        continue
                    result = run_exercise(
                        exercise, agent, model=model, scratch=args.scratch / model,
                        transcripts=out_dir / "transcripts" / model / exercise.name,
                        timeout=args.timeout, tries=args.tries)
                    if server is not None and not server.alive():
                        result.server_crashed = True
                        print(f"[{model}] llama-server died during {exercise.name} "
                              f"({agent.name}); restarting it", flush=True)
                        server.restart()
                    rows.append(result.to_dict())
                    _save(args.out, meta, rows)
                    print(line(rows[-1]), flush=True)
    return rows


def _recorded(out: Path) -> list[dict[str, Any]]:
    """The rows an earlier, interrupted run saved to `out` (none when there is no file)."""
    if not out.is_file():
        return []
    try:
        rows = json.loads(out.read_text())["results"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise SystemExit(f"--resume: {out} is not a results file of this harness ({exc})") from exc
    print(f"resuming: {len(rows)} rows kept from {out}", flush=True)
    return list(rows)


def _baseline_rows(paths: list[Path]) -> list[dict[str, Any]]:
    """Rows of stored runs, their agent named `NAME (baseline)` to keep them apart in the table."""
    rows: list[dict[str, Any]] = []
    for path in paths:
        rows += [{**row, "agent": f"{row['agent']} (baseline)"}
                 for row in json.loads(path.read_text())["results"]]
    return rows


def _save(out: Path, meta: dict[str, Any], rows: list[dict[str, Any]]) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"meta": meta, "results": rows}, indent=1))


def main(argv: list[str] | None = None) -> int:
    # SIGTERM unwinds like Ctrl-C, so that the server and agents started here are stopped
    signal.signal(signal.SIGTERM, lambda number, frame: sys.exit(128 + number))
    args = arguments(argv)
    rows = run(args)
    print(table(_baseline_rows(args.baseline) + rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
