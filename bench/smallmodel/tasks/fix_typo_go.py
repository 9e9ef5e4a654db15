"""Fix a misspelt word in a Go program's message, changing nothing else."""

from pathlib import Path

from bench.smallmodel.checks import read, unchanged, write

STEPS = 2
GOOD = (
    "package main\n\nimport \"fmt\"\n\n"
    "// main saves the pending records and reports how many it saved.\n"
    "func main() {\n\tsaved := 3\n\tfmt.Printf(\"Successfully saved %d records\\n\", saved)\n}\n"
)
FILES = {
    "main.go": GOOD.replace("Successfully", "Sucessfully"),
    "go.mod": "module example.com/recordkeeper\n\ngo 1.22\n",
}
PROMPTS = {
    "direct": "There is a typo in the message main.go prints. Fix it.",
    "terse": "main.go output has a typo, fix",
    "indirect": (
        "go.mod is fine. When main.go has saved the records it prints 'Sucessfully saved 3 "
        "records', and that first word is misspelt."
    ),
    "other": "Hay una falta de ortografía en el mensaje que imprime main.go. Corrígela.",
}
KEEP = {"indirect": ("go.mod",)}


def check(root: Path, answer: str) -> str | None:
    if (why := unchanged(root, FILES, skip=("main.go",))) is not None:
        return why
    text = read(root, "main.go")
    if text is None:
        return "main.go missing"
    return None if text.strip() == GOOD.strip() else "main.go is not the corrected text"


def solve(root: Path) -> str:
    write(root, "main.go", GOOD)
    return "Fixed 'Sucessfully'."
