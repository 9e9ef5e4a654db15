"""A small model's edit that would fail as written, read the one way it can only mean.

The 1.5B and 0.5B coders say what they mean in edits a larger model would phrase exactly,
and then repeat the failing call until the run's guard stops them. Seen in their transcripts:

- a rename given as the bare name (`calc_ttl` -> `compute_ttl`) where the name is used in
  three places: they mean every use of it, as a whole word;
- `timeout = 30` -> `timeout = 45` where both the `[database]` and the `[cache]` section
  have that line and the request says "the database timeout": the request names the place;
- the text of `messages.py` edited in `app.py`, the file that uses it: it is in one other
  file only, so that is the file meant;
- `import json; json.dumps(...)`, or an `import json` added at the end: the import belongs
  at the top of the module, with the others;
- the whole file again as new_string with an empty old_string ("add at the end"): that
  would put every line in twice.

Each reading is taken only when it points at one place; otherwise the edit fails with its
usual error. Larger models never get these readings: what they write is what happens.
"""

from __future__ import annotations

import re  # compiled on first use (re caches them), not at start-up
from dataclasses import dataclass

__all__ = ["Reading", "definition_inserted", "definition_renamed", "import_kept",
           "imports_moved_up", "is_name", "other_uses", "placed_by_request", "renamed",
           "repeats_file"]

_NAME = r"[A-Za-z_][A-Za-z0-9_]*"
_IMPORT = r"(?:import\s+[\w.]+(?:\s+as\s+\w+)?(?:\s*,\s*[\w.]+(?:\s+as\s+\w+)?)*" \
          r"|from\s+[\w.]+\s+import\s+(?:\([^)]*\)|[\w, ]+))"


@dataclass(frozen=True, slots=True)
class Reading:
    """The file's new text and a note saying how the edit was read."""

    updated: str
    note: str
    replaced: int = 1


def is_name(text: str) -> bool:
    """Whether `text` is a bare identifier (`area_of`, `RateLimiter`)."""
    return re.fullmatch(_NAME, text) is not None


def _word(name: str) -> str:
    return rf"(?<![A-Za-z0-9_]){re.escape(name)}(?![A-Za-z0-9_])"


def renamed(content: str, old: str, new: str) -> Reading | None:
    """Every use of the name `old` as a whole word renamed to `new`, when both are bare
    names and `old` is used as a word at all."""
    if not (is_name(old) and is_name(new)):
        return None
    updated, count = re.subn(_word(old), new, content)
    if count == 0:
        return None
    if count == 1:
        return Reading(updated, "")
    return Reading(updated, f"[{old} and {new} are names, so every use of {old} in the file "
                            f"was renamed ({count} places).]", replaced=count)


_DEFINES = r"^(\s*(?:async\s+def|def|class|function)\s+)([A-Za-z_]\w*)(.*)$"


def definition_renamed(content: str, old: str, new: str) -> tuple[str, str, Reading] | None:
    """(old name, new name, the file with every use renamed) for an edit whose old_string
    and new_string are the same definition line but for its name (`def calc_ttl(hits):` ->
    `def compute_ttl(hits):`): the 0.5B renames the definition and leaves its uses."""
    before, after = re.match(_DEFINES, old.strip("\n")), re.match(_DEFINES, new.strip("\n"))
    if before is None or after is None or "\n" in old.strip("\n") or "\n" in new.strip("\n"):
        return None
    if (before.group(1), before.group(3)) != (after.group(1), after.group(3)):
        return None
    name, to = before.group(2), after.group(2)
    if name == to or content.count(old) != 1:
        return None
    reading = renamed(content, name, to)
    if reading is None or reading.replaced < 2:
        return None
    return name, to, Reading(reading.updated, f"[The definition of {name} was renamed to {to}, "
                                              f"so every use of {name} in the file was renamed "
                                              f"too ({reading.replaced} places).]",
                             reading.replaced)


