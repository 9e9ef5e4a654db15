"""The plan step alone, measured: for every task and wording, does the model's plan say the
right kind (a question, or a change) and name the files the request is about?

The plan step (src/totem/smallmodel/plan.py) is one lever of the small-model help; a wrong
kind cannot be undone later in the run (a question is offered no tool that changes a file),
so its accuracy bounds every wording's pass rate. This asks exactly the request a run asks
(the same prompt, schema, provider and sampling), a few seconds a task, so prompt and schema
changes can be compared on every wording without whole runs.

    .venv/bin/python bench/smallmodel/plan_step.py --model 1.5b --model 0.5b --rounds 2

The expected kind comes from the task itself: "change" when its reference solution changes
a file, else "question". The expected files: those the reference changes (for a change), and
for every kind the fixture files the request names by path; a file the wording says to keep
must not be among the files of a change's plan (the plan's `files` are read and may be
changed, so a kept file there counts as `keep!`, and so does one among its `removed`). The
plan's `removed` must be just the files the reference deletes, renames or moves away (else
`removed`).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "src"))

from bench.exercism.exercise import Exercise, load_exercises  # noqa: E402
from bench.smallmodel.catalog import Task, load_tasks, runs  # noqa: E402
from bench.smallmodel.server import ModelServer, model_paths  # noqa: E402
from totem.messages import Message, TextPart, new_id  # noqa: E402
from totem.providers.base import ModelRequest, TextChunk  # noqa: E402
from totem.providers.localserver.served import served_model  # noqa: E402
from totem.providers.localserver.stepmode import schema_option  # noqa: E402
from totem.providers.registry import make_provider  # noqa: E402
from totem.settings.config import ProviderConfig  # noqa: E402
from totem.smallmodel.plan import Plan, offered, parse_plan, plan_prompt, plan_schema  # noqa: E402
from totem.smallmodel.project import named_files, text_files  # noqa: E402


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", action="append", choices=("0.5b", "1.5b"))
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--tasks", action="append")
    parser.add_argument("--wording", action="append", default=None)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--log", type=Path, default=Path("/tmp/totem-plan-step"))
    parser.add_argument("--exercism", type=Path, default=None,
                        help="also ask the plan of these Exercism exercises' first messages "
                             "(e.g. bench/exercism/exercises): each is a change of its stub")
    parser.add_argument("--exercism-only", action="store_true",
                        help="only the exercises, no bench/smallmodel task")
    parser.add_argument("--kind-first", action="store_true",
                        help="a variant: 'kind' first in the plan's schema")
    return parser.parse_args()


def expected(task: Task, wording: str) -> tuple[str, set[str]]:
    """(the kind the request is, the files the reference solution changes or removes)."""
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        task.materialise(root)
        task.reference(root, wording=wording)
        changed = {p for p, text in task.files.items()
                   if not (root / p).is_file() or (root / p).read_text("utf-8") != text}
        created = {str(p.relative_to(root)) for p in root.rglob("*")
                   if p.is_file() and str(p.relative_to(root)) not in task.files}
    return ("change" if changed or created else "question"), changed


def expected_removed(task: Task, wording: str) -> set[str]:
    """The files the reference solution removes (deletes, renames or moves away)."""
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        task.materialise(root)
        task.reference(root, wording=wording)
        return {p for p in task.files if not (root / p).exists()}


async def plan_of(served_url: str, model_id: str, root: Path, request_text: str, *,
                  kind_first: bool = False) -> tuple[str, Plan | None]:
    """(the raw answer, the checked plan) of the plan request a run sends for `request_text`
    in the project at `root`; `kind_first` puts "kind" first in the schema (a variant)."""
    pconf = ProviderConfig("local", "openai", base_url=served_url)
    served = served_model(pconf, model_id)
    provider = make_provider(pconf)
    files, _ = text_files(root)
    paths = offered(files)
    system, message = plan_prompt(paths, request_text, removed=True)  # the lever's field
    schema = plan_schema(paths, removed=True)
    if kind_first:
        props = schema["properties"]
        schema["properties"] = {"kind": props["kind"],
                                **{k: v for k, v in props.items() if k != "kind"}}
        schema["required"] = list(schema["properties"])
    request = ModelRequest(
        model=model_id, system=system,
        messages=[Message(new_id("msg"), "ses_bench", "user", [TextPart(message)])],
        max_tokens=served.sampling.max_tokens, temperature=served.sampling.temperature,
        options=schema_option(served.sampling.engine, schema),
    )
    answer = "".join([e.text async for e in provider.stream(request)
                      if isinstance(e, TextChunk)])
    return answer, parse_plan(answer.strip(), root, paths)


async def ask(served_url: str, model_id: str, task: Task, wording: str, *,
              kind_first: bool = False) -> tuple[str, str, str]:
    """The plan as the model says it for this task and wording: (raw answer, verdict, the
    verdict if a plan that names new files were taken as a change)."""
    request_text = task.wordings[wording].prompt
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        task.materialise(root)
        answer, plan = await plan_of(served_url, model_id, root, request_text,
                                     kind_first=kind_first)
        named = {f.path for f in named_files(text_files(root)[0], request_text)}
    if plan is None:
        return answer, "no plan", "no plan"
    derived = replace(plan, kind="change") if plan.new_files else plan
    return (answer, judge(plan, task, wording, named),
            judge(derived, task, wording, named))


async def ask_exercise(served_url: str, model_id: str, exercise: Exercise, *,
                       kind_first: bool = False) -> tuple[str, str]:
    """An Exercism exercise's first message as the plan sees it: a change of its stub."""
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder) / exercise.name
        exercise.materialise(root)
        answer, plan = await plan_of(served_url, model_id, root, exercise.instructions(),
                                     kind_first=kind_first)
    if plan is None:
        return answer, "no plan"
    if plan.kind != "change":
        return answer, f"kind {plan.kind}"
    return answer, "ok" if set(exercise.solution) <= set(plan.files) else "files"


