"""An edit's new errors from the real servers (basedpyright, typescript-language-server), in
the result of the write, edit and patch calls that made them; a fix says they are gone."""

from __future__ import annotations

import asyncio
from pathlib import Path

from tests.support.language_servers import (
    Edits,
    python_server,
    typescript7_server,
    typescript_server,
)
from totem.tools.edit import Edit
from totem.tools.patch import Patch
from totem.tools.write import Write

GOOD_PY = "def add(a: int, b: int) -> int:\n    return a + b\n\n\ntotal: int = add(1, 2)\n"
GOOD_TS = "export function add(a: number, b: number): number {\n  return a + b;\n}\n"


def _python_project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    (root / "pyproject.toml").write_text("[project]\nname = 'demo'\nversion = '0'\n")
    (root / "app.py").write_text(GOOD_PY)
    return root


def test_a_python_type_error_comes_back_in_the_edit_and_its_fix_clears_it(
        tmp_path: Path) -> None:
    root = _python_project(tmp_path)
    edits = Edits(root, python_server())

    async def session() -> tuple[str, str, str, str]:
        broken, ctx = await edits.call(Edit(), path="app.py", old_string="add(1, 2)",
                                       new_string='add(1, "two")')
        shown = ctx.meta.get("diagnostics", "")
        fixed, _ = await edits.call(Edit(), path="app.py", old_string='add(1, "two")',
                                    new_string="add(1, 2)")
        again, _ = await edits.call(Edit(), path="app.py", old_string="add(1, 2)",
                                    new_string="add(2, 1)")
        await edits.servers.aclose()
        return broken.output, shown, fixed.output, again.output

    broken, shown, fixed, again = asyncio.run(session())
    assert "[Diagnostics] app.py: 1 new error, from basedpyright-langserver:" in broken
    assert "line 5: error: Argument of type" in broken and "[reportArgumentType]" in broken
    assert shown.startswith("app.py: 1 new error") and "reportArgumentType" in shown
    assert "[Diagnostics] app.py: no errors now, from basedpyright-langserver." in fixed
    assert "[Diagnostics]" not in again  # clean stays clean: nothing said
    assert edits.said() == []


def test_many_new_errors_come_worst_first_in_a_few_lines_and_old_ones_are_not_repeated(
        tmp_path: Path) -> None:
    root = _python_project(tmp_path)
    (root / "app.py").write_text(GOOD_PY + 'old: int = "already broken"\n')
    lines = [f'v{i}: int = "s{i}"' for i in range(7)]
    lines.insert(3, "import os  # an unused import: a warning, not an error")
    edits = Edits(root, python_server())

    async def session() -> str:
        result, _ = await edits.call(Write(), path="app.py", content=(
            (root / "app.py").read_text() + "\n".join(lines) + "\n"))
        await edits.servers.aclose()
        return result.output

    note = asyncio.run(session()).split("[Diagnostics] ", 1)[1].splitlines()
    assert note[0] == ("app.py: 7 new errors (1 older one not shown), "
                       "from basedpyright-langserver:")
    assert [line.split(":")[0].strip() for line in note[1:6]] == [
        "line 7", "line 8", "line 9", "line 11", "line 12"]
    assert all(": error: " in line for line in note[1:6])
    assert note[6:] == ["  ... and 2 more"]


def test_two_errors_fixed_one_edit_at_a_time_each_fix_says_what_is_left(tmp_path: Path) -> None:
    root = _python_project(tmp_path)
    (root / "app.py").write_text(GOOD_PY + "other: int = add(3, 4)\n")
    edits = Edits(root, python_server())

    async def session() -> tuple[str, str, str]:
        broken, _ = await edits.call(Write(), path="app.py", content=(
            GOOD_PY.replace("add(1, 2)", 'add(1, "two")') + 'other: int = add("three", 4)\n'))
        first, _ = await edits.call(Edit(), path="app.py", old_string='add(1, "two")',
                                    new_string="add(1, 2)")
        second, _ = await edits.call(Edit(), path="app.py", old_string='add("three", 4)',
                                     new_string="add(3, 4)")
        await edits.servers.aclose()
        return broken.output, first.output, second.output

    broken, first, second = asyncio.run(session())
    assert "[Diagnostics] app.py: 2 new errors, from basedpyright-langserver:" in broken
    left = first.split("[Diagnostics] ", 1)[1].splitlines()
    assert left[0] == "app.py: 1 error fixed, 1 left, from basedpyright-langserver:"
    assert left[1].startswith("  line 6: error: Argument of type") and len(left) == 2
    assert "[Diagnostics] app.py: no errors now, from basedpyright-langserver." in second


def test_a_typescript_type_error_comes_back_from_a_patch_and_a_write_fixes_it(
        tmp_path: Path) -> None:
    root = tmp_path / "project"
    root.mkdir()
    (root / "tsconfig.json").write_text('{"compilerOptions": {"strict": true}}\n')
    (root / "math.ts").write_text(GOOD_TS)
    edits = Edits(root, typescript_server())
    patch = ("*** Begin Patch\n*** Update File: math.ts\n@@\n-  return a + b;\n"
             "+  return `${a}${b}`;\n*** End Patch\n")

    async def session() -> tuple[str, str, str]:
        broken, _ = await edits.call(Patch(), patch=patch)
        fixed, _ = await edits.call(Write(), path="math.ts", content=GOOD_TS)
        new, _ = await edits.call(Write(), path="use.ts",
                                  content='import { add } from "./math";\n'
                                          'const n: string = add(1, 2);\n')
        await edits.servers.aclose()
        return broken.output, fixed.output, new.output

    broken, fixed, new = asyncio.run(session())
    assert "math.ts: 1 new error, from typescript-language-server:" in broken
    assert "line 2: error: Type 'string' is not assignable to type 'number'. [2322]" in broken
    assert "math.ts: no errors now, from typescript-language-server." in fixed
    assert "use.ts: 1 new error" in new and "line 2: error: Type 'number' is not" in new
    assert edits.said() == []


def test_typescript_7s_own_server_offers_only_pulled_diagnostics_and_they_come_back(
        tmp_path: Path) -> None:
    root = tmp_path / "project"
    root.mkdir()
    (root / "tsconfig.json").write_text('{"compilerOptions": {"strict": true}}\n')
    (root / "math.ts").write_text(GOOD_TS)
    edits = Edits(root, typescript7_server())

    async def session() -> tuple[str, str, str]:
        broken, _ = await edits.call(Edit(), path="math.ts", old_string="return a + b;",
                                     new_string="return `${a}${b}`;")
        fixed, _ = await edits.call(Write(), path="math.ts", content=GOOD_TS)
        again, _ = await edits.call(Write(), path="math.ts", content=GOOD_TS + "\n")
        await edits.servers.aclose()
        return broken.output, fixed.output, again.output

    broken, fixed, again = asyncio.run(session())
    assert "math.ts: 1 new error, from tsc:" in broken
    assert "line 2: error: Type 'string' is not assignable to type 'number'. [2322]" in broken
    assert "math.ts: no errors now, from tsc." in fixed
    assert "[Diagnostics]" not in again
    assert edits.said() == []