def definition_inserted(content: str, old: str, new: str) -> Reading | None:
    """A new definition given in place of the first line of another (old_string
    `def mean(values):`, new_string the whole `def clamp(...)`): the 1.5B's way to say
    "put it here". Replaced as written, `mean` would lose its first line; the new
    definition goes before it instead."""
    line = old.strip("\n")
    before = re.match(_DEFINES, line)
    first = new.lstrip("\n").split("\n", 1)[0]
    after = re.match(_DEFINES, first)
    if before is None or after is None or "\n" in line or content.count(old) != 1:
        return None
    if before.group(2) == after.group(2) or line in new:
        return None
    indent = before.group(1)[: len(before.group(1)) - len(before.group(1).lstrip())]
    gap = "\n\n" if indent else "\n\n\n"
    updated = content.replace(old, new.strip("\n") + gap + old, 1)
    return Reading(updated, f"[old_string is the first line of {before.group(2)}, which would "
                            f"have been lost; {after.group(2)} was put before it instead.]")


def other_uses(files: dict[str, str], name: str) -> str:
    """A line naming the files of `files` (path -> text) that still use `name`, or ''."""
    if not is_name(name):
        return ""
    counts = {path: len(re.findall(_word(name), text)) for path, text in files.items()}
    left = [f"{path} ({count})" for path, count in sorted(counts.items()) if count]
    if not left:
        return ""
    return f"\n{name} is still used in {', '.join(left[:5])}: rename it there too if it is the " \
           "same name."


def _header_words(header: str) -> set[str]:
    """The words of a section header: `[database]`, `def load_config`, `server:`."""
    bare = re.sub(r"^(?:async\s+)?(?:def|class)\s+", "", header.strip()).strip("[]: ")
    words = {bare.lower()} | {w.lower() for w in re.split(r"[^A-Za-z0-9]+|_", bare) if w}
    return {w for w in words if len(w) >= 3}


# a clause that says what to leave as it is: its words name no place to change
_HANDS_OFF = (r"\b(?:leave|leaving|keep|keeping|alone|untouched|unchanged|as it is|don't|do not|"
              r"dont|never|not|without)\b")


def _asked_words(request: str) -> set[str]:
    """The words of the request's clauses that ask for something ("set the database
    timeout"), without those that say what to leave alone ("leave the cache settings alone")."""
    words: set[str] = set()
    for clause in re.split(r"[.;:!?\n]|,|\bbut\b", request, flags=re.I):
        if re.search(_HANDS_OFF, clause, re.I):
            continue
        words |= {w.lower() for w in re.findall(r"[A-Za-z0-9]+", clause)}
        words |= {w.lower() for w in re.findall(_NAME, clause)}
    return words


def placed_by_request(content: str, old: str, new: str, request: str) -> Reading | None:
    """`old`, found several times, replaced in the one place whose section the request
    names ("the database timeout": the `timeout` under `[database]`)."""
    from totem.tools.edit_match import section_of

    asked = _asked_words(request)
    starts = [m.start() for m in re.finditer(re.escape(old), content)]
    named = []
    for start in starts:
        section = section_of(content, content.count("\n", 0, start) + 1)
        if section and _header_words(section) & asked:
            named.append((start, section))
    if len(named) != 1 or len(starts) < 2:
        return None
    start, section = named[0]
    updated = content[:start] + new + content[start + len(old):]
    line = content.count("\n", 0, start) + 1
    return Reading(updated, f"[old_string is in {len(starts)} places; the request names "
                            f"{section}, so the one at line {line} was changed.]")


def _import_lines(text: str) -> tuple[list[str], str] | None:
    """The import statements at the start or end of `text` (lines or `;`-separated), and
    the rest; None when there are none."""
    statements = [s.strip() for s in re.split(r"[;\n]", text)]
    found = [s for s in statements if re.fullmatch(_IMPORT, s)]
    if not found:
        return None
    rest = text
    for statement in found:
        rest = re.sub(r"^[ \t]*" + re.escape(statement) + r"[ \t]*(?:;[ \t]*|\n|$)", "", rest,
                      count=1, flags=re.M)
    return found, rest