def judge(plan: Plan, task: Task, wording: str, named: set[str]) -> str:
    kind, changed = expected(task, wording)
    if plan.kind != kind:
        return f"kind {plan.kind}"
    keep = set(task.wordings[wording].keep)
    if kind == "change" and keep & (set(plan.files) | set(plan.removed)):
        return "keep!"
    if set(plan.removed) != expected_removed(task, wording):
        return "removed"
    missing = (changed | named) - keep - set(plan.files) - set(plan.new_files)
    return "ok" if not missing else "files"


def _removed(answer: str) -> str:
    try:
        said = json.loads(answer)
    except ValueError:
        return "?"
    return json.dumps(said.get("removed") if isinstance(said, dict) else None)


def _parts(answer: str) -> str:
    try:
        said = json.loads(answer)
    except ValueError:
        return "?"
    return json.dumps(said.get("parts") if isinstance(said, dict) else None,
                      ensure_ascii=False)


def main() -> int:
    args = _arguments()
    tasks = load_tasks(args.tasks)
    pairs = [] if args.exercism_only else runs(tasks, args.wording or ["all"])
    exercises = load_exercises(args.exercism) if args.exercism else []
    for model in args.model or ["1.5b"]:
        gguf, binary = model_paths(model, repo=REPO)
        with ModelServer(gguf, binary, log=args.log / f"llama-server-{model}.log", alias="local",
                         threads=args.threads) as server:
            verdicts: dict[str, list[str]] = {}
            if_new: dict[str, list[str]] = {}  # a plan naming new files taken as a change
            walls: list[float] = []
            for round_ in range(1, args.rounds + 1):
                for task, wording in pairs:
                    start = time.monotonic()
                    answer, verdict, derived = asyncio.run(ask(
                        server.base_url, server.model_id, task, wording,
                        kind_first=args.kind_first))
                    walls.append(time.monotonic() - start)
                    verdicts.setdefault(wording, []).append(verdict)
                    if_new.setdefault(wording, []).append(derived)
                    mark = "" if verdict == "ok" else f"   <- {answer.strip()[:160]}"
                    if derived != verdict:
                        mark += f"   (new files => change: {derived})"
                    mark += f"   parts: {_parts(answer)}"
                    if verdict != "ok" or expected_removed(task, wording):
                        mark += f"   removed: {_removed(answer)}"
                    print(f"[{model} r{round_}] {task.name} ({wording}): {verdict}{mark}",
                          flush=True)
            for exercise in exercises:
                start = time.monotonic()
                answer, verdict = asyncio.run(ask_exercise(
                    server.base_url, server.model_id, exercise, kind_first=args.kind_first))
                walls.append(time.monotonic() - start)
                verdicts.setdefault("exercism", []).append(verdict)
                if_new.setdefault("exercism", []).append(verdict)
                mark = "" if verdict == "ok" else f"   <- {answer.strip()[:160]}"
                print(f"[{model}] exercism {exercise.name}: {verdict}{mark}   parts: "
                      f"{_parts(answer)}", flush=True)
            median = statistics.median(walls)
            print(f"\n{model}: plan step, {len(walls)} asks, median {median:.1f} s")
            for title, tally in (("as said", verdicts), ("new files => change", if_new)):
                print(f"  {title}:")
                for wording, seen in tally.items():
                    kinds = sum(v != "no plan" and not v.startswith("kind") for v in seen)
                    print(f"  {wording:9} right kind {kinds}/{len(seen)}   all right "
                          f"{seen.count('ok')}/{len(seen)}   kept file planned "
                          f"{seen.count('keep!')}   wrong removed {seen.count('removed')}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
