"""Delete an old shell script next to the current one of a similar name."""

from pathlib import Path

from bench.smallmodel.checks import unchanged

STEPS = 1
OLD = "scripts/deploy_old.sh"
FILES = {
    "scripts/deploy.sh": "#!/bin/sh\nrsync -a build/ web:/srv/site/\n",
    OLD: "#!/bin/sh\nscp -r build/* web:/var/www/\n",
    "Makefile": "deploy:\n\t./scripts/deploy.sh\n",
    "README.md": "# Site\n\n`make deploy` publishes the site.\n",
}
PROMPTS = {
    "direct": f"Delete {OLD}; nothing uses it.",
    "terse": "could you delete deploy_old.sh?",
    "indirect": (
        f"Don't delete scripts/deploy.sh, the Makefile runs it. {OLD} is not needed anymore."
    ),
    "other": (
        f"{OLD} wird nicht mehr gebraucht. Lösche die Datei, aber lass scripts/deploy.sh stehen."
    ),
}
KEEP = {"indirect": ("scripts/deploy.sh", "Makefile"), "other": ("scripts/deploy.sh",)}


def check(root: Path, answer: str) -> str | None:
    if (root / OLD).exists():
        return f"{OLD} still there"
    return unchanged(root, FILES, skip=(OLD,))


def solve(root: Path) -> str:
    (root / OLD).unlink()
    return "Deleted."
