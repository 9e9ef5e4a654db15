"""Find the TypeScript file that defines a class re-exported through two index files."""

from pathlib import Path

from bench.smallmodel.checks import unchanged
from bench.smallmodel.forms import AnswerLine, OnlyValue

STEPS = 2
PROMPTS = {
    "direct": "Which file defines the RoutePlanner class?",
    "terse": "where is RoutePlanner? path only",
    "indirect": (
        "RoutePlanner is re-exported from src/index.ts and src/logistics/index.ts, but neither "
        "is where the class is written. Which file is?"
    ),
    "other": (
        "In welcher Datei wird die Klasse RoutePlanner definiert? Antworte mit einer Zeile der "
        "Form: ANSWER: <Pfad>"
    ),
}
FORMS = {"terse": OnlyValue(), "other": AnswerLine()}
VALUE = "src/logistics/planning/route-planner.ts"
FILES = {
    "package.json": '{\n  "name": "dispatcher",\n  "version": "1.0.0"\n}\n',
    "src/index.ts": 'export { RoutePlanner } from "./logistics";\n',
    "src/logistics/index.ts": 'export { RoutePlanner } from "./planning/route-planner";\n',
    "src/logistics/planning/route-planner.ts": (
        "export class RoutePlanner {\n  constructor(private readonly depots: string[]) {}\n\n"
        "  plan(): string[] {\n    return [...this.depots].sort();\n  }\n}\n"
    ),
    "src/api/dispatch.ts": (
        'import { RoutePlanner } from "../logistics";\n\n'
        "export function dispatch(depots: string[]): string[] {\n"
        "  return new RoutePlanner(depots).plan();\n}\n"
    ),
    "docs/design.md": "The RoutePlanner orders the depots before dispatch.\n",
}


def check(root: Path, answer: str) -> str | None:
    if (why := unchanged(root, FILES)) is not None:
        return why
    if "planning/route-planner.ts" not in answer.replace("\\", "/"):
        return "answer does not name planning/route-planner.ts"
    return None


def solve(root: Path) -> str:
    return "It is defined in src/logistics/planning/route-planner.ts."