def _import_offset(content: str) -> int:
    """Where a new import goes: after the module's docstring, comments and imports at its top."""
    lines = content.split("\n")
    at = 0
    index = 0
    in_doc: str | None = None
    while index < len(lines):
        stripped = lines[index].strip()
        if in_doc:
            in_doc = None if in_doc in stripped else in_doc
            index += 1
            at = index
            continue
        quote = stripped[:3]
        if index == at and quote in ('"""', "'''"):
            in_doc = None if stripped.count(quote) >= 2 and len(stripped) > 3 else quote
            index += 1
            at = index
        elif re.match(r"(?:import|from)\s", stripped) or stripped.startswith("#"):
            index += 1
            at = index
        elif not stripped and index + 1 < len(lines) and re.match(
                r"(?:import|from)\s|#", lines[index + 1].strip()):
            index += 1
        else:
            break
    return sum(len(line) + 1 for line in lines[:at])


def imports_moved_up(content: str, old: str, new: str, *, python: bool) -> Reading | None:
    """An edit of a Python file whose new_string is old_string plus import statements, or
    only imports (for an empty old_string, or in place of a line that is no import): the
    imports put at the top with the others (in the middle of a line they are invalid; at the
    end of a script they come too late), the rest of the file unchanged."""
    if not python:
        return None
    parts = _import_lines(new)
    if parts is None:
        return None
    rest = parts[1].strip()
    # new_string is old_string plus imports; or only imports in place of a line that uses
    # them (the 1.5B's "json.dumps(...)" -> "import json"): the line stays
    if rest != old.strip() and not (not rest and re.search(_NAME, old) and
                                    _import_lines(old) is None):
        return None
    missing = [s for s in parts[0] if not re.search(rf"^{re.escape(s)}\s*$", content, re.M)]
    if not missing:
        return None
    offset = _import_offset(content)
    block = "\n".join(missing) + "\n"
    if offset == 0 and content and not content.startswith(("import", "from")):
        block += "\n\n" if re.match(r"(?:async\s+def|def|class|@)", content) else "\n"
    updated = content[:offset] + block + content[offset:]
    return Reading(updated, f"[{'; '.join(missing)} was put at the top of the file with the "
                            "imports; the rest of the file is unchanged.]")


def _bound_names(statements: str) -> set[str] | None:
    """The names import statements bind (`import a.b as c`: c), or None if not imports."""
    import ast

    try:
        tree = ast.parse(statements.strip())
    except SyntaxError:
        return None
    names: set[str] = set()
    for node in tree.body:
        if not isinstance(node, ast.Import | ast.ImportFrom):
            return None
        names |= {(a.asname or a.name).split(".")[0] for a in node.names}
    return names or None


def import_kept(content: str, old: str, new: str, *, python: bool) -> Reading | None:
    """An import put in place of another import the file still uses (the 1.5B's
    "import pytest" -> "from stack import Stack" in a test that uses both): the new import
    goes below the old one, which stays."""
    if not python or content.count(old) != 1:
        return None
    old_names, new_names = _bound_names(old), _bound_names(new)
    if old_names is None or new_names is None or old_names & new_names:
        return None
    rest = content.replace(old, "", 1)
    if not any(re.search(_word(name), rest) for name in old_names):
        return None
    updated = content.replace(old, old.rstrip("\n") + "\n" + new.strip("\n"), 1)
    return Reading(updated, f"[{old.strip()} is still used, so it was kept and "
                            f"{new.strip()} added below it.]")


MIN_REPEATED_LINES = 3
MAX_COMPARED_LINES = 400
_DEFINITION = r"(?:async\s+def|def|class|function)\s+\w+"


def repeats_file(content: str, addition: str) -> bool:
    """Whether `addition` (to be added at the end) is the file sent again: most of its lines
    are lines the file has; or most are close to the file's lines and it defines again a
    function the file already defines (the file with a rename, say). A new function shaped
    like its neighbours defines a new name, and is added."""
    lines = [line.strip() for line in addition.split("\n") if len(line.strip()) >= 6]
    have = [line.strip() for line in content.split("\n") if line.strip()]
    if len(lines) < MIN_REPEATED_LINES or len(have) > MAX_COMPARED_LINES:
        return False
    exact = sum(line in have for line in lines)
    if exact * 5 >= len(lines) * 3:
        return True
    if not any(re.match(_DEFINITION, line) and line in have for line in lines):
        return False
    from difflib import get_close_matches

    close = sum(bool(get_close_matches(line, have, n=1, cutoff=0.75)) for line in lines)
    return close * 5 >= len(lines) * 3
