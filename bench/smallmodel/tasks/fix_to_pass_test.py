"""Fix the code (not the test) so a given test passes."""

from pathlib import Path

from bench.smallmodel.checks import run_python, unchanged, write

STEPS = 3
FILES = {
    "slug.py": (
        "import re\n\n\ndef slugify(title):\n"
        '    """Lowercase words joined by dashes, other characters dropped."""\n'
        "    words = re.findall(r'[A-Za-z0-9]+', title)\n    return '-'.join(words)\n"
    ),
    "test_slug.py": (
        "from slug import slugify\n\n\ndef test_slugify():\n"
        "    assert slugify('Hello, World 2024!') == 'hello-world-2024'\n"
        "    assert slugify('  Many   Spaces ') == 'many-spaces'\n"
    ),
}
PROMPTS = {
    "direct": (
        "The test in test_slug.py fails. Fix the code so that it passes, without changing the test."
    ),
    "terse": "test_slug.py fails, fix slug.py not the test",
    "indirect": "Don't touch test_slug.py: the test is right and slugify is wrong. Make it pass.",
    "other": (
        "Le test de test_slug.py échoue. Corrige le code pour qu'il passe, sans modifier le "
        "test."
    ),
}
KEEP = {"indirect": ('test_slug.py',), "other": ('test_slug.py',)}


def check(root: Path, answer: str) -> str | None:
    if (why := unchanged(root, FILES, skip=("slug.py",))) is not None:
        return why
    done = run_python(root, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_slug.py")
    return None if done.returncode == 0 else "test still fails"


def solve(root: Path) -> str:
    write(root, "slug.py", FILES["slug.py"].replace("'-'.join(words)", "'-'.join(words).lower()"))
    return "Lowercased."
