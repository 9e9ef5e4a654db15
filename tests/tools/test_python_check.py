"""The check after a Python file is written: syntax errors and names never defined."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from tests.support.tool_calls import Call
from totem.tools.base import ToolContext
from totem.tools.edit import Edit
from totem.tools.python_check import python_check, python_problems


def test_a_name_used_and_never_defined_is_named_with_its_line() -> None:
    source = ("def summary(rows):\n    return json.dumps({'count': len(rows)})\n\n"
              "class A:\n    x = 1\n\n    def f(self):\n        global G\n        G = 2\n"
              "        return [y for y in range(3)] + __file__ + A.x\n\n"
              "def g():\n    return G + zz\n")
    assert python_problems(source, filename="r.py") == [
        "line 2: name 'json' is not defined (a missing import or definition?)",
        "line 13: name 'zz' is not defined (a missing import or definition?)",
    ]


def test_syntax_errors_star_imports_and_clean_files() -> None:
    assert python_problems("def f(:\n    pass\n", filename="x.py") == [
        "line 1: SyntaxError: invalid syntax"]
    assert python_problems("from os.path import *\nprint(join('a'))\n", filename="x.py") == []
    assert python_problems("import json\nprint(json.dumps(1))\n", filename="x.py") == []


def test_the_hook_notes_problems_after_an_edit(
    project: Path, ctx: ToolContext, call: Call
) -> None:
    (project / "report.py").write_text("def summary(rows):\n    return json.dumps(rows)\n")
    checked = dataclasses.replace(ctx, after_write=[python_check])
    # the real 1.5B model's edit for "NameError: name 'json' is not defined. Fix it."
    result = call(Edit(), checked, path="report.py", old_string="return json.dumps(rows)",
                  new_string="return json.dumps(rows, ensure_ascii=False)")
    assert result.output.endswith("\n\n[Check of report.py: line 2: name 'json' is not defined "
                                  "(a missing import or definition?)]")
    fixed = call(Edit(), checked, path="report.py", old_string="def summary",
                 new_string="import json\n\n\ndef summary")
    assert "[Check of" not in fixed.output
    assert python_check(checked, project / "notes.txt") == ""
